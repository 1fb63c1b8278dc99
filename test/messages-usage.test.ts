import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { renderReply } from '../src/modules/email-channel/email-channel.fns.js'
import { followUpText, operatorReplyMail } from '../src/modules/escalations/escalations.fns.js'
import { CATALOGUES, message } from '../src/modules/shared/messages/catalogue.js'

/** The modules that show a visitor fixed texts take them from the message catalogue (#40); lives here, not beside the catalogue, so the shared module imports none of them. */
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
