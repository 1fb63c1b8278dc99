import type { Catalogue } from './catalogue.js'

export const ru: Catalogue = {
  'language.fallback': 'Я могу отвечать только на языке: {language}. Поэтому отвечу на нём.',
  'language.page_note': '(страница на языке: {language})',
}
