import type { Catalogue } from './catalogue.js'

export const nl: Catalogue = {
  'language.fallback': 'Ik kan alleen in het {language} antwoorden, dus ik antwoord in het {language}.',
  'language.page_note': '(pagina in het {language})',
}
