import { request } from 'node:http'
import { connect, type Socket } from 'node:net'
import nodemailer from 'nodemailer'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { MAIL_PARSE } from '../src/modules/email-channel/email-channel.parse.js'
import type { startInboundSmtp } from '../src/modules/email-channel/email-channel.smtp.js'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { inboundSmtp, newMessageId, rawMail } from './helpers/email.js'
import { createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import { until } from './helpers/wait.js'

/*
 * Issue 50: one mail must never stall or crash the service. Each hostile shape of the issue is sent while /health
 * is polled, and the slowest /health answer is held to healthBound(): ten times the slowest of forty /health answers
 * this same process gave a moment before, with no mail at all, and never less than 500 ms. The issue's 200 ms is a
 * figure for a quiet machine; this one's two cores are shared with other suites (load average 15 to 34 while this
 * was written), where an idle /health alone took up to 75 ms and a fixed bound either fails on load or means nothing.
 * Read against its own baseline the bound still catches a stall: on main the 12 KB ' on at' body held the event loop
 * 12.7 s (over 150 times such a baseline), and sealing a 10 MB mail on the event loop took 1.5-2.7 s under load.
 */
let bound: number | null = null
async function healthBound(): Promise<number> {
  if (bound !== null) return bound
  let slowest = 0
  for (let i = 0; i < 40; i++) {
    const t0 = performance.now()
    await (await fetch(`${t.url}/health`)).arrayBuffer()
    slowest = Math.max(slowest, performance.now() - t0)
    await new Promise((r) => setTimeout(r, 25))
  }
  bound = Math.max(500, 10 * slowest)
  return bound
}
const PER_MINUTE = 40

vi.setConfig({ hookTimeout: 600_000, testTimeout: 300_000 })

let fake: FakeLlm
let t: TestApp

appWithFakeLlm({ INBOUND_EMAIL_DOMAIN: 'inbound.test', INBOUND_EMAIL_PER_BOT_PER_MINUTE: String(PER_MINUTE) }, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())
// the baseline before any mail is sent
beforeAll(() => healthBound(), 120_000)

async function emailBot(owner: Tenant, body: Record<string, unknown> = {}) {
  const r = await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer', reply_from: 'Acme Support <support@acme.test>', ...body })
  expect(r.status, r.text).toBe(200)
  return { ...r.body, inbound_url: t.url + new URL(r.body.inbound_url).pathname } as { inbound_address: string; inbound_url: string }
}
const post = async (url: string, raw: string) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: raw })
  return { status: r.status, headers: r.headers, body: (await r.json()) as any }
}
const messages = async (owner: Tenant) => (await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=100`)).body.items as any[]
/** Waits until the message `id` has left `queued` (answered, handed off, failed: anything but stuck). */
const settled = (owner: Tenant, id: string) =>
  until(
    `message ${id} handled`,
    async () => {
      const m = (await messages(owner)).find((x) => x.id === id)
      return m && m.status !== 'queued' ? m : null
    },
    120_000,
  )

/** Runs `fn` while /health is asked every 25 ms; returns fn's result and the slowest /health answer (ms). */
async function whileHealthPolled<T>(fn: () => Promise<T>): Promise<{ value: T; maxMs: number }> {
  let maxMs = 0
  let done = false
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now()
      const r = await fetch(`${t.url}/health`)
      await r.arrayBuffer()
      maxMs = Math.max(maxMs, performance.now() - t0)
      await new Promise((r) => setTimeout(r, 25))
    }
  })()
  try {
    const value = await fn()
    return { value, maxMs }
  } finally {
    done = true
    await poller
  }
}

const answerAnything = () => fake.script(() => ({ text: 'Refunds take 5 business days.' }))

describe('hostile bodies: /health stays fast, the process survives, nothing stays queued (findings 1, 2, 9)', () => {
  it.each([
    ["12 KB of ' on at' (cubic in email-reply-parser)", () => `Question?\n${' on at'.repeat(2000)}`],
    ['24 KB of it over many lines', () => `Question?\n${`${' on at'.repeat(400)}\n`.repeat(10)}`],
    ['10,000 blank lines', () => `${'\n'.repeat(10_000)}How long do refunds take?`],
    ['a 6 MB text mail', () => `How long do refunds take?\n${'lorem ipsum dolor sit amet '.repeat((6 * 1024 * 1024) / 27)}`],
    ['a 9.9 MB text mail', () => `How long do refunds take?\n${'x'.repeat(76)}\n`.repeat(Math.floor((9.9 * 1024 * 1024) / 104))],
  ])('%s', async (_name, body) => {
    answerAnything()
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const raw = rawMail({ to: ch.inbound_address, from: uniqueEmail('hostile'), body: body() })
    const { value: r, maxMs } = await whileHealthPolled(() => post(ch.inbound_url, raw))
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    expect(r.body.status).toBe('queued')
    const m = await settled(owner, r.body.id)
    expect(['answered', 'handed_off'], `${m.status} ${m.reason}`).toContain(m.status)
    expect(maxMs, `slowest /health ${Math.round(maxMs)} ms`).toBeLessThan(await healthBound())
    expect((await fetch(`${t.url}/health`)).status).toBe(200)
  })

  it('a channel that is off refuses the hostile mail before any body parse', async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner, { enabled: false })
    const raw = rawMail({ to: ch.inbound_address, from: uniqueEmail('off'), body: ' on at'.repeat(4000) })
    const { value: r, maxMs } = await whileHealthPolled(() => post(ch.inbound_url, raw))
    expect(r.body).toMatchObject({ status: 'ignored', reason: 'channel_disabled' })
    expect(maxMs).toBeLessThan(await healthBound())
  })

  it('NUL and lone surrogates in the subject, an attachment name and the body: stored, answered, never a 500', async () => {
    answerAnything()
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const from = uniqueEmail('nul')
    const boundary = 'b-nul-1'
    const raw = [
      `From: ${from}`,
      `To: ${ch.inbound_address}`,
      'Subject: =?utf-8?B?UmVmdW5kAD8=?= \u0000 x',
      `Message-ID: ${newMessageId()}`,
      'MIME-Version: 1.0',
      `Content-Type: multipart/mixed; boundary="${boundary}"`,
      '',
      `--${boundary}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      'How long do \u0000 refunds take? \ud800',
      `--${boundary}`,
      'Content-Type: application/pdf; name="in\u0000voice.pdf"',
      'Content-Disposition: attachment; filename="in\u0000voice.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      'JVBERi0xLjQK',
      `--${boundary}--`,
      '',
    ].join('\r\n')
    const r = await post(ch.inbound_url, raw)
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    const m = await settled(owner, r.body.id)
    expect(['answered', 'handed_off']).toContain(m.status)
    expect(m.subject).not.toContain('\u0000')
    expect(m.attachments[0].name).toBe('invoice.pdf')
  })
})

