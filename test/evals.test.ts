import { XMLParser } from 'fast-xml-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, isGuard, REFUNDS_MD, SHIPPING_MD, system, userText, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import type { Api } from './helpers/http.js'
import { handedOff } from './helpers/live.js'
import { until } from './helpers/wait.js'
import { WebhookReceiver } from './fakes/webhook-receiver.js'
import { WorkspaceApi } from './fakes/workspace-api.js'
import { orderStatus } from './helpers/actions.js'

/**
 * Evaluations (contract "Evaluations (decided)"): a workspace's own test questions run through the real turn
 * pipeline (the fake model) as dry runs, checked deterministically, compared run to run; nothing of a run is
 * left in the conversations, tickets or question log.
 */
let fake: FakeLlm
let t: TestApp
let owner: Tenant
let docs: Record<string, string>

const REFUNDS_URL = 'https://help.example.com/refunds'
const REFUNDS_PAGE = `---
title: Refund policy
canonical: ${REFUNDS_URL}
---
${REFUNDS_MD}`
const OFF_TOPIC = 'Does the quantum flux capacitor support xylophone telemetry?'

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true' } })
  owner = await createTenant(t)
  docs = await withDocs(t, owner, { 'refunds.md': REFUNDS_PAGE, 'shipping.md': SHIPPING_MD })
}, 300_000)
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const newCase = async (api: Api, body: Record<string, unknown>) => {
  const r = await api.post('/evals/cases', body)
  expect(r.status, r.text).toBe(201)
  return r.body as { id: string }
}

/** Starts a run and waits for it to finish; returns the run. */
async function runToEnd(api: Api, body: Record<string, unknown> = {}) {
  const started = await api.post('/evals/runs', body)
  expect(started.status, started.text).toBe(202)
  expect(started.body.status).toBe('queued')
  return until(
    'the evaluation run',
    async () => {
      const r = await api.get(`/evals/runs/${started.body.id}`)
      return r.body.status === 'done' || r.body.status === 'failed' ? r.body : null
    },
    60_000,
  )
}

const resultOf = (run: any, id: string) => run.results.find((r: any) => r.case_id === id)

