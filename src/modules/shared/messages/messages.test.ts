import { describe, expect, it } from 'vitest'
import { CATALOGUE_LANGUAGES, CATALOGUES, message } from './catalogue.js'

const placeholders = (text: string) => [...new Set([...text.matchAll(/\{\s*(\w+)/g)].map((m) => m[1]))].sort()

describe('the message catalogue', () => {
  it('has the eight languages', () => {
    expect(CATALOGUE_LANGUAGES.sort()).toEqual(['de', 'en', 'es', 'fr', 'it', 'nl', 'pt', 'ru'])
  })

  it('has every key in every language, with the same placeholders, and each compiles and formats', () => {
    const keys = Object.keys(CATALOGUES.en!).sort()
    for (const lang of CATALOGUE_LANGUAGES) {
      const table = CATALOGUES[lang]!
      expect(Object.keys(table).sort(), lang).toEqual(keys)
      for (const key of keys) {
        const text = table[key as keyof typeof table]
        expect(text.trim().length, `${lang} ${key}`).toBeGreaterThan(0)
        expect(placeholders(text), `${lang} ${key}`).toEqual(placeholders(CATALOGUES.en![key as keyof typeof table]))
        const vars = Object.fromEntries(placeholders(text).map((p) => [p, `<${p}>`]))
        const out = message(lang, key as keyof typeof table, vars)
        for (const p of placeholders(text)) expect(out, `${lang} ${key}`).toContain(`<${p}>`)
        expect(out).not.toMatch(/[{}]/)
      }
    }
  })

  it('falls back to English for a language without a table', () => {
    expect(message('ja', 'chat.greeting')).toBe(message('en', 'chat.greeting'))
    expect(message('de', 'handoff.manual', { ticket: 'ESC-0001' })).toContain('ESC-0001')
  })
})

/**
 * No visitor-facing sentence is built outside the catalogue: the files that produce the bot's own texts hold no
 * quoted sentence (a string literal of four words or more ending in . ? or !), and no per-language table ('de:').
 */
