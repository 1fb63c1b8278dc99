import { en } from '../../src/modules/shared/messages/en.js'

/**
 * The widget's texts are the `widget.*` keys of the service's message catalogue (src/modules/shared/messages, #40):
 * /widget/config sends them in the visitor's language. Until it answers, the widget shows the English table's,
 * read from the same file, so no visitor text is written here.
 */
export const LINK_KEYS = ['title', 'body', 'continue_label', 'cancel_label'] as const
const LINK_SOURCE = { title: 'link_title', body: 'link_body', continue_label: 'link_continue', cancel_label: 'link_cancel' } as const

type WidgetKey = Extract<keyof typeof en, `widget.${string}`>
type UiKey = Exclude<WidgetKey extends `widget.${infer K}` ? K : never, (typeof LINK_SOURCE)[keyof typeof LINK_SOURCE]>

/** Every `widget.*` key but the link dialog's, in the catalogue's order. */
export const UI_KEYS = Object.keys(en)
  .filter((k) => k.startsWith('widget.') && !k.startsWith('widget.link_'))
  .map((k) => k.slice('widget.'.length)) as UiKey[]

type Table = Record<WidgetKey, string>

export const uiLabels = (table: Table): Record<UiKey, string> =>
  Object.fromEntries(UI_KEYS.map((k) => [k, table[`widget.${k}` as WidgetKey]])) as Record<UiKey, string>
export const linkLabels = (table: Table): Record<(typeof LINK_KEYS)[number], string> =>
  Object.fromEntries(LINK_KEYS.map((k) => [k, table[`widget.${LINK_SOURCE[k]}`]])) as Record<(typeof LINK_KEYS)[number], string>

export const FALLBACK_LABELS = { link: linkLabels(en), ui: uiLabels(en) }

export type UiLabels = typeof FALLBACK_LABELS.ui
export type LinkLabels = typeof FALLBACK_LABELS.link

export const fill = (template: string, values: Record<string, string | number>): string =>
  template.replace(/\{(\w+)\}/g, (m, k: string) => (k in values ? String(values[k]) : m))
