import { describe, expect, it } from 'vitest'
import { bareAddress, loopReason, threadIds, type HeaderLine } from './email-channel.fns.js'
import { confirmationLink, isAutoReplySubject, messageIdOf, plainAddress, readHeaders, storable, visibleText } from './email-channel.inbound.fns.js'

const h = (raw: Record<string, string>): HeaderLine[] => Object.entries(raw).map(([k, v]) => ({ key: k.toLowerCase(), line: `${k}: ${v}` }))
/** CPU milliseconds of fn (user + system): the machine is shared, wall time would measure the neighbours. */
const cpuMs = (fn: () => unknown): number => {
  const t0 = process.cpuUsage()
  fn()
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / 1000
}

describe('plainAddress and bareAddress: one address, never a list (finding 5)', () => {
  it('takes one plain address', () => {
    expect(plainAddress('Jo@Example.test')).toBe('jo@example.test')
    expect(bareAddress('Acme Support <support@acme.test>')).toBe('support@acme.test')
    expect(bareAddress('"Doe, Jo" <jo@x.test>')).toBe('jo@x.test')
  })
  it.each([
    'v1@victims.test,v2@victims.test',
    '"a1@v,a2@v;a3@v"@evil.test',
    'a@b@c.test',
    'a b@c.test',
    'a@b.test;c@d.test',
    'a\\@b.test',
    'ab.test',
    `${'a'.repeat(250)}@b.test`,
    '@b.test',
    'a@',
  ])('refuses %s', (s) => {
    expect(plainAddress(s)).toBeNull()
    expect(bareAddress(`x <${s}>`)).toBeNull()
  })
  it('reads the last <...> of a display name', () => {
    expect(bareAddress('"x" <"a1@v,a2@v;a3@v"@evil.test>')).toBeNull()
    expect(bareAddress('<v1@victims.test,v2@victims.test>')).toBeNull()
  })
})

describe('message ids (finding 17)', () => {
  it('keeps only well-formed ids', () => {
    expect(messageIdOf(' <m5@x.test> ')).toBe('<m5@x.test>')
    expect(messageIdOf('<m5@x> Bcc: evil5@x.test>')).toBeNull()
    expect(messageIdOf('<m5 @x>')).toBeNull()
    expect(messageIdOf('m5@x')).toBeNull()
    expect(threadIds('<m5@x> Bcc: evil5@x.test>', ['<a@b>', 'junk', '<c<d@e>'])).toEqual(['<m5@x>', '<a@b>'])
  })
})

describe('storable (finding 9)', () => {
  it('drops NUL and replaces lone surrogates', () => {
    expect(storable('a\u0000b\ud800c')).toBe('ab\ufffdc')
    expect(storable('ok 😀')).toBe('ok 😀')
  })
})

describe('visibleText: a linear reply cutter (findings 1 and 16)', () => {
  it('cuts a quote header with a date or an address, keeps a reply that only sounds like one', () => {
    expect(visibleText('Thanks!\n\nOn Mon, 23 Nov 2026 at 10:05, Acme <s@acme.test> wrote:\n> old')).toBe('Thanks!')
    expect(visibleText('Thanks!\n\nOn Mon, 23 Nov 2026 at 10:05, Acme Support\n<s@acme.test> wrote:\n> old')).toBe('Thanks!')
    expect(visibleText('Danke!\n\nAm 23.11.2026 um 10:05 schrieb Acme <s@acme.test>:\n> alt')).toBe('Danke!')
    const remote = 'On your remote host you can run:\n\n  systemctl restart app\n\nIt still fails. Why?'
    expect(visibleText(remote)).toBe(remote)
    expect(visibleText('On Monday, Jo wrote:\nthe letter')).toBe('On Monday, Jo wrote:\nthe letter')
  })
  it('cuts Outlook blocks, original-message rules, signatures and a quoted tail; keeps a forward', () => {
    expect(visibleText('Hi\n\n________________________________\nFrom: Acme <a@acme.test>\nSent: Friday\nSubject: x\n\nold')).toBe('Hi')
    expect(visibleText('Hi\n-----Original Message-----\nold')).toBe('Hi')
    expect(visibleText('Hi\n-- \nJo, Acme Inc.')).toBe('Hi')
    expect(visibleText('Hi\n\nSent from my iPhone\n\n> On 22 Nov 2026 Acme wrote:\n> old')).toBe('Hi')
    expect(visibleText('> you said\nI disagree\n> and this\nok')).toBe('> you said\nI disagree\n> and this\nok')
    const fwd = 'See below.\n\n---------- Forwarded message ---------\nFrom: Pat <p@x.test>\nSent: Sunday\n\nHow long do refunds take?'
    expect(visibleText(fwd)).toBe(fwd)
  })
  it('runs in milliseconds on the issue hostile bodies', () => {
    // email-reply-parser took 12.9 s on the first alone (cubic on the line), 3.2 s on 10,000 blank lines; here each
    // reads at most 20 KB once. The bound is loose for a cold JIT on a shared machine, far under the old figures.
    const bodies = [' on at'.repeat(2000), ' on at'.repeat(2_000_000), '\n'.repeat(10_000), '\n\n \n'.repeat(1_000_000), `On ${'1 '.repeat(100_000)}`]
    for (const body of bodies) expect(cpuMs(() => visibleText(body))).toBeLessThan(250)
    expect(visibleText(`${'\n'.repeat(10_000)}Real question?`)).toBe('Real question?')
  })
})

