import type { Catalogue } from './catalogue.js'

export const it: Catalogue = {
  'language.fallback': 'Posso rispondere solo in {language}, quindi risponderò in {language}.',
  'language.page_note': '(pagina in {language})',
}
