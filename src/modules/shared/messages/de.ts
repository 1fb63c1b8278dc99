import type { Catalogue } from './catalogue.js'

export const de: Catalogue = {
  'language.fallback': 'Ich kann nur auf {language} antworten und antworte daher auf {language}.',
  'language.page_note': '(Seite auf {language})',
}
