import type { Catalogue } from './catalogue.js'

export const pt: Catalogue = {
  'language.fallback': 'Só posso responder em {language}, por isso vou responder em {language}.',
  'language.page_note': '(página em {language})',
}