describe('evaluation cases', () => {
  it('creates, lists by tag, changes and deletes a case; a bad regex or outcome is a 422 naming the field', async () => {
    const api = owner.api
    const c = await newCase(api, { question: 'How long do refunds take?', expect: { outcome: 'answered', facts: ['/\\d+ business days/i'] }, tags: ['crud'] })
    expect((await api.get('/evals/cases?tag=crud')).body.items.map((x: any) => x.id)).toEqual([c.id])
    expect((await api.get('/evals/cases?tag=nothing')).body.items).toEqual([])
    const changed = await api.patch(`/evals/cases/${c.id}`, { tags: ['crud', 'changed'] })
    expect(changed.status, changed.text).toBe(200)
    expect(changed.body).toMatchObject({ question: 'How long do refunds take?', tags: ['crud', 'changed'], expect: { facts: ['/\\d+ business days/i'] } })

    const badRegex = await api.post('/evals/cases', { question: 'x', expect: { outcome: 'answered', facts: ['/([a-z/'] } })
    expect(badRegex.status).toBe(422)
    expect(badRegex.body.detail[0].loc).toEqual(['body', 'expect', 'facts', 0])
    const badOutcome = await api.post('/evals/cases', { question: 'x', expect: { outcome: 'maybe' } })
    expect(badOutcome.status).toBe(422)
    expect(JSON.stringify(badOutcome.body.detail)).toContain('outcome')

    expect((await api.delete(`/evals/cases/${c.id}`)).status).toBe(204)
    expect((await api.delete(`/evals/cases/${c.id}`)).status).toBe(404)
  })

  it('imports CSV and JSONL, creating the good lines and naming each bad one by its line number', async () => {
    const csv = [
      'question,expected_outcome,sources,facts,tags',
      `How long do refunds take?,answered,${docs['refunds.md']}|${REFUNDS_URL},5 business days|/refund/i,imported|csv`,
      'Something,sometimes,,,imported',
      'Broken regex,answered,,/([/,imported',
      `${OFF_TOPIC},handed_off,,,imported`,
    ].join('\n')
    const form = new FormData()
    form.append('file', new Blob([csv]), 'cases.csv')
    const r = await owner.api.post('/evals/cases/import', form)
    expect(r.status, r.text).toBe(200)
    expect(r.body.created).toBe(2)
    expect(r.body.errors.map((e: any) => e.line)).toEqual([3, 4])
    expect(r.body.errors[0].message).toMatch(/outcome/)
    expect(r.body.errors[1].message).toMatch(/facts.*regular expression/i)
    const imported = (await owner.api.get('/evals/cases?tag=csv')).body.items
    expect(imported[0]).toMatchObject({
      expect: { sources_any: [docs['refunds.md'], REFUNDS_URL], facts: ['5 business days', '/refund/i'] },
      tags: ['imported', 'csv'],
    })

    const jsonl = ['{"question":"Shipping time?","expect":{"outcome":"answered"},"tags":["jsonl"]}', '{not json', '', '{"expect":{"outcome":"answered"}}'].join(
      '\n',
    )
    const form2 = new FormData()
    form2.append('file', new Blob([jsonl]), 'cases.jsonl')
    const r2 = await owner.api.post('/evals/cases/import', form2)
    expect(r2.status, r2.text).toBe(200)
    expect(r2.body).toMatchObject({ created: 1, errors: [{ line: 2 }, { line: 4 }] })
    expect(r2.body.errors[1].message).toMatch(/question/)
    for (const c of (await owner.api.get('/evals/cases?tag=imported')).body.items) await owner.api.delete(`/evals/cases/${c.id}`)
    for (const c of (await owner.api.get('/evals/cases?tag=jsonl')).body.items) await owner.api.delete(`/evals/cases/${c.id}`)
  })

  it('makes a case from a logged conversation: its last question, answered or handed off as it went', async () => {
    const answered = await chatApi(t, owner).post('/chat', { question: 'How long does standard shipping to Germany take?' })
    expect(answered.status, answered.text).toBe(200)
    const c = await owner.api.post(`/evals/cases/from-session/${answered.body.session_id}`, {})
    expect(c.status, c.text).toBe(201)
    expect(c.body).toMatchObject({ question: 'How long does standard shipping to Germany take?', expect: { outcome: 'answered' } })
    const handed = await chatApi(t, owner).post('/chat', { question: OFF_TOPIC })
    const h = await owner.api.post(`/evals/cases/from-session/${handed.body.session_id}`, {})
    expect(h.status, h.text).toBe(201)
    expect(h.body.expect.outcome).toBe('handed_off')
    expect((await owner.api.post('/evals/cases/from-session/00000000-0000-4000-8000-000000000000', {})).status).toBe(404)
    // a ticket from the widget's "talk to a human" box, with a note and no chat message: the note is the question
    const { sid } = await handedOff(t, owner, { note: 'Can I change the delivery address of order 1042?' })
    const fromTicket = await owner.api.post(`/evals/cases/from-session/${sid}`, {})
    expect(fromTicket.status, fromTicket.text).toBe(201)
    expect(fromTicket.body).toMatchObject({ question: 'Can I change the delivery address of order 1042?', expect: { outcome: 'handed_off' } })
    // a conversation with no question at all is a 422 naming the session
    const empty = (await t.api().post('/widget/session/init', { bot_id: owner.bot.public_id })).body.session_id as string
    const none = await owner.api.post(`/evals/cases/from-session/${empty}`, {})
    expect(none.status, none.text).toBe(422)
    for (const id of [c.body.id, h.body.id, fromTicket.body.id]) await owner.api.delete(`/evals/cases/${id}`)
  })
})

