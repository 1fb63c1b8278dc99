/**
 * The confirmation card's own texts in the widget's languages (the service sends the rest of the widget's
 * texts, ui.cancel among them, in the visitor's language). `cancel` is that language's ui.cancel: the card
 * recognises the language by it when its caller gives no locale. Kept equal to the service's sets by
 * test/confirm-card.test.ts.
 */
export interface ConfirmTexts {
  confirm: string
  cancelled: string
}

const TEXTS: Record<string, ConfirmTexts & { cancel: string }> = {
  en: { cancel: 'Cancel', confirm: 'Confirm', cancelled: 'Cancelled.' },
  de: { cancel: 'Abbrechen', confirm: 'Bestätigen', cancelled: 'Abgebrochen.' },
  fr: { cancel: 'Annuler', confirm: 'Confirmer', cancelled: 'Annulé.' },
  es: { cancel: 'Cancelar', confirm: 'Confirmar', cancelled: 'Cancelado.' },
  ru: { cancel: 'Отмена', confirm: 'Подтвердить', cancelled: 'Отменено.' },
}

export const CONFIRM_LOCALES = Object.keys(TEXTS)

/** The texts for `locale` (`de-AT` -> `de`), else for the language whose cancel label is `cancel`, else English. */
export function confirmTexts(opts: { locale?: string | null; cancel?: string }): ConfirmTexts {
  const primary = (opts.locale ?? '').trim().toLowerCase().split(/[-_]/)[0] ?? ''
  const found = TEXTS[primary] ?? Object.values(TEXTS).find((t) => t.cancel === opts.cancel) ?? TEXTS.en!
  return { confirm: found.confirm, cancelled: found.cancelled }
}

/** English defaults a caller passed are replaced by the visitor's language; a caller's own wording is kept. */
export function localiseConfirmLabels<L extends { confirm: string; cancel: string; cancelled: string }>(labels: L, locale?: string | null): L {
  const t = confirmTexts({ locale, cancel: labels.cancel })
  const en = TEXTS.en!
  return {
    ...labels,
    confirm: labels.confirm === en.confirm ? t.confirm : labels.confirm,
    cancelled: labels.cancelled === en.cancelled ? t.cancelled : labels.cancelled,
  }
}
