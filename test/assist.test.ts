import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { ChatRequestInfo, FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { REFUNDS_MD, system, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import type { Api } from './helpers/http.js'
import { addMember } from './helpers/team.js'

/**
 * Operator assist (contract "Operator assist"): a suggested reply from the conversation and the bot's retrieval,
 * cited, in the visitor's language, 409 stale when the conversation moved on; a summary kept until a new message;
 * both counted in /analytics/summary (assist, tokens).
 */
let fake: FakeLlm
let t: TestApp
appWithFakeLlm({}, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())

const isSuggest = (r: ChatRequestInfo) => system(r).includes('You draft the next reply')
const isSummary = (r: ChatRequestInfo) => system(r).includes('You summarise a support conversation')
const suggestCalls = () => fake.chatCalls().filter(isSuggest)
const summaryCalls = () => fake.chatCalls().filter(isSummary)

async function widgetSay(visitor: Api, bot: string, sid: string, message: string) {
  const res = await fetch(`${visitor.base}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor.ip },
    body: JSON.stringify({ message }),
  })
  expect(res.status).toBe(200)
  await res.text()
}

/** A visitor who asked the bot, asked for a person, and wrote again in German while waiting. */
async function conversation(owner: Tenant) {
  const visitor = t.api()
  const bot = owner.bot.public_id
  const sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id as string
  // the session's language is its first clear message's (#40), kept: a German visitor from the start
  await widgetSay(visitor, bot, sid, 'Wie lange dauert eine Rückerstattung bei euch?')
  const esc = await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: 'Meine Rückerstattung ist zu spät' })
  expect(esc.status, esc.text).toBe(200)
  await widgetSay(visitor, bot, sid, 'Ich warte schon seit zwei Wochen auf die Rückerstattung für meine Bestellung.')
  const list = await owner.api.get('/escalations')
  const ticket = list.body.tickets.find((x: { session_id: string }) => x.session_id === sid) as { id: string }
  return { visitor, bot, sid, ticketId: ticket.id }
}

let owner: Tenant
let docId: string
beforeAll(async () => {
  owner = await createTenant(t)
  docId = (await withDocs(t, owner, { 'refunds.md': REFUNDS_MD }))['refunds.md']!
})

const today = () => t.clock.now().toISOString().slice(0, 10)

describe('POST /escalations/{id}/suggest', () => {
  it('writes one cited reply in the visitor language from the conversation and the knowledge, never sent by itself', async () => {
    const { ticketId, sid } = await conversation(owner)
    const agent = await addMember(t, owner, 'agent')
    fake.script((r) => (isSuggest(r) ? { text: 'Ihre Rückerstattung wird innerhalb von 5 Werktagen bearbeitet [1].' } : undefined))
    const before = await t.ctx.db.selectFrom('chat_messages').select('id').where('session_id', '=', sid).execute()
    const r = await agent.api.post(`/escalations/${ticketId}/suggest`, { instruction: 'kurz und freundlich' })
    expect(r.status, r.text).toBe(200)
    expect(r.body).toEqual({
      id: expect.any(String),
      text: 'Ihre Rückerstattung wird innerhalb von 5 Werktagen bearbeitet [1].',
      cited: [{ n: 1, document_id: docId, title: expect.stringContaining('Refunds'), url: null }],
      language: 'de',
      based_on_message_id: expect.any(String),
    })
    // one model call: the conversation, the retrieval's sources, the language and the instruction in its prompt
    const calls = suggestCalls()
    expect(calls).toHaveLength(1)
    const sys = system(calls[0]!)
    expect(sys).toContain('Write in German')
    expect(sys).toContain('Refunds are processed within 5 business days')
    expect(sys).toContain('kurz und freundlich')
    expect(calls[0]!.messages.at(-1)!.content).toContain('seit zwei Wochen')
    // nothing reached the conversation
    const after = await t.ctx.db.selectFrom('chat_messages').select('id').where('session_id', '=', sid).execute()
    expect(after).toHaveLength(before.length)
    expect(r.body.based_on_message_id).toBe(
      (await t.ctx.db.selectFrom('chat_messages').select('id').where('session_id', '=', sid).orderBy('created_at', 'desc').executeTakeFirst())!.id,
    )
  })

  it('answers 409 stale when a message arrived while it was written', async () => {
    const { ticketId, visitor, bot, sid } = await conversation(owner)
    fake.script((r) => (isSuggest(r) ? { text: 'Refunds take 5 business days [1].', delayMs: 1500 } : undefined))
    const pending = owner.api.post(`/escalations/${ticketId}/suggest`, {})
    await fake.waitFor(() => suggestCalls().length === 1, 10_000)
    await widgetSay(visitor, bot, sid, 'Hallo? Ist da jemand?')
    const r = await pending
    expect(r.status, r.text).toBe(409)
    expect(r.body.detail.code).toBe('stale')
    // asked again, it is written for the conversation as it is now
    fake.reset()
    fake.script((q) => (isSuggest(q) ? { text: 'Ja, ich bin da.' } : undefined))
    const again = await owner.api.post(`/escalations/${ticketId}/suggest`, {})
    expect(again.status, again.text).toBe(200)
  })

  it('who may post messages may ask: analysts 403, another bot or workspace 404, bounded instruction', async () => {
    const { ticketId } = await conversation(owner)
    fake.script((r) => (isSuggest(r) || isSummary(r) ? { text: 'ok' } : undefined))
    const analyst = await addMember(t, owner, 'analyst')
    for (const path of ['suggest', 'summary']) {
      const r = await analyst.api.post(`/escalations/${ticketId}/${path}`, {})
      expect(r.status, r.text).toBe(403)
    }
    const otherBot = await owner.api.post('/bots', { name: 'Other' })
    const scoped = await addMember(t, owner, 'agent', { botIds: [otherBot.body.id] })
    const stranger = await createTenant(t)
    for (const who of [scoped.api, stranger.api]) {
      for (const path of ['suggest', 'summary']) expect((await who.post(`/escalations/${ticketId}/${path}`, {})).status).toBe(404)
    }
    expect((await owner.api.post('/escalations/00000000-0000-4000-8000-000000000000/suggest', {})).status).toBe(404)
    const long = await owner.api.post(`/escalations/${ticketId}/suggest`, { instruction: 'x'.repeat(501) })
    expect(long.status).toBe(422)
    expect(JSON.stringify(long.body)).toContain('instruction')
    expect((await t.api().post(`/escalations/${ticketId}/suggest`, {})).status).toBe(401)
    expect(suggestCalls()).toHaveLength(0)
  })
})

describe('POST /escalations/{id}/summary', () => {
  it('is kept until a new message arrives, then written again', async () => {
    const { ticketId, visitor, bot, sid } = await conversation(owner)
    let n = 0
    fake.script((r) => (isSummary(r) ? { text: `Wants: a late refund.\nBot said: 5 business days.\nOpen: where it is (${++n})` } : undefined))
    const first = await owner.api.post(`/escalations/${ticketId}/summary`)
    expect(first.status, first.text).toBe(200)
    expect(first.body).toEqual({
      summary: expect.stringContaining('Wants: a late refund'),
      language: 'en',
      message_count: expect.any(Number),
      generated_at: expect.any(String),
    })
    expect(summaryCalls()[0]!.messages.at(-1)!.content).toContain('Meine Rückerstattung ist zu spät')
    const again = await owner.api.post(`/escalations/${ticketId}/summary`)
    expect(again.body).toEqual(first.body)
    expect(summaryCalls()).toHaveLength(1)
    await widgetSay(visitor, bot, sid, 'Die Bestellnummer ist 4711.')
    const fresh = await owner.api.post(`/escalations/${ticketId}/summary`)
    expect(fresh.status).toBe(200)
    expect(fresh.body.message_count).toBe(first.body.message_count + 1)
    expect(fresh.body.summary).toContain('(2)')
    expect(summaryCalls()).toHaveLength(2)
  })
})

describe('used suggestions and the figures', () => {
  it('a message sent with suggestion_id counts it as used, unedited when the text is the same; analytics counts them with their tokens', async () => {
    const tenant = await createTenant(t)
    await withDocs(t, tenant, { 'refunds.md': REFUNDS_MD })
    const { ticketId } = await conversation(tenant)
    fake.script((r) =>
      isSuggest(r) ? { text: 'Refunds take 5 business days [1].', usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } } : undefined,
    )
    fake.script((r) => (isSummary(r) ? { text: 'Wants: refund.', usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } } : undefined))
    const base = await tenant.api.get(`/analytics/summary?from=${today()}&to=${today()}`)
    expect(base.status, base.text).toBe(200)
    expect(base.body.assist).toEqual({ suggestions: 0, used: 0, used_unedited: 0, summaries: 0 })

    const a = (await tenant.api.post(`/escalations/${ticketId}/suggest`, {})).body
    const b = (await tenant.api.post(`/escalations/${ticketId}/suggest`, { instruction: 'shorter' })).body
    await tenant.api.post(`/escalations/${ticketId}/suggest`, {})
    expect((await tenant.api.post(`/escalations/${ticketId}/summary`)).status).toBe(200)

    const sendA = await tenant.api.post(`/escalations/${ticketId}/messages`, { content: `  ${a.text} `, suggestion_id: a.id })
    expect(sendA.status, sendA.text).toBe(201)
    const sendB = await tenant.api.post(`/escalations/${ticketId}/messages`, { content: `${b.text} Anything else?`, suggestion_id: b.id })
    expect(sendB.status, sendB.text).toBe(201)
    // sending the same suggestion again counts it once
    expect((await tenant.api.post(`/escalations/${ticketId}/messages`, { content: 'again', suggestion_id: a.id })).status).toBe(201)
    // another ticket's suggestion is not found, and nothing is sent
    const other = await conversation(tenant)
    const foreign = await tenant.api.post(`/escalations/${other.ticketId}/messages`, { content: 'x', suggestion_id: a.id })
    expect(foreign.status).toBe(404)
    expect(foreign.text).toContain('Suggestion not found')

    const s = await tenant.api.get(`/analytics/summary?from=${today()}&to=${today()}`)
    expect(s.body.assist).toEqual({ suggestions: 3, used: 2, used_unedited: 1, summaries: 1 })
    expect(s.body.tokens - base.body.tokens).toBeGreaterThanOrEqual(3 * 120 + 60)
    // another workspace sees none of it
    expect((await owner.api.get(`/analytics/summary?from=${today()}&to=${today()}`)).body.assist.used).toBe(0)
  })
})

describe('learning from people', () => {
  it("a resolved ticket's operator answer becomes an operator FAQ candidate: redacted, deduplicated, for review", async () => {
    const tenant = await createTenant(t)
    const first = await conversation(tenant)
    const question = (await tenant.api.get(`/escalations/${first.ticketId}`)).body.primary_question as string
    const answer = 'Your refund was sent today; if it has not arrived in 3 days write to jane.doe@example.com and we check it with the bank.'
    expect((await tenant.api.post(`/escalations/${first.ticketId}/messages`, { content: answer })).status).toBe(201)
    const resolved = await tenant.api.post(`/escalations/${first.ticketId}/resolve`, { resolution_text: 'Done, anything else?' })
    expect(resolved.status, resolved.text).toBe(200)

    const list = await tenant.api.get('/knowledge/faq?source=operator')
    expect(list.status, list.text).toBe(200)
    expect(list.body.items).toHaveLength(1)
    const faq = list.body.items[0]
    expect(faq).toMatchObject({ source: 'operator', approved: false })
    expect(faq.question.replace(/\?$/, '')).toBe(
      question
        .replace(/\s+/g, ' ')
        .trim()
        .replace(/[.!:?]+$/, ''),
    )
    expect(faq.answer).toContain('Your refund was sent today')
    expect(faq.answer).not.toContain('jane.doe@example.com')
    expect(list.body.pending_count).toBeGreaterThanOrEqual(1)
    expect((await tenant.api.get('/knowledge/faq?source=docs')).body.items.some((f: { source: string }) => f.source === 'operator')).toBe(false)

    // the same question answered again adds nothing
    const second = await conversation(tenant)
    await tenant.api.post(`/escalations/${second.ticketId}/messages`, { content: 'Refunds take five business days after the return arrives.' })
    expect((await tenant.api.post(`/escalations/${second.ticketId}/resolve`, { resolution_text: 'Resolved.' })).status).toBe(200)
    expect((await tenant.api.get('/knowledge/faq?source=operator')).body.items).toHaveLength(1)
    // reviewed like the others
    expect((await tenant.api.post(`/knowledge/faq/${faq.id}/approve`)).status).toBe(200)
    expect((await tenant.api.get('/knowledge/faq?source=operator&approved=true')).body.items).toHaveLength(1)
  })
})
