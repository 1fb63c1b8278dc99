import { CATALOGUE_LANGUAGES, catalogueOf, hasCatalogue } from '../shared/messages/catalogue.js'
import { en } from '../shared/messages/en.js'
import { LINK_KEYS, linkLabels, UI_KEYS, uiLabels } from '../../../widget/src/labels.js'

/**
 * The widget's visible texts in the visitor's language: the `widget.*` keys of the one message catalogue
 * (shared/messages, #40). /widget/config sends the set for the session's (or the visitor's chosen, else the
 * browser's) language, so the browser bundle carries no translations of its own, only the English fallback
 * (widget/src/labels.ts, read from the same English table) in case config fails. `{hostname}`, `{ticket}`,
 * `{max}`, `{n}`, `{when}` and `{email}` are filled in by the widget.
 */
export { UI_KEYS }
export const LINK_SAFETY_KEYS = LINK_KEYS
export type LinkSafetyLabels = ReturnType<typeof linkLabels>
export type UiLabels = ReturnType<typeof uiLabels>

export const SUPPORTED_LOCALES = CATALOGUE_LANGUAGES

/** `de-AT`, `de_AT`, `DE` -> `de`; anything unknown, empty or malformed -> `en`. */
export function resolveLocale(locale: string | null | undefined): string {
  const primary = (locale ?? '').trim().toLowerCase().split(/[-_]/)[0] ?? ''
  return hasCatalogue(primary) ? primary : 'en'
}

export function labelsFor(locale: string | null | undefined): { locale: string; link: LinkSafetyLabels; ui: UiLabels } {
  const code = resolveLocale(locale)
  const table = code === 'en' ? en : catalogueOf(code)
  return { locale: code, link: linkLabels(table), ui: uiLabels(table) }
}
