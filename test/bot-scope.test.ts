import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clusterTerms, groupQuestions, tfidf } from '../src/modules/gap-analyzer/cluster.fns.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { WebhookReceiver } from './fakes/webhook-receiver.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, REFUNDS_MD, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { addMember, type Member } from './helpers/team.js'
import { until } from './helpers/wait.js'

/**
 * A member limited to some bots (bot_ids) sees nothing of the other bots: every route that takes or returns
 * bot-owned data is called by a member limited to bot A with an item of bot B, and must answer 404 or leave
 * it out. And text operators write reaches webhook payloads, Slack and exports redacted, as visitor text does.
 */
let t: TestApp
let fake: FakeLlm
let owner: Tenant
let stranger: Tenant
let analyst: Member
let agent: Member
let botA: { id: string; public_id: string }
let botB: { id: string; public_id: string }
const items = { sessionA: '', sessionB: '', ticketA: '', ticketB: '', answerB: '' }
const receiver = new WebhookReceiver()
const slack = new WebhookReceiver()
const OPERATOR_EMAIL = 'refunds.desk@shop.example'
const A_QUESTION = 'How do I reset my password?'
const B_QUESTION = 'How do I reset my password for project Zeta?'

const today = () => t.clock.now().toISOString().slice(0, 10)

async function converse(bot: { public_id: string }, question: string, handOff: boolean) {
  const chat = await chatApi(t, owner).post('/chat', { question, bot_public_id: bot.public_id })
  expect(chat.status, chat.text).toBe(200)
  if (!handOff) return { session: chat.body.session_id as string, ticket: '' }
  const esc = await chatApi(t, owner).post(`/chat/${chat.body.session_id}/escalate`, { trigger: 'user_request' })
  expect(esc.status, esc.text).toBe(200)
  const list = await owner.api.get('/escalations?limit=100')
  const ticket = list.body.tickets.find((x: { ticket_number: string }) => x.ticket_number === esc.body.ticket_number)
  return { session: chat.body.session_id as string, ticket: ticket.id as string }
}

async function exportDone(body: Record<string, unknown>) {
  const r = await owner.api.post('/exports', { kind: 'messages', format: 'jsonl', from: today(), to: today(), ...body })
  expect(r.status, r.text).toBe(202)
  await until('the export', async () => ['done', 'failed'].includes((await owner.api.get(`/exports/${r.body.id}`)).body.status))
  return r.body.id as string
}

beforeAll(async () => {
  fake = await startFakeLlm()
  await receiver.start()
  await slack.start()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true' } })
  owner = await createTenant(t)
  stranger = await createTenant(t)
  await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
  botA = owner.bot
  const created = await owner.api.post('/bots', { name: 'Zeta bot' })
  expect(created.status, created.text).toBe(201)
  botB = created.body
  const ep = await owner.api.post('/webhooks/endpoints', {
    url: receiver.url,
    events: ['ticket.replied', 'ticket.resolved', 'feedback.received'],
  })
  expect(ep.status, ep.text).toBe(201)
  receiver.secrets.push(ep.body.secret)
  const sl = await owner.api.post('/webhooks/endpoints', { url: slack.url, events: ['ticket.replied'], kind: 'slack' })
  expect(sl.status, sl.text).toBe(201)
  ;({ session: items.sessionA, ticket: items.ticketA } = await converse(botA, A_QUESTION, true))
  ;({ session: items.sessionB, ticket: items.ticketB } = await converse(botB, B_QUESTION, true))
  await converse(botA, A_QUESTION, false)
  const logB = await owner.api.get(`/chat/logs/session/${items.sessionB}`)
  items.answerB = logB.body.messages.find((m: { role: string }) => m.role === 'assistant').id
  analyst = await addMember(t, owner, 'analyst', { botIds: [botA.id] })
  agent = await addMember(t, owner, 'agent', { botIds: [botA.id], canViewOriginal: false })
}, 180_000)

afterAll(async () => {
  await t?.close()
  await fake?.close()
  await receiver.close()
  await slack.close()
})