describe('one sender, one address (finding 5) and clean message ids (finding 17)', () => {
  it('a list in Reply-To or a quoted list in From is no sender, never a list of recipients', async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const victims = Array.from({ length: 30 }, (_, i) => `v${i}@victims.test`).join(',')
    const listReplyTo = rawMail({ to: ch.inbound_address, from: uniqueEmail('a'), headers: { 'Reply-To': `<${victims}>` } })
    const quoted = rawMail({ to: ch.inbound_address, from: '"x" <"a1@v.test,a2@v.test;a3@v.test"@evil.test>' })
    for (const raw of [listReplyTo, quoted]) {
      const r = await post(ch.inbound_url, raw)
      expect(r.body).toMatchObject({ status: 'ignored', reason: 'no_sender' })
    }
    expect(t.smtp.mails.filter((m) => m.to.some((a) => a.endsWith('victims.test') || a.endsWith('v.test')))).toHaveLength(0)
  })

  it("a sender's junk Message-ID never reaches our In-Reply-To or References", async () => {
    answerAnything()
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const from = uniqueEmail('junkid')
    const r = await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from, messageId: '<m5@x.test> Bcc: evil5@x.test>' }))
    expect(r.status).toBe(202)
    const reply = await t.smtp.waitFor((m) => m.to.includes(from))
    const headers = `${reply.raw.headers.get('in-reply-to') ?? ''} ${JSON.stringify(reply.raw.headers.get('references') ?? '')}`
    expect(headers).not.toContain('evil5')
    expect(headers).not.toContain('Bcc')
  })
})