describe('evaluation runs', () => {
  it('checks outcome, cited sources (by id and by URL), facts (text and regex), forbidden texts and a hand-off; JUnit parses', async () => {
    const api = owner.api
    const byId = await newCase(api, {
      question: 'How long do refunds take?',
      expect: { outcome: 'answered', sources_any: [docs['refunds.md']], facts: ['/\\b5 business days\\b/i'], forbidden: ['30 days'] },
      tags: ['run'],
    })
    const byUrl = await newCase(api, {
      question: 'How long do refunds take?',
      expect: { outcome: 'answered', sources_any: [REFUNDS_URL], facts: ['business DAYS'] },
      tags: ['run'],
    })
    const forbidden = await newCase(api, {
      question: 'How long do refunds take?',
      expect: { outcome: 'answered', forbidden: ['5 business days'] },
      tags: ['run'],
    })
    const handOff = await newCase(api, { question: OFF_TOPIC, expect: { outcome: 'handed_off' }, tags: ['run'] })
    const wrongSource = await newCase(api, {
      question: 'How long do refunds take?',
      expect: { outcome: 'answered', sources_any: [docs['shipping.md']] },
      tags: ['run'],
    })

    const run = await runToEnd(api, { tags: ['run'] })
    expect(run.status, JSON.stringify(run)).toBe('done')
    expect(run.partial).toBe(false)
    expect(run.progress).toBe(1)
    expect(run.totals).toEqual({ cases: 5, passed: 3, failed: 2, flaky: 0 })
    expect(run.pins).toMatchObject({ chat_model: expect.any(String), embedding_model: expect.any(String), prompt_version: expect.any(String) })
    expect(run.pins.knowledge_version).toMatch(/^[0-9a-f]{16}$/)

    const a = resultOf(run, byId.id)
    expect(a).toMatchObject({ passed: true, outcome: 'answered', reached: true })
    expect(a.answer).toMatch(/5 business days/)
    expect(a.cited).toEqual(expect.arrayContaining([docs['refunds.md'], REFUNDS_URL]))
    expect(a.checks.map((c: any) => c.name)).toEqual(['outcome', 'sources_any', 'fact: /\\b5 business days\\b/i', 'forbidden: 30 days'])
    expect(resultOf(run, byUrl.id).passed).toBe(true)
    const f = resultOf(run, forbidden.id)
    expect(f.passed).toBe(false)
    expect(f.checks.find((c: any) => !c.passed)).toMatchObject({ name: 'forbidden: 5 business days', detail: 'present in the answer' })
    expect(resultOf(run, handOff.id)).toMatchObject({ passed: true, outcome: 'handed_off', cited: [] })
    const w = resultOf(run, wrongSource.id)
    expect(w).toMatchObject({ passed: false, reached: expect.any(Boolean) })
    expect(w.checks.find((c: any) => c.name === 'sources_any').passed).toBe(false)

    const junit = await api.get(`/evals/runs/${run.id}?format=junit`)
    expect(junit.status).toBe(200)
    expect(junit.headers.get('content-type')).toMatch(/application\/xml/)
    const parsed = new XMLParser({ ignoreAttributes: false }).parse(junit.text)
    const cases = parsed.testsuites.testsuite.testcase
    expect(cases).toHaveLength(5)
    const failures = cases.filter((c: any) => c.failure)
    expect(failures).toHaveLength(2)
    expect(failures.map((c: any) => c.failure['@_message']).join('\n')).toMatch(/forbidden: 5 business days: present in the answer/)

    const list = await api.get('/evals/runs')
    expect(list.body.items[0]).toMatchObject({ id: run.id, status: 'done', totals: run.totals, pins: run.pins })
    for (const c of [byId, byUrl, forbidden, handOff, wrongSource]) await api.delete(`/evals/cases/${c.id}`)
  }, 90_000)

  it('repeats a case: passed only when every repeat passes; a case that passes some is flaky', async () => {
    const marker = 'refunds flakily'
    let turns = 0
    fake.script((req) => {
      const q = userText(req)
      if (!q.includes(marker)) return undefined
      if (isGuard({ ...req, request: null as any })) {
        turns++
        return undefined
      }
      if (req.json || !system(req).includes('=== Sources ===')) return undefined
      return { text: turns % 2 === 1 ? 'Refunds are processed within 5 business days [1].' : 'Refunds take a while [1].' }
    })
    const c = await newCase(owner.api, {
      question: `How long do ${marker} take?`,
      expect: { outcome: 'answered', facts: ['5 business days'] },
      tags: ['flaky'],
    })
    const run = await runToEnd(owner.api, { tags: ['flaky'], repeat: 4 })
    const r = resultOf(run, c.id)
    expect(r.runs).toHaveLength(4)
    expect(r.runs.some((x: any) => x.passed)).toBe(true)
    expect(r).toMatchObject({ passed: false, flaky: true })
    expect(run.totals).toEqual({ cases: 1, passed: 0, failed: 1, flaky: 1 })
    await owner.api.delete(`/evals/cases/${c.id}`)
  }, 90_000)

  it("one run at a time per workspace (409 while one is queued or running); another workspace's run is a 404", async () => {
    // a case whose answer takes a while keeps the first run running
    fake.script((req) => (userText(req).includes('slowly answered') ? { delayMs: 1500 } : undefined))
    const slow = await newCase(owner.api, { question: 'How long are refunds slowly answered?', expect: { outcome: 'answered' }, tags: ['slow'] })
    const first = await owner.api.post('/evals/runs', { tags: ['slow'] })
    expect(first.status).toBe(202)
    const second = await owner.api.post('/evals/runs', {})
    expect(second.status).toBe(409)
    await until('the first run', async () => ['done', 'failed'].includes((await owner.api.get(`/evals/runs/${first.body.id}`)).body.status))
    const other = await createTenant(t)
    expect((await other.api.get(`/evals/runs/${first.body.id}`)).status).toBe(404)
    expect((await other.api.get(`/evals/runs/${first.body.id}/diff?against=${first.body.id}`)).status).toBe(404)
    // once it is done, the next may start
    expect((await runToEnd(owner.api, { tags: ['slow'] })).status).toBe('done')
    await owner.api.delete(`/evals/cases/${slow.id}`)
  }, 60_000)
})

