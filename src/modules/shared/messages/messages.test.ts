import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { renderReply } from '../../email-channel/email-channel.fns.js'
import { followUpText, operatorReplyMail } from '../../escalations/escalations.fns.js'
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
describe('visitor texts come from the catalogue', () => {
  it('the hand-off follow-ups and the operator-reply mail read the catalogue in the session language', () => {
    const code = readFileSync('src/modules/escalations/escalations.fns.ts', 'utf8')
    expect(code).not.toMatch(/FOLLOW_UP|const REPLY/)
    expect(followUpText('ask_email', 'nl')).toBe(message('nl', 'handoff.ask_email'))
    expect(operatorReplyMail({ ticket_number: 'ESC-0007', reply: 'x', question: 'y', language: 'it' }).subject).toBe(
      message('it', 'email.reply_subject', { ticket: 'ESC-0007' }),
    )
  })

  it('the widget, the e-mail channel and the hand-off texts are keys of the catalogue', () => {
    const keys = Object.keys(CATALOGUES.en!)
    for (const prefix of [
      'widget.',
      'email.',
      'handoff.ask_email',
      'handoff.goodbye',
      'widget.confirm',
      'widget.language',
      'widget.team_back',
      'widget.reply_eta',
    ])
      expect(
        keys.some((k) => k.startsWith(prefix)),
        prefix,
      ).toBe(true)
    expect(renderReply({ text: 'Antwort', sources: [{ title: 'T', url: 'https://x.example/t' }], signature: null, lang: 'de' }).text).toContain(
      message('de', 'email.sources_heading'),
    )
  })

  const FILES = [
    'src/modules/chat/stages/messages.ts',
    'src/modules/chat/stages/action-texts.ts',
    'src/modules/chat/stages/01-language.ts',
    'src/modules/escalations/handoff.texts.ts',
    // the widget's own texts (labels, confirmation card, live conversation, availability and ETA lines)
    ...readdirSync('widget/src').map((f) => `widget/src/${f}`),
    'src/modules/widget/widget.i18n.ts',
    'src/modules/widget/widget.service.ts',
    // the e-mail channel's mails (sources heading, the bot's footer) and the operator-reply mail's visitor texts
    'src/modules/email-channel/email-channel.fns.ts',
    'src/modules/email-channel/email-channel.mails.ts',
  ]
  const SENTENCE = /(['"`])((?:(?!\1)[^\\\n]){0,400}?\b\p{L}+\s+\p{L}+\s+\p{L}+\s+\p{L}+[^'"`\n]*[.?!])\1/u
  for (const f of FILES)
    it(`${f} builds no sentence of its own`, () => {
      const code = readFileSync(f, 'utf8')
        .split('\n')
        .filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l))
        .join('\n')
      expect(code.match(SENTENCE)?.[0] ?? null).toBeNull()
      expect(code).not.toMatch(/^\s*(de|fr|es|ru):\s/m)
    })
})
