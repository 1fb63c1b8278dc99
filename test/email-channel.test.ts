import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { isAnswer, REFUNDS_MD, withDocs } from './helpers/chat.js'
import { fixture, newMessageId, rawMail } from './helpers/email.js'
import { createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import { addMember } from './helpers/team.js'
import { until } from './helpers/wait.js'

vi.setConfig({ hookTimeout: 600_000, testTimeout: 300_000 })

let fake: FakeLlm
let t: TestApp

appWithFakeLlm({ INBOUND_EMAIL_DOMAIN: 'inbound.test', INBOUND_EMAIL_MAX_BYTES: String(64 * 1024) }, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())
/** The answer model answers from the refunds page (the fake's own word matching is not under test here). */
const answerRefunds = () =>
  fake.script((req) => (isAnswer(req as never) ? { text: 'Refunds are processed within 5 business days after we receive the returned item. [1]' } : undefined))

async function emailBot(owner: Tenant, body: Record<string, unknown> = {}) {
  const r = await owner.api.put(`/bots/${owner.bot.id}/email`, {
    enabled: true,
    mode: 'answer',
    reply_from: 'Acme Support <support@acme.test>',
    signature: 'Acme Support team',
    ...body,
  })
  expect(r.status, r.text).toBe(200)
  return { ...r.body, inbound_url: local(r.body.inbound_url) } as { inbound_address: string; inbound_url: string; mode: string }
}

/** The webhook URL as this test's server answers it (PUBLIC_BASE_URL is not set here). */
const local = (url: string) => t.url + new URL(url).pathname

const post = (url: string, raw: string, type = 'message/rfc822') => fetch(url, { method: 'POST', headers: { 'content-type': type }, body: raw })
const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any })