describe('automatic mail past the old loop guard (finding 15)', () => {
  it('ignores each, with its reason; a Gmail forwarding confirmation shows its link', async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const to = ch.inbound_address
    const cases: [string, string][] = [
      [rawMail({ to, from: uniqueEmail('o'), subject: 'Out of Office: your question' }), 'auto_reply_subject'],
      [rawMail({ to, from: uniqueEmail('o'), subject: 'Automatic reply: your question' }), 'auto_reply_subject'],
      [rawMail({ to, from: uniqueEmail('o'), subject: 'Abwesenheitsnotiz: Ihre Frage' }), 'auto_reply_subject'],
      [rawMail({ to, from: uniqueEmail('o'), subject: '=?utf-8?Q?R=C3=A9ponse_automatique_:_question?=' }), 'auto_reply_subject'],
      [rawMail({ to, from: uniqueEmail('o'), headers: { 'List-Unsubscribe': '<mailto:u@news.test>' } }), 'list_unsubscribe'],
      [rawMail({ to, from: uniqueEmail('o'), headers: { 'X-Auto-Response-Suppress': 'All' } }), 'auto_response_suppress'],
      [rawMail({ to, from: uniqueEmail('o'), headers: { 'Feedback-ID': '1:acme:esp' } }), 'feedback_id'],
      [rawMail({ to, from: 'no_reply@shop.test' }), 'daemon_sender'],
      [rawMail({ to, from: 'notifications@github.test' }), 'daemon_sender'],
      [rawMail({ to, from: 'other-bot-0a1b2c3d@inbound.test' }), 'bot_address'],
    ]
    const report = [
      `From: ${uniqueEmail('dsn')}`,
      `To: ${to}`,
      'Subject: Delivery Status Notification',
      `Message-ID: ${newMessageId()}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="r1"',
      '',
      '--r1',
      'Content-Type: text/plain',
      '',
      'Your message could not be delivered.',
      '--r1--',
      '',
    ].join('\r\n')
    cases.push([report, 'delivery_report'])
    for (const [raw, reason] of cases) {
      const r = await post(ch.inbound_url, raw)
      expect(r.body, reason).toMatchObject({ status: 'ignored', reason })
    }
    const link = 'https://mail-settings.google.com/mail/vf-%5BANGjdJ9%5D-abcdef'
    const gmail = rawMail({
      to,
      from: 'Gmail Team <forwarding-noreply@google.com>',
      subject: '(#123) Gmail Forwarding Confirmation - Receive Mail from lead@acme.test',
      body: `lead@acme.test has requested to automatically forward mail to your email address.\r\nTo allow it, click the link below:\r\n\r\n${link}\r\n`,
    })
    const r = await post(ch.inbound_url, gmail)
    expect(r.body).toMatchObject({ status: 'ignored', reason: 'forwarding_confirmation' })
    const listed = (await messages(owner)).find((m) => m.id === r.body.id)
    expect(listed.confirmation_link).toBe(link)
    expect(listed.reply).toBeNull()
    expect(t.smtp.mails.filter((m) => m.to.includes('forwarding-noreply@google.com'))).toHaveLength(0)
  })
})

describe('the webhook door (findings 8 and 17)', () => {
  it('refuses an unknown token before reading the body', async () => {
    // a 14 MB upload of which only the first MB is written: the 404 must come while the rest is still unsent
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${t.url}/inbound/email/${'z'.repeat(40)}`, {
        method: 'POST',
        headers: { 'content-type': 'message/rfc822', 'content-length': String(14 * 1024 * 1024) },
      })
      const timer = setTimeout(() => reject(new Error('no answer before the body was sent')), 20_000)
      req.on('response', (res) => {
        clearTimeout(timer)
        res.resume()
        resolve(res.statusCode ?? 0)
        req.destroy()
      })
      req.on('error', () => {})
      req.write(Buffer.alloc(1024 * 1024, 0x61))
    })
    expect(status).toBe(404)
  })

  it(`takes at most ${PER_MINUTE} mails a minute per bot: beyond, 429 with Retry-After, nothing stored`, async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const from = uniqueEmail('flood')
    for (let i = 0; i < PER_MINUTE; i++) {
      const r = await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from, headers: { 'Auto-Submitted': 'auto-generated' } }))
      expect(r.status).toBe(202)
    }
    const over = await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from }))
    expect(over.status).toBe(429)
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await messages(owner)).toHaveLength(PER_MINUTE)
    // another bot is not held by this one's flood
    const other = await createTenant(t)
    const och = await emailBot(other)
    expect((await post(och.inbound_url, rawMail({ to: och.inbound_address, from, headers: { 'Auto-Submitted': 'auto-generated' } }))).status).toBe(202)
  })

  it('a mail beyond the parse limits is stored as too_complex: 202 ignored on the webhook, 554 over SMTP', async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const listener = await smtpListener()
    const saved = MAIL_PARSE.deadlineMs
    // a deadline no parse meets stands for a mail that needs more than the real one (30 s)
    MAIL_PARSE.deadlineMs = 1
    try {
      const r = await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: uniqueEmail('big') }))
      expect(r.body).toMatchObject({ status: 'ignored', reason: 'too_complex' })
      const client = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true })
      const from = uniqueEmail('big')
      await expect(client.sendMail({ envelope: { from, to: [ch.inbound_address] }, raw: rawMail({ to: ch.inbound_address, from }) })).rejects.toMatchObject({
        responseCode: 554,
      })
      client.close()
    } finally {
      MAIL_PARSE.deadlineMs = saved
      await listener.close()
    }
    expect((await messages(owner)).filter((m) => m.reason === 'too_complex')).toHaveLength(2)
  })
})

