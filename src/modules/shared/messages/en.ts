/** The visitor's fixed texts in English: the reference every other language has the keys and placeholders of. */
export const en = {
  'language.fallback': 'I can answer in {language} only, so I will reply in {language}.',
  'language.page_note': '(page in {language})',
}

export type MessageKey = keyof typeof en