describe('a member limited to bot A, with items of bot B', () => {
  it('gets 404 for every route that reads or changes one of them', async () => {
    // (owners and admins see every bot: only editors, agents and analysts can be limited)
    const reads: [Member, string][] = [
      [agent, `/bots/${botB.id}`],
      [agent, `/bots/${botB.id}/disclosure`],
      [agent, `/escalations/${items.ticketB}`],
      [agent, `/chat/logs/session/${items.sessionB}`],
      [agent, `/chat/history/${items.sessionB}`],
      [agent, `/auth/me/widget-token?bot_id=${botB.public_id}`],
      [analyst, `/analytics/summary?from=${today()}&to=${today()}&bot_id=${botB.id}`],
      [analyst, `/analytics/timeseries?metric=conversations&from=${today()}&to=${today()}&bot_id=${botB.id}`],
      [analyst, `/analytics/unanswered?bot_id=${botB.id}`],
    ]
    for (const [m, path] of reads) expect((await m.api.get(path)).status, `${m.role} ${path}`).toBe(404)
    const writes: [Member, string, string, Record<string, unknown>][] = [
      [agent, 'patch', `/escalations/${items.ticketB}`, { assignee_user_id: agent.userId }],
      [agent, 'post', `/escalations/${items.ticketB}/resolve`, { resolution_text: 'Done' }],
      [agent, 'post', `/escalations/${items.ticketB}/delete-original`, {}],
      [agent, 'post', `/chat/logs/session/${items.sessionB}/delete-original`, {}],
      [agent, 'post', `/chat/messages/${items.answerB}/feedback`, { feedback: 'down' }],
      [analyst, 'post', '/exports', { kind: 'messages', format: 'csv', from: today(), to: today(), bot_ids: [botB.id] }],
    ]
    for (const [m, method, path, body] of writes) {
      const res = await (method === 'patch' ? m.api.patch(path, body) : m.api.post(path, body))
      expect(res.status, `${m.role} ${method} ${path}: ${res.text}`).toBe(404)
    }
    // and its own bot's are there
    expect((await agent.api.get(`/escalations/${items.ticketA}`)).status).toBe(200)
    expect((await analyst.api.get(`/analytics/unanswered?bot_id=${botA.id}`)).status).toBe(200)
  })

  it('finds them left out of every list', async () => {
    const api = agent.api
    expect((await api.get('/bots')).body.items.map((b: { id: string }) => b.id)).toEqual([botA.id])
    const tickets = (await api.get('/escalations')).body.tickets.map((x: { id: string }) => x.id)
    expect(tickets).toContain(items.ticketA)
    expect(tickets).not.toContain(items.ticketB)
    const sessions = (await api.get('/chat/sessions?limit=100')).body.sessions.map((s: { session_id: string }) => s.session_id)
    expect(sessions).toContain(items.sessionA)
    expect(sessions).not.toContain(items.sessionB)
    const bad = await api.get('/chat/bad-answers')
    expect(bad.status).toBe(200)
    expect(JSON.stringify(bad.body)).not.toContain(items.sessionB)
  })
})

describe('exports', () => {
  it("a limited member lists, reads and downloads only exports whose bots are all theirs; the owner's all-bot file is a 404", async () => {
    const all = await exportDone({})
    const onlyB = await exportDone({ bot_ids: [botB.id] })
    const both = await exportDone({ bot_ids: [botA.id, botB.id] })
    const onlyA = await exportDone({ bot_ids: [botA.id] })
    for (const member of [analyst]) {
      const list = await member.api.get('/exports')
      expect(list.status).toBe(200)
      expect(list.body.items.map((e: { id: string }) => e.id)).toEqual([onlyA])
      for (const id of [all, onlyB, both]) {
        expect((await member.api.get(`/exports/${id}`)).status, id).toBe(404)
        expect((await member.api.get(`/exports/${id}/download`)).status, id).toBe(404)
      }
      expect((await member.api.get(`/exports/${onlyA}`)).status).toBe(200)
      const file = await fetch(`${member.api.base}/exports/${onlyA}/download`, { headers: { authorization: `Bearer ${member.token}` } })
      expect(file.status).toBe(200)
      const text = await file.text()
      expect(text).toContain(items.sessionA)
      expect(text).not.toContain(items.sessionB)
    }
    // the owner sees them all
    expect((await owner.api.get('/exports')).body.items).toHaveLength(4)
  })
})