/** The inbound SMTP listener on a free port, over this test app's database. */
function smtpListener(limits?: Parameters<typeof startInboundSmtp>[1]['limits']) {
  return inboundSmtp(t.ctx, { maxBytes: 10 * 1024 * 1024, limits })
}

/** A raw SMTP connection: what the server says, line by line. */
function rawClient(port: number) {
  const socket: Socket = connect(port, '127.0.0.1')
  let text = ''
  const closed = new Promise<void>((r) => socket.once('close', () => r()))
  socket.on('data', (d) => (text += d.toString()))
  socket.on('error', () => {})
  return {
    socket,
    closed,
    said: () => text,
    waitFor: (needle: string, ms = 20_000) => until(`SMTP said ${needle}`, async () => text.includes(needle), ms),
  }
}

describe('SMTP: one client cannot hold the listener (finding 7)', () => {
  it('caps connections per address, hangs up a session that never says MAIL FROM, and one that only chats', async () => {
    const listener = await smtpListener({ idleMs: 4000 })
    const open: ReturnType<typeof rawClient>[] = []
    try {
      for (let i = 0; i < 10; i++) {
        const c = rawClient(listener.port)
        await c.waitFor('220')
        open.push(c)
      }
      const eleventh = rawClient(listener.port)
      await eleventh.waitFor('421')
      await eleventh.closed
      // the idle ones are hung up after the MAIL FROM deadline, and their slots come free
      await Promise.all(open.map((c) => c.closed))
      expect(open.every((c) => c.said().includes('421'))).toBe(true)
      const again = rawClient(listener.port)
      await again.waitFor('220')
      // commands without a message: NOOP after NOOP is cut off
      for (let i = 0; i < 30 && !again.said().includes('421'); i++) {
        again.socket.write('NOOP\r\n')
        await new Promise((r) => setTimeout(r, 20))
      }
      await again.waitFor('Too many commands')
      await again.closed
    } finally {
      for (const c of open) c.socket.destroy()
      await listener.close()
    }
  })

  it("the issue's hostile body over SMTP: accepted at once, /health fast", async () => {
    answerAnything()
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const listener = await smtpListener()
    try {
      const client = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true })
      const from = uniqueEmail('smtp-hostile')
      const { value: sent, maxMs } = await whileHealthPolled(() =>
        client.sendMail({ envelope: { from, to: [ch.inbound_address] }, raw: rawMail({ to: ch.inbound_address, from, body: `Q?\n${' on at'.repeat(2000)}` }) }),
      )
      expect(sent.accepted).toEqual([ch.inbound_address])
      expect(maxMs).toBeLessThan(await healthBound())
      client.close()
    } finally {
      await listener.close()
    }
  })
})