describe('runs are apart from real traffic; diffs', () => {
  it('a deleted document breaks exactly the cases citing it, and a run leaves no conversations, messages, tickets or question log behind', async () => {
    const ws = await createTenant(t)
    const receiver = await new WebhookReceiver().start()
    const events = ['eval.run.completed', 'conversation.ended', 'conversation.handed_off', 'message.created', 'ticket.created']
    const hook = await ws.api.post('/webhooks/endpoints', { url: receiver.url, events })
    expect(hook.status, hook.text).toBe(201)
    const d = await withDocs(t, ws, { 'refunds.md': REFUNDS_PAGE, 'shipping.md': SHIPPING_MD })
    const refunds = await newCase(ws.api, { question: 'How long do refunds take?', expect: { outcome: 'answered', sources_any: [d['refunds.md']] } })
    const shipping = await newCase(ws.api, {
      question: 'How long does standard shipping to Germany take?',
      expect: { outcome: 'answered', sources_any: [d['shipping.md']], facts: ['3 to 4 working days'] },
    })
    const off = await newCase(ws.api, { question: OFF_TOPIC, expect: { outcome: 'handed_off' } })
    const before = await runToEnd(ws.api)
    expect(before.totals, JSON.stringify(before.results)).toEqual({ cases: 3, passed: 3, failed: 0, flaky: 0 })

    expect((await ws.api.delete(`/documents/${d['refunds.md']}`)).status).toBe(204)
    const after = await runToEnd(ws.api)
    expect(after.pins.knowledge_version).not.toBe(before.pins.knowledge_version)
    const diff = await ws.api.get(`/evals/runs/${after.id}/diff?against=${before.id}`)
    expect(diff.status, diff.text).toBe(200)
    expect(diff.body).toEqual({ fixed: [], broken: [refunds.id], still_passing: [shipping.id, off.id], still_failing: [], missing: [] })

    for (const table of ['chat_sessions', 'chat_messages', 'escalation_tickets', 'question_log'] as const) {
      const rows = await t.ctx.db.selectFrom(table).select('tenant_id').where('tenant_id', '=', ws.tenantId).execute()
      expect(rows, table).toEqual([])
    }
    // the only events of two runs are their completions
    await until('eval.run.completed deliveries', async () => receiver.ofType('eval.run.completed').length >= 2)
    expect(receiver.received.map((r) => r.json.type)).toEqual(['eval.run.completed', 'eval.run.completed'])
    expect(receiver.ofType('eval.run.completed')[1]!.json.data).toMatchObject({ run_id: after.id, partial: false, totals: after.totals })
    await receiver.close()
  }, 120_000)
})