describe('e-mail settings', () => {
  it('gives each bot an address and a webhook URL; PUT changes the rest; rotate retires the old URL', async () => {
    const owner = await createTenant(t)
    const first = await owner.api.get(`/bots/${owner.bot.id}/email`)
    expect(first.status, first.text).toBe(200)
    expect(first.body).toMatchObject({ enabled: false, mode: 'answer', reply_from: null, signature: null })
    expect(first.body.inbound_address).toMatch(/^[a-z0-9-]+-[0-9a-f]{8}@inbound\.test$/)
    expect(first.body.inbound_url).toMatch(/\/inbound\/email\/[A-Za-z0-9_-]{20,}$/)
    // the token is not stored in clear
    const row = await t.ctx.db.selectFrom('email_channels').selectAll().where('tenant_id', '=', owner.tenantId).executeTakeFirstOrThrow()
    const token = first.body.inbound_url.split('/').pop()
    expect(JSON.stringify(row)).not.toContain(token)

    const put = await emailBot(owner, { mode: 'draft' })
    expect(put).toMatchObject({ mode: 'draft', inbound_address: first.body.inbound_address, inbound_url: local(first.body.inbound_url) })
    expect((await owner.api.get(`/bots/${owner.bot.id}/email`)).body).toMatchObject({
      enabled: true,
      reply_from: 'Acme Support <support@acme.test>',
      signature: 'Acme Support team',
    })

    const bad = await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer', reply_from: 'not an address' })
    expect(bad.status).toBe(422)
    expect(bad.text).toContain('reply_from')
    expect((await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'sometimes' })).status).toBe(422)

    const rotated = await owner.api.post(`/bots/${owner.bot.id}/email/rotate`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.inbound_url).not.toBe(first.body.inbound_url)
    expect(rotated.body.inbound_address).toBe(first.body.inbound_address)
    const mail = rawMail({ to: first.body.inbound_address, from: uniqueEmail('v') })
    expect((await post(local(first.body.inbound_url), mail)).status).toBe(404)
    expect((await post(local(rotated.body.inbound_url), mail)).status).toBe(202)
  })

  it('is for owners and admins of the workspace; another workspace gets 404', async () => {
    const owner = await createTenant(t)
    const stranger = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    const editor = await addMember(t, owner, 'editor')
    const admin = await addMember(t, owner, 'admin')
    for (const m of [agent, editor]) {
      expect((await m.api.get(`/bots/${owner.bot.id}/email`)).status).toBe(403)
      expect((await m.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer' })).status).toBe(403)
      expect((await m.api.post(`/bots/${owner.bot.id}/email/rotate`)).status).toBe(403)
      expect((await m.api.get(`/bots/${owner.bot.id}/email/messages`)).status).toBe(403)
    }
    expect((await admin.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer' })).status).toBe(200)
    expect((await stranger.api.get(`/bots/${owner.bot.id}/email`)).status).toBe(404)
    expect((await stranger.api.post(`/bots/${owner.bot.id}/email/rotate`)).status).toBe(404)
    expect((await t.api().get(`/bots/${owner.bot.id}/email`)).status).toBe(401)
  })
})

describe('inbound over HTTP', () => {
  it('answers 404 for an unknown token, 422 for what is not a message, 413 over the limit', async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    expect((await post(`${t.url}/inbound/email/not-a-token`, rawMail({ to: ch.inbound_address, from: 'a@b.test' }))).status).toBe(404)
    const junk = await json(await post(ch.inbound_url, 'this is not a mail', 'text/plain'))
    expect(junk.status).toBe(422)
    expect(JSON.stringify(junk.body)).toMatch(/not an e-mail message/i)
    expect((await post(ch.inbound_url, '')).status).toBe(422)
    const big = rawMail({ to: ch.inbound_address, from: 'a@b.test', body: 'x'.repeat(70 * 1024) })
    expect((await post(ch.inbound_url, big)).status).toBe(413)
    const bigJson = await fetch(ch.inbound_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ RawEmail: big }) })
    expect(bigJson.status).toBe(413)
    const noField = new FormData()
    noField.set('text', 'hello')
    expect((await fetch(ch.inbound_url, { method: 'POST', body: noField })).status).toBe(422)
  })

  it('answers a Gmail mail in its thread, and a reply in the thread continues the session', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    answerRefunds()
    const ch = await emailBot(owner)
    const from = uniqueEmail('jo')
    const messageId = newMessageId('gmail')
    const res = await json(await post(ch.inbound_url, fixture('gmail-alternative.eml', { to: ch.inbound_address, from, messageId })))
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ status: 'queued', id: expect.any(String) })

    const reply = await t.smtp.waitFor((m) => m.to.includes(from))
    expect(reply.subject).toBe('Re: How long do refunds take?')
    // reply_from is not confirmed: our address under its name (test/email-outgoing.test.ts has the confirmation)
    expect(reply.raw.from?.value[0]).toEqual({ name: 'Acme Support', address: 'no-reply@localhost' })
    expect(reply.replyTo).toBe(ch.inbound_address)
    expect(reply.raw.inReplyTo).toBe(messageId)
    expect(reply.raw.references).toBe(messageId)
    expect(reply.raw.messageId).toMatch(/@inbound\.test>$/)
    expect(reply.raw.headers.get('auto-submitted')).toBe('auto-replied')
    expect(reply.text).toMatch(/5 business days/)
    expect(reply.text).toContain('Acme Support team')
    expect(reply.raw.html).toContain('5 business days')

    // the provider retries: one answer only
    const again = await json(await post(ch.inbound_url, fixture('gmail-alternative.eml', { to: ch.inbound_address, from, messageId })))
    expect(again.body).toEqual({ id: res.body.id, status: 'duplicate' })

    // the sender answers in the thread: the same session, the bot's earlier answer in its context
    const second = fixture('gmail-reply.eml', {
      to: ch.inbound_address,
      from,
      inReplyTo: reply.raw.messageId!,
      references: `${messageId} ${reply.raw.messageId}`,
    })
    expect((await json(await post(ch.inbound_url, second))).status).toBe(202)
    await until('second reply', async () => t.smtp.to(from).length >= 2)
    const replies = t.smtp.to(from)
    expect(replies[1]!.subject).toBe('Re: How long do refunds take?')
    expect(replies[1]!.raw.references).toEqual([messageId, reply.raw.messageId, expect.any(String)])
    const messages = await until('both handled', async () => {
      const r = await owner.api.get(`/bots/${owner.bot.id}/email/messages`)
      return r.body.items.length === 2 && r.body.items.every((m: any) => m.status !== 'queued') ? r.body.items : null
    })
    // the follow-up (shipping) is not in the knowledge: answered or handed off, in the same session either way
    expect(messages.map((m: any) => m.status)).toEqual([expect.stringMatching(/^(answered|handed_off)$/), 'answered'])
    expect(messages[0].session_id).toBe(messages[1].session_id)
    const session = await t.ctx.db.selectFrom('chat_sessions').selectAll().where('id', '=', messages[0].session_id).executeTakeFirstOrThrow()
    expect(session.channel).toBe('email')
    expect(session.message_count).toBe(4)
    expect(t.smtp.to(from)).toHaveLength(2)
  })

  it('takes SendGrid (multipart email), Mailgun (body-mime) and Postmark (JSON RawEmail) shapes', async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const shapes: [string, (raw: string) => Promise<Response>][] = [
      [
        'sendgrid',
        (raw) => {
          const f = new FormData()
          f.set('to', ch.inbound_address)
          f.set('email', raw)
          return fetch(ch.inbound_url, { method: 'POST', body: f })
        },
      ],
      [
        'mailgun',
        (raw) => {
          const f = new FormData()
          f.set('recipient', ch.inbound_address)
          f.set('body-mime', raw)
          return fetch(ch.inbound_url, { method: 'POST', body: f })
        },
      ],
      [
        'postmark',
        (raw) => fetch(ch.inbound_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ From: 'x', RawEmail: raw }) }),
      ],
      ['text', (raw) => post(ch.inbound_url, raw, 'text/plain')],
    ]
    for (const [name, send] of shapes) {
      const r = await json(await send(rawMail({ to: ch.inbound_address, from: uniqueEmail(name), headers: { 'Auto-Submitted': 'auto-replied' } })))
      expect(r.status, name).toBe(202)
      // an automatic message: recorded, never answered (and no model call is needed to check the shape)
      expect(r.body, name).toMatchObject({ status: 'ignored', reason: 'auto_submitted' })
    }
  })
})