describe('GET /analytics/unanswered', () => {
  it("builds a limited member's topics from their bots' questions only: label, count and examples", async () => {
    // the workspace's gap clusters both bots' questions, and quotes bot B's visitor
    const groups = await groupQuestions([B_QUESTION, A_QUESTION, A_QUESTION])
    const { vectors } = tfidf(groups)
    const terms = clusterTerms(
      groups.map((_, i) => i),
      vectors,
      groups.map((g) => g.members.length),
    )
    const now = t.clock.now()
    await t.ctx.db
      .insertInto('gaps')
      .values({
        tenant_id: owner.tenantId,
        source: 'mode_b',
        key: 'password-reset',
        label: B_QUESTION,
        classification: 'uncovered',
        status: 'active',
        question_count: 3,
        example_questions: JSON.stringify([B_QUESTION, A_QUESTION]),
        terms: JSON.stringify(terms),
        created_at: now,
        updated_at: now,
        coverage_score: null,
        dismiss_reason: null,
        signal_weight: null,
        linked_gap_id: null,
        first_seen_run_id: null,
        last_seen_run_id: null,
        last_question_at: now,
      })
      .execute()
    const whole = await owner.api.get('/analytics/unanswered')
    expect(whole.body.items[0]).toMatchObject({ label: B_QUESTION, question_count: 3 })

    for (const view of [await analyst.api.get('/analytics/unanswered'), await owner.api.get(`/analytics/unanswered?bot_id=${botA.id}`)]) {
      expect(view.status, view.text).toBe(200)
      expect(view.body.items).toHaveLength(1)
      expect(view.body.items[0]).toMatchObject({ label: A_QUESTION, question_count: 2, classification: 'uncovered' })
      expect(view.body.items[0].examples).toEqual([{ question: A_QUESTION, session_id: expect.any(String) }])
      expect(JSON.stringify(view.body)).not.toContain('Zeta')
    }
    const onlyB = await owner.api.get(`/analytics/unanswered?bot_id=${botB.id}`)
    expect(onlyB.body.items[0]).toMatchObject({ label: B_QUESTION, question_count: 1 })
  })

  it("answers 404 for another workspace's bot, as summary and timeseries do", async () => {
    for (const path of ['/analytics/unanswered', '/analytics/summary', '/analytics/timeseries']) {
      const q = path.endsWith('unanswered') ? '' : `&from=${today()}&to=${today()}${path.endsWith('timeseries') ? '&metric=conversations' : ''}`
      const res = await owner.api.get(`${path}?bot_id=${stranger.bot.id}${q}`)
      expect(res.status, `${path}: ${res.text}`).toBe(404)
    }
  })
})

describe('operator-written text', () => {
  it('reaches webhook payloads, Slack, the messages export and views without originals redacted', async () => {
    const text = `Your refund is on its way. Questions? Write to ${OPERATOR_EMAIL}.`
    const resolved = await owner.api.post(`/escalations/${items.ticketA}/resolve`, { resolution_text: text })
    expect(resolved.status, resolved.text).toBe(200)
    const log = await owner.api.get(`/chat/logs/session/${items.sessionA}`)
    const answer = log.body.messages.find((m: { role: string; from_operator: boolean }) => m.role === 'assistant' && !m.from_operator)
    const fb = await owner.api.post(`/chat/messages/${answer.id}/feedback`, { feedback: 'down', ideal_answer: `Mail ${OPERATOR_EMAIL} for refunds.` })
    expect(fb.status, fb.text).toBe(200)

    await until('the payloads', async () => ['ticket.replied', 'ticket.resolved', 'feedback.received'].every((x) => receiver.ofType(x).length > 0))
    await until('the Slack message', async () => slack.received.length > 0)
    expect(receiver.ofType('ticket.replied')[0]!.json.data.reply).toMatch(/Write to \[EMAIL/)
    expect(receiver.ofType('ticket.resolved')[0]!.json.data.resolution_text).toMatch(/Write to \[EMAIL/)
    expect(receiver.ofType('feedback.received')[0]!.json.data.ideal_answer).toMatch(/^Mail \[EMAIL/)
    for (const r of [...receiver.received, ...slack.received]) expect(r.body).not.toContain(OPERATOR_EMAIL)

    const id = await exportDone({ bot_ids: [botA.id] })
    const file = await fetch(`${owner.api.base}/exports/${id}/download`, { headers: { authorization: `Bearer ${owner.token}` } })
    const rows = (await file.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    const operatorRow = rows.find((r) => r.role === 'operator')
    expect(operatorRow.content).toMatch(/Write to \[EMAIL/)
    expect(JSON.stringify(rows)).not.toContain(OPERATOR_EMAIL)

    // the dashboard: redacted for a role without originals, as written on request for one with them
    const seen = await agent.api.get(`/chat/logs/session/${items.sessionA}`)
    const op = seen.body.messages.find((m: { from_operator: boolean }) => m.from_operator)
    expect(op.content).toMatch(/Write to \[EMAIL/)
    expect(op.content_original_available).toBe(true)
    expect((await agent.api.get(`/chat/logs/session/${items.sessionA}?include_original=true`)).status).toBe(403)
    const original = await owner.api.get(`/chat/logs/session/${items.sessionA}?include_original=true`)
    expect(original.body.messages.find((m: { from_operator: boolean }) => m.from_operator).content_original).toBe(text)
    // and the conversation itself keeps what the operator wrote to the visitor
    const history = await owner.api.get(`/chat/history/${items.sessionA}`)
    expect(history.body.messages.find((m: { from_operator: boolean }) => m.from_operator).content).toBe(text)
  })
})
