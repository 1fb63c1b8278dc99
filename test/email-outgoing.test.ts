import { afterEach, describe, expect, it, vi } from 'vitest'
import { PermanentJobError } from '../src/jobs/worker.js'
import { mailboxOf } from '../src/modules/mailer/address.fns.js'
import { createSmtpMailer } from '../src/modules/mailer/mailer.transport.js'
import type { FakeLlm } from './fakes/fake-llm.js'
import type { ReceivedMail } from './fakes/smtp.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { isAnswer, REFUNDS_MD, withDocs } from './helpers/chat.js'
import { confirmationLink, rawMail } from './helpers/email.js'
import { createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import { until } from './helpers/wait.js'

/**
 * Outgoing mail of the e-mail channel (issue 50): who it can reach (one plain recipient, an explicit envelope),
 * from whom (reply_from only once confirmed), how many (a mailbox's and a bot's hourly caps, one ticket for a
 * capped sender), and who may continue a thread (never on a message that names no correspondent).
 */

vi.setConfig({ hookTimeout: 600_000, testTimeout: 300_000 })

let fake: FakeLlm
let t: TestApp

const BOT_CAP = 6
appWithFakeLlm(
  { INBOUND_EMAIL_DOMAIN: 'inbound.test', OPERATOR_REPLY_GRACE_SECONDS: '0', EMAIL_BOT_HOURLY_CAP: String(BOT_CAP) },
  (started) => ({ fake, t } = started),
)
afterEach(() => fake.reset())
const answerRefunds = () =>
  fake.script((req) => (isAnswer(req as never) ? { text: 'Refunds are processed within 5 business days after we receive the returned item. [1]' } : undefined))

const OURS = 'no-reply@localhost' // EMAIL_FROM's address in tests

async function emailBot(owner: Tenant, body: Record<string, unknown> = {}) {
  const r = await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer', ...body })
  expect(r.status, r.text).toBe(200)
  return { ...r.body, inbound_url: t.url + new URL(r.body.inbound_url).pathname } as { inbound_address: string; inbound_url: string } & Record<string, any>
}
const post = async (url: string, raw: string) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: raw })
  return { status: r.status, body: (await r.json()) as any }
}
const handled = (owner: Tenant, n: number) =>
  until(
    `${n} messages handled`,
    async () => {
      const r = await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=100`)
      return r.body.items.length >= n && r.body.items.every((m: any) => m.status !== 'queued') ? (r.body.items as any[]) : null
    },
    120_000,
  )
const settings = async (owner: Tenant) => (await owner.api.get(`/bots/${owner.bot.id}/email`)).body
const fromHeader = (m: ReceivedMail) => m.raw.from!.value[0]!
/** The page of a confirmation link, and its Confirm button (a form POST to the same URL). */
const open = (url: string, method: 'GET' | 'POST' = 'GET') =>
  fetch(t.url + new URL(url).pathname + new URL(url).search, {
    method,
    ...(method === 'POST' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' } : {}),
  })

describe('reply_from: mailed as only once confirmed', () => {
  it('refuses a list, hidden characters and a name that reads as an address, naming reply_from', async () => {
    const owner = await createTenant(t)
    const bad = [
      'a@acme.test, b@acme.test',
      'Acme <v1@victims.test,v2@victims.test>',
      '"x" <"a1@v,a2@v;a3@v"@evil.test>',
      'PayPal \u202eytiruceS <a@acme.test>',
      'Pay\u2067Pal <a@acme.test>',
      'Pay\u200bPal <a@acme.test>',
      'Pay\u0007Pal <a@acme.test>',
      'service@paypal.com <a@acme.test>',
      'not an address',
    ]
    for (const reply_from of bad) {
      const r = await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer', reply_from })
      expect(r.status, reply_from).toBe(422)
      expect(r.text, reply_from).toContain('reply_from')
    }
    expect(t.smtp.mails.filter((m) => m.to.some((a) => a.endsWith('victims.test') || a.endsWith('acme.test')))).toHaveLength(0)
  })

  it('sends from our address under the chosen name until the link mailed to reply_from is confirmed; then from reply_from', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    answerRefunds()
    const claimed = uniqueEmail('service')
    const ch = await emailBot(owner, { reply_from: `PayPal Security <${claimed}>` })
    expect(ch).toMatchObject({
      reply_from: `PayPal Security <${claimed}>`,
      reply_from_verified: false,
      reply_from_pending: true,
      sender: `"PayPal Security" <${OURS}>`,
    })

    // the confirmation goes to the claimed address, from us
    const confirm = await t.smtp.waitFor((m) => m.to.includes(claimed))
    expect(confirm.envelope).toEqual({ from: OURS, to: [claimed] })
    const link = confirmationLink(confirm.text)

    // an answer before confirmation: our address (header and MAIL FROM), the chosen name, Reply-To the bot's address
    const visitor = uniqueEmail('v')
    expect((await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: visitor }))).body.status).toBe('queued')
    const before = await t.smtp.waitFor((m) => m.to.includes(visitor))
    expect(fromHeader(before)).toEqual({ name: 'PayPal Security', address: OURS })
    expect(before.envelope).toEqual({ from: OURS, to: [visitor] })
    expect(before.replyTo).toBe(ch.inbound_address)

    // opening the link changes nothing (a mail scanner that follows links confirms nothing); the button does, once
    const page = await open(link)
    expect(page.status).toBe(200)
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    expect(await page.text()).toContain('<form method="post"')
    expect((await settings(owner)).reply_from_verified).toBe(false)
    expect((await open(link, 'POST')).status).toBe(200)
    expect(await settings(owner)).toMatchObject({ reply_from_verified: true, reply_from_pending: false, sender: `"PayPal Security" <${claimed}>` })
    expect((await open(link, 'POST')).status).toBe(400)

    const visitor2 = uniqueEmail('v2')
    await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: visitor2 }))
    const after = await t.smtp.waitFor((m) => m.to.includes(visitor2))
    expect(fromHeader(after)).toEqual({ name: 'PayPal Security', address: claimed })
    expect(after.envelope).toEqual({ from: claimed, to: [visitor2] })
    expect(after.replyTo).toBe(ch.inbound_address)

    // the name may change without a new confirmation; the address may not
    expect((await emailBot(owner, { reply_from: `Acme Help <${claimed}>` })).reply_from_verified).toBe(true)
    expect((await owner.api.post(`/bots/${owner.bot.id}/email/verify-sender`)).status).toBe(409)
    const other = uniqueEmail('other')
    t.clock.advance(61_000) // a new address's link goes out at once unless one went out in the last minute
    expect(await emailBot(owner, { reply_from: other })).toMatchObject({ reply_from_verified: false, sender: `"Support Bot" <${OURS}>` })
    const first = await t.smtp.waitFor((m) => m.to.includes(other))
    // resend: a new link; the earlier one stops working
    const resent = await owner.api.post(`/bots/${owner.bot.id}/email/verify-sender`)
    expect(resent.status, resent.text).toBe(200)
    expect(resent.body.reply_from_pending).toBe(true)
    await until('a second link', async () => t.smtp.to(other).length >= 2)
    const second = t.smtp.to(other).find((m) => m !== first)!
    expect((await open(confirmationLink(first.text), 'POST')).status).toBe(400)
    // a link for an address no longer set is void
    await emailBot(owner, { reply_from: claimed })
    expect((await open(confirmationLink(second.text), 'POST')).status).toBe(400)
    expect((await settings(owner)).sender).toBe(claimed)

    // expired after 48 hours
    const late = uniqueEmail('late')
    t.clock.advance(61_000)
    await emailBot(owner, { reply_from: late })
    await until('the late link', async () => t.smtp.to(late).length >= 1)
    t.clock.advance(49 * 3600_000)
    expect((await open(confirmationLink(t.smtp.to(late)[0]!.text), 'POST')).status).toBe(400)
  })

  it('the resend route is for who may change settings, with no reply_from a 409, and limited per workspace', async () => {
    const owner = await createTenant(t)
    await emailBot(owner)
    const none = await owner.api.post(`/bots/${owner.bot.id}/email/verify-sender`)
    expect(none.status).toBe(409)
    expect((await t.api().post(`/bots/${owner.bot.id}/email/verify-sender`)).status).toBe(401)
    const stranger = await createTenant(t)
    expect((await stranger.api.post(`/bots/${owner.bot.id}/email/verify-sender`)).status).toBe(404)
    await emailBot(owner, { reply_from: uniqueEmail('r') })
    const codes: number[] = []
    for (let i = 0; i < 12; i++) codes.push((await owner.api.post(`/bots/${owner.bot.id}/email/verify-sender`)).status)
    expect(codes.filter((c) => c === 200).length).toBeLessThanOrEqual(10)
    expect(codes).toContain(429)
  })
})

describe('one recipient, an explicit envelope', () => {
  it('mails nobody when the sender is a list in angle brackets or a quoted local part', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    answerRefunds()
    const ch = await emailBot(owner)
    const victims = Array.from({ length: 30 }, (_, i) => `v${i}-${owner.tenantId.slice(0, 8)}@victims.test`)
    const listed = rawMail({ to: ch.inbound_address, from: uniqueEmail('x'), headers: { 'Reply-To': `<${victims.join(',')}>` } })
    const quoted = rawMail({ to: ch.inbound_address, from: `"x" <"${victims[0]},${victims[1]};${victims[2]}"@evil.test>` })
    const person = uniqueEmail('person')
    for (const raw of [listed, quoted, rawMail({ to: ch.inbound_address, from: person })]) expect((await post(ch.inbound_url, raw)).status).toBe(202)
    const items = await handled(owner, 3)
    const answer = await t.smtp.waitFor((m) => m.to.includes(person))
    expect(answer.envelope).toEqual({ from: OURS, to: [person] })
    expect(items.filter((m) => m.status === 'answered')).toHaveLength(1)
    expect(items.filter((m) => m.status !== 'answered').every((m) => m.reason === 'no_sender')).toBe(true)
    expect(t.smtp.mails.filter((m) => m.envelope.to.some((a) => a.includes('victims.test') || a.includes('evil.test')))).toHaveLength(0)
  })

  it('the mailer refuses a recipient that is not one plain address, for good (no retry)', async () => {
    const mailer = createSmtpMailer(t.smtp.url, 'Bot <bot@ours.test>')
    try {
      await expect(mailer.send({ to: 'a@x.test, b@x.test', subject: 's', text: 't' })).rejects.toBeInstanceOf(PermanentJobError)
      await expect(mailer.send({ to: '<a@x.test>', subject: 's', text: 't' })).rejects.toBeInstanceOf(PermanentJobError)
      const to = uniqueEmail('one')
      await mailer.send({ to, subject: 's', text: 't' })
      expect((await t.smtp.waitFor((m) => m.to.includes(to))).envelope).toEqual({ from: 'bot@ours.test', to: [to] })
    } finally {
      mailer.close()
    }
  })
})

describe('caps', () => {
  it('counts +tags and Gmail dots as one mailbox, and puts the capped mail into one ticket', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    answerRefunds()
    const ch = await emailBot(owner)
    const user = `storm${owner.tenantId.slice(0, 6)}`
    const spelled = (i: number) => `${[...user].join(i % 2 ? '.' : '')}+${i}@${i % 3 ? 'gmail.com' : 'googlemail.com'}`
    for (let i = 0; i < 9; i++) {
      const r = await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: spelled(i), subject: `Refund question ${i}` }))
      expect(r.body.status).toBe('queued')
    }
    const items = await handled(owner, 9)
    expect(items.filter((m) => m.status === 'answered')).toHaveLength(5)
    const capped = items.filter((m) => m.status !== 'answered')
    expect(capped.map((m) => [m.status, m.reason])).toEqual(Array(4).fill(['handed_off', 'sender_rate_limited']))
    expect(new Set(capped.map((m) => m.ticket_number)).size).toBe(1)
    expect(new Set(capped.map((m) => m.session_id)).size).toBe(1)
    const tickets = (await owner.api.get('/escalations')).body.tickets
    expect(tickets).toHaveLength(1)
    // the capped mails are in that conversation, for the team
    const said = await t.ctx.db
      .selectFrom('chat_messages')
      .select('content')
      .where('session_id', '=', capped[0].session_id)
      .where('role', '=', 'user')
      .execute()
    expect(said.length).toBeGreaterThanOrEqual(3)
    const toStorm = () => t.smtp.mails.filter((m) => m.envelope.to.some((a) => mailboxOf(a) === `${user}@gmail.com`))
    await until('the answers are out', async () => toStorm().length >= 5)
    // nothing beyond the cap went out (no ticket notice either)
    expect(toStorm()).toHaveLength(5)
  })

  it(`a bot answers at most EMAIL_BOT_HOURLY_CAP (${BOT_CAP}) mails an hour across all senders`, async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    answerRefunds()
    const ch = await emailBot(owner)
    const senders = Array.from({ length: BOT_CAP + 2 }, (_, i) => uniqueEmail(`many${i}`))
    for (const from of senders) await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from }))
    const items = await handled(owner, senders.length)
    expect(items.filter((m) => m.status === 'answered')).toHaveLength(BOT_CAP)
    expect(items.filter((m) => m.status !== 'answered').map((m) => m.reason)).toEqual(['bot_rate_limited', 'bot_rate_limited'])
    await until('the answers are out', async () => senders.filter((s) => t.smtp.to(s).length).length >= BOT_CAP)
    expect(senders.filter((s) => t.smtp.to(s).length)).toHaveLength(BOT_CAP)
  })
})

describe('who may continue a thread', () => {
  it("records the correspondent on an operator's mail, so its Message-ID lets nobody else into the conversation", async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const visitor = uniqueEmail('visitor')
    // no knowledge: the turn hands off, the visitor is told the ticket's number
    await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: visitor, subject: 'Shipping to Switzerland?' }))
    await t.smtp.waitFor((m) => m.to.includes(visitor))
    const [first] = await handled(owner, 1)
    const ticket = (await owner.api.get('/escalations')).body.tickets[0]
    const sent = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'Yes, we ship there. Your order number?' })
    expect(sent.status, sent.text).toBe(201)
    const operatorMail = await t.smtp.waitFor((m) => m.to.includes(visitor) && m.text.includes('order number'))
    expect(operatorMail.raw.messageId).toMatch(/^<o\./)
    const out = await t.ctx.db
      .selectFrom('email_messages')
      .select(['kind', 'sender_hash'])
      .where('tenant_id', '=', owner.tenantId)
      .where('direction', '=', 'out')
      .execute()
    expect(out.length).toBeGreaterThanOrEqual(2)
    expect(out.every((o) => o.sender_hash)).toBe(true)

    // whoever holds the operator mail's Message-ID, writing from elsewhere, starts a conversation of their own
    const intruder = uniqueEmail('intruder')
    const headers = { 'In-Reply-To': operatorMail.raw.messageId!, References: operatorMail.raw.messageId! }
    await post(
      ch.inbound_url,
      rawMail({ to: ch.inbound_address, from: intruder, subject: 'Re: Shipping to Switzerland?', body: 'Send me the address.', headers }),
    )
    // the visitor's own reply continues it
    await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: visitor, subject: 'Re: Shipping to Switzerland?', body: 'It is 4711.', headers }))
    const items = await handled(owner, 3)
    const byIntruder = items.find((m) => m.from === intruder)
    const byVisitor = items.find((m) => m.from === visitor && m.id !== first.id)
    expect(byVisitor.session_id).toBe(first.session_id)
    expect(byIntruder.session_id).not.toBe(first.session_id)
  })
})
