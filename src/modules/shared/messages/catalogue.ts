import { IntlMessageFormat } from 'intl-messageformat'
import { de } from './de.js'
import { en, type MessageKey } from './en.js'
import { es } from './es.js'
import { fr } from './fr.js'
import { it } from './it.js'
import { nl } from './nl.js'
import { pt } from './pt.js'
import { ru } from './ru.js'

/**
 * The one catalogue of the texts a visitor sees that are not generated (#40): one table per language, in ICU
 * message format (`{name}` placeholders, plurals where a number is said), formatted by intl-messageformat.
 * Every key exists in every language with the same placeholders (messages.test.ts); a language without a
 * table gets English.
 */

export type { MessageKey }
export type Catalogue = Record<MessageKey, string>

export const CATALOGUES: Record<string, Catalogue> = { en, de, fr, es, it, pt, nl, ru }

export const CATALOGUE_LANGUAGES = Object.keys(CATALOGUES)

export const hasCatalogue = (lang: string) => Object.hasOwn(CATALOGUES, lang)

const compiled = new Map<string, IntlMessageFormat>()

/** The text of `key` in `lang` (English when the language has no table), with its placeholders filled in. */
export function message(lang: string, key: MessageKey, vars: Record<string, string | number> = {}): string {
  const l = hasCatalogue(lang) ? lang : 'en'
  const id = `${l}\0${key}`
  let f = compiled.get(id)
  if (!f) {
    f = new IntlMessageFormat(CATALOGUES[l]![key], l)
    compiled.set(id, f)
  }
  return String(f.format(vars))
}

/** Every key's text in one language, unformatted (the widget receives its labels so). */
export function catalogueOf(lang: string): Catalogue {
  return CATALOGUES[hasCatalogue(lang) ? lang : 'en']!
}
