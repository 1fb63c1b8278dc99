import type { Catalogue } from './catalogue.js'

export const es: Catalogue = {
  'language.fallback': 'Solo puedo responder en {language}, así que le responderé en {language}.',
  'language.page_note': '(página en {language})',
}
