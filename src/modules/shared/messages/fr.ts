import type { Catalogue } from './catalogue.js'

export const fr: Catalogue = {
  'language.fallback': "Je ne peux répondre qu'en {language} : je vous réponds donc en {language}.",
  'language.page_note': '(page en {language})',
}
