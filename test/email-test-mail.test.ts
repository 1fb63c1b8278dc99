import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { REFUNDS_MD, withDocs } from './helpers/chat.js'
import { rawMail } from './helpers/email.js'
import { createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import { addMember } from './helpers/team.js'
import { until } from './helpers/wait.js'

vi.setConfig({ hookTimeout: 600_000, testTimeout: 300_000 })

/**
 * The bot page's test mail (issue 52, item 11: POST /bots/{id}/email/test): written by the service from the member's
 * own address, answered and cited in that inbox as a dry run, and never a conversation or a ticket; a mail from
 * outside that copies a test mail's Message-ID is an ordinary mail.
 */
let fake: FakeLlm
let t: TestApp
appWithFakeLlm({ INBOUND_EMAIL_DOMAIN: 'inbound.test' }, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())

async function emailBot(owner: Tenant) {
  const r = await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer' })
  expect(r.status, r.text).toBe(200)
  return { address: r.body.inbound_address as string, url: t.url + new URL(r.body.inbound_url).pathname }
}
const settled = (owner: Tenant, id: string) =>
  until(
    'the mail handled',
    async () => {
      const items = (await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=50`)).body.items as any[]
      const m = items.find((x) => x.id === id)
      return m && m.status !== 'queued' ? m : null
    },
    120_000,
  )

describe("the bot page's test mail", () => {
  it("is answered and cited in the member's inbox, and leaves no conversation or ticket", async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    await emailBot(owner)
    const sent = await owner.api.post(`/bots/${owner.bot.id}/email/test`, { question: 'How long do refunds take?' })
    expect(sent.status, sent.text).toBe(202)
    const m = await settled(owner, sent.body.id)
    expect(m).toMatchObject({
      status: 'answered',
      reason: 'test_mail',
      from: owner.email,
      subject: 'How long do refunds take?',
      session_id: null,
      ticket_number: null,
    })
    expect(m.reply).toMatch(/5 business days[\s\S]*Sources:/)
    const mail = await t.smtp.waitFor((x) => x.to.includes(owner.email) && x.subject === 'Re: How long do refunds take?', 60_000)
    expect(mail.text).toMatch(/Sources:/)
    expect((await owner.api.get('/escalations')).body.total).toBe(0)
    expect((await owner.api.get('/chat/sessions?limit=50')).body.sessions).toEqual([])
  })

  it('says a hand-off would happen and opens no ticket; a disabled channel and an empty question are refused', async () => {
    const owner = await createTenant(t)
    const before = await owner.api.post(`/bots/${owner.bot.id}/email/test`, { question: 'Anyone there?' })
    expect(before.status, before.text).toBe(202)
    expect(before.body).toMatchObject({ status: 'ignored', reason: 'channel_disabled' })
    await emailBot(owner)
    // no knowledge: a customer's mail would be handed off with a ticket
    const sent = await owner.api.post(`/bots/${owner.bot.id}/email/test`, { question: 'I want to talk to a human please.' })
    expect((await settled(owner, sent.body.id)) as object).toMatchObject({ status: 'handed_off', reason: 'test_mail_no_ticket', ticket_number: null })
    expect((await owner.api.get('/escalations')).body.total).toBe(0)
    expect((await owner.api.get('/chat/sessions?limit=50')).body.sessions).toEqual([])
    expect((await owner.api.post(`/bots/${owner.bot.id}/email/test`, { question: '   ' })).status).toBe(422)
    expect((await owner.api.post(`/bots/${owner.bot.id}/email/test`, { question: 'x'.repeat(2001) })).status).toBe(422)
    // an agent cannot send one (the bot's e-mail settings are the owners' and admins')
    const agent = await addMember(t, owner, 'agent')
    expect((await agent.api.post(`/bots/${owner.bot.id}/email/test`, { question: 'Hello?' })).status).toBe(403)
    // another workspace's bot is not found
    const other = await createTenant(t)
    expect((await other.api.post(`/bots/${owner.bot.id}/email/test`, { question: 'Hello?' })).status).toBe(404)
  })

  it("a mail from outside that copies a test mail's Message-ID is an ordinary mail: its conversation and ticket are kept", async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const from = uniqueEmail('jane')
    const forged = `<test.${randomBytes(9).toString('hex')}.${randomBytes(12).toString('hex')}@inbound.test>`
    const r = await fetch(ch.url, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: rawMail({ to: ch.address, from, subject: 'Need a person', body: 'I want to talk to a human please.', messageId: forged }),
    })
    expect(r.status).toBe(202)
    const { id } = (await r.json()) as { id: string }
    const m = await settled(owner, id)
    expect(m.reason ?? '').not.toMatch(/test_mail/)
    expect(m.session_id).toBeTruthy()
    const tickets = await until('the ticket', async () => ((await owner.api.get('/escalations')).body.total >= 1 ? true : null), 60_000)
    expect(tickets).toBe(true)
  })
})