describe('loop guard additions (finding 15)', () => {
  const own = ['bot-1@inbound.test']
  const o = { inboundDomain: 'inbound.test' }
  it.each([
    ['Out of Office: Refund', {}, 'auto_reply_subject'],
    ['Automatic reply: Refund', {}, 'auto_reply_subject'],
    ['Abwesenheitsnotiz: Rückgabe', {}, 'auto_reply_subject'],
    ['Réponse automatique : Remboursement', {}, 'auto_reply_subject'],
    ['Refund', { 'List-Unsubscribe': '<mailto:u@x.test>' }, 'list_unsubscribe'],
    ['Refund', { 'X-Auto-Response-Suppress': 'All' }, 'auto_response_suppress'],
    ['Refund', { 'Feedback-ID': '1:2:3:esp' }, 'feedback_id'],
    ['Refund', { 'Content-Type': 'multipart/report; report-type=delivery-status; boundary=x' }, 'delivery_report'],
  ] as const)('%s %o is %s', (subject, headers, reason) => {
    expect(loopReason(h(headers), 'jo@x.test', own, { ...o, subject })).toBe(reason)
  })
  it('ignores no_reply@, notifications@, forwarding confirmations and other bots', () => {
    expect(loopReason([], 'no_reply@x.test', own, o)).toBe('daemon_sender')
    expect(loopReason([], 'notifications@github.test', own, o)).toBe('daemon_sender')
    expect(loopReason([], 'forwarding-noreply@google.com', own, o)).toBe('forwarding_confirmation')
    expect(loopReason([], 'other-bot-1234abcd@inbound.test', own, o)).toBe('bot_address')
    expect(loopReason(h({ 'X-Auto-Response-Suppress': 'OOF' }), 'jo@x.test', own, { ...o, subject: 'Re: out of office hours?' })).toBeNull()
  })
  it('knows out-of-office subjects only where they lead', () => {
    expect(isAutoReplySubject('Re: out of office')).toBe(false)
    expect(isAutoReplySubject('Automatische Antwort: x')).toBe(true)
  })
  it('finds the forwarding confirmation link', () => {
    const text = 'To allow x@y to forward, click:\nhttps://mail-settings.google.com/mail/vf-%5BABC%5D-abc\n\nhttps://evil.test/x'
    expect(confirmationLink(text)).toBe('https://mail-settings.google.com/mail/vf-%5BABC%5D-abc')
    expect(confirmationLink('https://google.com.evil.test/a')).toBeNull()
  })
})

describe('readHeaders', () => {
  it('reads the header block only, folded lines joined', () => {
    const raw = Buffer.from('From: a@b.test\r\nSubject: one\r\n two\r\nAuto-Submitted: auto-replied\r\n\r\nX-Not: a header\r\n')
    const lines = readHeaders(raw)
    expect(lines.map((l) => l.key)).toEqual(['from', 'subject', 'auto-submitted'])
    expect(lines[1]!.line).toBe('Subject: one\r\n two')
  })
})