describe('the knowledge_version pin', () => {
  it('changes when an approved FAQ entry changes an answer, and not for a candidate nobody approved', async () => {
    const ws = await createTenant(t)
    await withDocs(t, ws, { 'refunds.md': REFUNDS_PAGE })
    await newCase(ws.api, { question: 'How long do refunds take?', expect: { outcome: 'answered' } })
    const pin = async () => (await runToEnd(ws.api)).pins.knowledge_version as string
    const first = await pin()
    const now = new Date()
    const faq = await t.ctx.db
      .insertInto('faq_candidates')
      .values({
        tenant_id: ws.tenantId,
        question: 'How long do refunds take?',
        answer: 'Five days.',
        source: 'logs',
        question_key: 'refund take',
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    expect(await pin()).toBe(first)
    expect((await ws.api.post(`/knowledge/faq/${faq.id}/approve`)).status).toBe(200)
    const approved = await pin()
    expect(approved).not.toBe(first)
    const edited = await ws.api.put(`/knowledge/faq/${faq.id}`, { answer: 'Ten working days.' })
    expect(edited.status, edited.text).toBe(200)
    const afterEdit = await pin()
    expect(afterEdit).not.toBe(approved)
    expect(afterEdit).not.toBe(first)
  }, 180_000)

  it('shows whether an expected source reached the model only for a case that names one', async () => {
    const ws = await createTenant(t)
    const d = await withDocs(t, ws, { 'refunds.md': REFUNDS_PAGE })
    const named = await newCase(ws.api, { question: 'How long do refunds take?', expect: { outcome: 'answered', sources_any: [d['refunds.md']] } })
    const unnamed = await newCase(ws.api, { question: 'How long do refunds take to arrive?', expect: { outcome: 'answered' } })
    const run = await runToEnd(ws.api)
    expect(resultOf(run, named.id).reached).toBe(true)
    expect(resultOf(run, unnamed.id).reached).toBeNull()
  }, 120_000)
})

describe('the token budget of a run', () => {
  let small: TestApp
  beforeAll(async () => {
    small = await startApp({ env: { LLM_BASE_URL: fake.url, EVAL_MAX_TOKENS: '1000' } })
  }, 120_000)
  afterAll(async () => {
    await small?.close()
  })

  it('stops a run at EVAL_MAX_TOKENS: done, marked partial, the remaining cases not run', async () => {
    const ws = await createTenant(small)
    await withDocs(small, ws, { 'refunds.md': REFUNDS_PAGE })
    for (let i = 0; i < 3; i++) await newCase(ws.api, { question: `How long do refunds take? (${i})`, expect: { outcome: 'answered' } })
    const run = await runToEnd(ws.api)
    expect(run.status).toBe('done')
    expect(run.partial).toBe(true)
    expect(run.results.length).toBeLessThan(3)
    expect(run.totals.cases).toBe(run.results.length)
    expect(run.progress).toBeLessThan(1)
    const xml = await ws.api.get(`/evals/runs/${run.id}?format=junit`)
    expect(xml.text).toContain('(partial)')
  }, 120_000)
})

describe('actions in a run', () => {
  it('never calls an action: the call the model asked for is recorded and checked against the expected arguments', async () => {
    const api = await new WorkspaceApi().start()
    const created = await owner.api.post('/actions', orderStatus(api.url))
    expect(created.status, created.text).toBe(201)
    const c = await newCase(owner.api, {
      question: 'Where is my order 12345?',
      turns: ['Hello'],
      visitor_claims: { user_id: 'u-42' },
      expect: { outcome: 'answered', action: { name: 'order_status', arguments: { order_number: '12345' } } },
      tags: ['action'],
    })
    const run = await runToEnd(owner.api, { tags: ['action'] })
    const r = resultOf(run, c.id)
    expect(
      r.checks.find((x: any) => x.name === 'action: order_status'),
      JSON.stringify(r),
    ).toMatchObject({ passed: true })
    expect(api.requests).toEqual([])
    // the answer reads as a line about the call, never the placeholder result the model was given
    expect(r.answer).toContain('Would call order_status with order_number "12345"')
    expect(r.answer).not.toMatch(/dry_run|not called: evaluation/)
    expect(await t.ctx.db.selectFrom('action_calls').select('id').where('tenant_id', '=', owner.tenantId).execute()).toEqual([])
    await owner.api.delete(`/actions/${created.body.id}`)
    await owner.api.delete(`/evals/cases/${c.id}`)
    await api.close()
  }, 90_000)
})
