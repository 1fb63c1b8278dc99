import { randomUUID } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { rawMail } from './helpers/email.js'
import { createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { until } from './helpers/wait.js'

/**
 * Issue 52, item 5 (contract "E-mail channel"): a team notice's Reply-To is an address of the ticket, and a
 * member's mailed reply to it (from their own login address) is posted as their message on the ticket and mailed
 * on to the customer in the thread; anyone else's is ignored with a reason. One hand-off sends one notice.
 */
vi.setConfig({ hookTimeout: 600_000, testTimeout: 300_000 })

let t: TestApp
appWithFakeLlm({ INBOUND_EMAIL_DOMAIN: 'inbound.test' }, (started) => (t = started.t))

const post = (url: string, raw: string) =>
  fetch(t.url + new URL(url).pathname, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: raw }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as { id: string; status: string; reason?: string },
  }))

async function emailBot(owner: Tenant) {
  const r = await owner.api.put(`/bots/${owner.bot.id}/email`, {
    enabled: true,
    mode: 'answer',
    reply_from: 'Acme Support <support@acme.test>',
    signature: null,
  })
  expect(r.status, r.text).toBe(200)
  return r.body as { inbound_address: string; inbound_url: string }
}

describe("a team notice's Reply-To", () => {
  it("is the ticket's own address; a member's reply from their login address is posted as theirs and mailed on to the customer", async () => {
    const owner = await createTenant(t)
    expect((await owner.api.patch('/auth/me', { display_name: 'Kim' })).status).toBe(200)
    const support = `team-${randomUUID().slice(0, 8)}@shop.test`
    expect((await owner.api.patch('/tenants/me', { support_email: support })).status).toBe(200)
    const ch = await emailBot(owner)
    const customer = uniqueEmail('jane')
    const asked = rawMail({ to: ch.inbound_address, from: customer, subject: 'Invoice name', body: 'My invoice shows the wrong company name.' })
    expect((await post(ch.inbound_url, asked)).status).toBe(202)
    const notice = await t.smtp.waitFor((m) => m.to.includes(support) && /ESC-0001/.test(m.subject), 60_000)
    // not the customer: an address of the ticket on the bot's inbound domain, unguessable (not the number)
    expect(notice.replyTo).toMatch(/^ticket\.[0-9a-z]+\.[0-9a-f]{20}@inbound\.test$/)
    expect(notice.replyTo).not.toContain(customer)
    const ticket = await until(
      'the ticket',
      async () => ((await owner.api.get('/escalations')).body.tickets as any[]).find((x) => x.user_email === customer) ?? null,
      60_000,
    )
    // the customer was told the ticket's number first
    await t.smtp.waitFor((m) => m.to.includes(customer), 60_000)
    const before = t.smtp.to(customer).length

    // a member presses Reply in their mailbox
    const reply = rawMail({
      to: notice.replyTo!,
      from: `Kim <${owner.email}>`,
      subject: `Re: ${notice.subject}`,
      body: 'Hi Jane,\n\nwe have corrected the company name on invoice 1042.\n\nOn Mon, the bot wrote:\n> New support ticket ESC-0001',
    })
    const r = await post(ch.inbound_url, reply)
    expect(r.status).toBe(202)
    expect(r.body.status).toBe('queued')
    const mailed = await t.smtp.waitFor((m) => m.to.includes(customer) && m.text.includes('corrected the company name'), 60_000)
    expect(t.smtp.to(customer).length).toBe(before + 1)
    expect(mailed.subject).toBe('Re: Invoice name')
    expect(mailed.text).toContain('Kim')
    expect(mailed.text).not.toContain('New support ticket')
    const messages = (await owner.api.get(`/chat/history/${ticket.session_id}`)).body.messages as { role: string; content: string; from_operator?: boolean }[]
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: expect.stringContaining('corrected the company name') })
    // the same mail again is handled once
    expect((await post(ch.inbound_url, reply)).body.status).toBe('duplicate')

    // anyone else's reply to the notice is ignored with a reason, nothing posted or mailed
    const stranger = await post(ch.inbound_url, rawMail({ to: notice.replyTo!, from: customer, subject: 'Re: x', body: 'I pretend to be the team.' }))
    expect(stranger.body).toMatchObject({ status: 'ignored', reason: 'not_a_member' })
    // a made-up ticket address (a wrong check part) is refused too
    const forged = notice.replyTo!.replace(/\.([0-9a-f]{20})@/, (_m, mac: string) => `.${mac.startsWith('0') ? '1' : '0'}${mac.slice(1)}@`)
    const guessed = await post(ch.inbound_url, rawMail({ to: forged, from: owner.email, subject: 'Re: x', body: 'Guessing an address.' }))
    expect(guessed.body).toMatchObject({ status: 'ignored', reason: 'unknown_ticket' })
    await sleep(500)
    expect(t.smtp.to(customer).length).toBe(before + 1)
    const after = (await owner.api.get(`/chat/history/${ticket.session_id}`)).body.messages as { content: string }[]
    expect(JSON.stringify(after)).not.toMatch(/pretend to be the team|Guessing an address/)
  })
})

describe('one hand-off, one notice', () => {
  it("the widget's offline form (a hand-off, then the address a moment later) sends the team one notice, with the address", async () => {
    const owner = await createTenant(t)
    const support = `team-${randomUUID().slice(0, 8)}@shop.test`
    expect((await owner.api.patch('/tenants/me', { support_email: support })).status).toBe(200)
    const visitor = t.api()
    const bot = owner.bot.public_id
    const sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id as string
    const esc = await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: 'Please call me back about my order' })
    expect(esc.status, esc.text).toBe(200)
    // what the widget's offline form does next: the address as the visitor's next message
    const chat = await fetch(`${visitor.base}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor.ip },
      body: JSON.stringify({ message: 'ana@example.org' }),
    })
    expect(chat.status).toBe(200)
    await chat.text()
    const first = await t.smtp.waitFor((m) => m.to.includes(support) && m.subject.includes(esc.body.ticket_number), 60_000)
    expect(first.text).toContain('ana@example.org')
    await t.worker?.drain()
    await sleep(3000)
    await t.worker?.drain()
    expect(t.smtp.to(support).filter((m) => m.subject.includes(esc.body.ticket_number))).toHaveLength(1)
  })
})

describe("the E-mail card's facts", () => {
  it('says whether an SMTP listener takes the inbound address (here: none, INBOUND_SMTP_PORT unset)', async () => {
    const owner = await createTenant(t)
    const ch = await owner.api.get(`/bots/${owner.bot.id}/email`)
    expect(ch.status, ch.text).toBe(200)
    expect(ch.body.inbound_smtp).toBe(false)
    // the test app's webhook URL is on this machine: the card hints at PUBLIC_BASE_URL (dashboard)
    expect(new URL(ch.body.inbound_url).hostname).toMatch(/^(localhost|127\.0\.0\.1)$/)
  })
})
