import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { system, userText } from './helpers/chat.js'
import { uploadReady } from './helpers/documents.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { extractionSettled, until } from './helpers/wait.js'

let fake: FakeLlm
let t: TestApp

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, KNOWLEDGE_EXTRACT_DELAY_SECONDS: '0' } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

/** POST /gap-analyzer/recalculate, then waits for that run to finish. */
async function recalculate(owner: Tenant, mode: 'mode_a' | 'mode_b' | 'both') {
  const r = await owner.api.post(`/gap-analyzer/recalculate?mode=${mode}`)
  expect(r.status, r.text).toBe(202)
  expect(r.body).toMatchObject({ mode, status: 'accepted', retry_after_seconds: null })
  const run = await until('gap run', async () => {
    const row = await t.ctx.db.selectFrom('gap_runs').select(['status', 'stats', 'error']).where('id', '=', r.body.run_id).executeTakeFirst()
    return row && (row.status === 'done' || row.status === 'failed') ? row : null
  })
  expect(run.status, JSON.stringify(run)).toBe('done')
  return run.stats as Record<string, any>
}

async function ask(owner: Tenant, question: string) {
  const r = await t.api().withApiKey(owner.apiKey).post('/chat', { question })
  expect(r.status, r.text).toBe(200)
  return r.body as { message_id: string; text: string; session_id: string }
}

const REFUNDS = `# Refund policy

Refunds for annual plans are possible within 30 days of purchase.

## How do I request a refund?

Open Billing, choose the invoice and press Request refund. Refunds arrive within 5 business days.
`

describe('mode B: visitor questions', () => {
  it('clusters repeated similar questions, and a thumbs-down raises the cluster signal', async () => {
    const owner = await createTenant(t)
    const cancel = [
      'How do I cancel my subscription?',
      'how can I cancel the subscription',
      'Cancel my subscription please',
      'I would like to cancel my subscription',
    ]
    const answers = []
    for (const q of cancel) answers.push(await ask(owner, q))
    await ask(owner, 'Where is my parcel?')
    await ask(owner, 'where is my parcel now')
    await ask(owner, 'Do you sell gift cards?')

    const stats = await recalculate(owner, 'mode_b')
    expect(stats.mode_b.questions).toBe(7)
    const list = await owner.api.get('/gap-analyzer')
    expect(list.status).toBe(200)
    const items = list.body.mode_b_items
    // the single gift-card question is no cluster worth listing (GAP_MIN_CLUSTER_SIZE 2)
    expect(items).toHaveLength(2)
    const [first, second] = items
    expect(first).toMatchObject({ source: 'mode_b', status: 'active', question_count: 4, classification: 'uncovered', is_new: true, linked_gap_id: null })
    expect(cancel).toContain(first.label)
    expect(first.example_questions.length).toBeGreaterThanOrEqual(1)
    expect(first.coverage_score).toBeLessThan(0.35)
    // every one of them was escalated (no documents): 3 each
    expect(first.signal_weight).toBe(12)
    expect(second).toMatchObject({ question_count: 2, signal_weight: 6 })
    expect(list.body.summary).toMatchObject({ total_active: 2, uncovered_count: 2, new_count: 2, by_source: { mode_a: 0, mode_b: 2 } })
    expect(list.body.summary.last_updated).toBeTruthy()

    const fb = await owner.api.post(`/chat/messages/${answers[0]!.message_id}/feedback`, { feedback: 'down' })
    expect(fb.status, fb.text).toBe(200)
    await recalculate(owner, 'mode_b')
    const again = (await owner.api.get('/gap-analyzer?mode_b_sort=signal_desc')).body.mode_b_items
    expect(again[0].id).toBe(first.id)
    expect(again[0].signal_weight).toBe(14)
    expect(again[0].is_new).toBe(false)

    const byCoverage = (await owner.api.get('/gap-analyzer?mode_b_sort=coverage_asc')).body.mode_b_items
    expect(byCoverage).toHaveLength(2)
    const newest = (await owner.api.get('/gap-analyzer?mode_b_sort=newest')).body.mode_b_items
    expect(newest).toHaveLength(2)

    const summary = await owner.api.get('/gap-analyzer/summary')
    expect(summary.status).toBe(200)
    expect(summary.body.summary).toMatchObject({ total_active: 2, new_count: 0, by_source: { mode_a: 0, mode_b: 2 } })
  })

  it('turns well-answered repeated questions into FAQ candidates from the logs', async () => {
    const owner = await createTenant(t)
    await uploadReady(t, owner.api, 'refunds.md', REFUNDS)
    await extractionSettled(t, owner)
    const replies = []
    for (const q of ['How do I request a refund?', 'how can I request a refund', 'Request a refund: how?']) replies.push(await ask(owner, q))
    await owner.api.post(`/chat/messages/${replies[1]!.message_id}/feedback`, { feedback: 'up' })
    await recalculate(owner, 'mode_b')
    const faq = await owner.api.get('/knowledge/faq?source=logs')
    expect(faq.body.total).toBe(1)
    expect(faq.body.items[0]).toMatchObject({ source: 'logs', approved: false, document_id: null })
    expect(faq.body.items[0].answer).toBe(replies[1]!.text.replace(/\s?\[\d{1,3}\]/g, '').trim())
    expect(faq.body.items[0].confidence).toBeGreaterThan(0.6)
    // the well-covered cluster is no gap
    expect((await owner.api.get('/gap-analyzer')).body.mode_b_items).toHaveLength(0)
    // a second run suggests nothing new
    await recalculate(owner, 'mode_b')
    expect((await owner.api.get('/knowledge/faq?source=logs')).body.total).toBe(1)
  })
})

describe('mode A: documentation topics', () => {
  it('lists uncovered topics, links visitor clusters to them, and a dismissed one stays dismissed', async () => {
    const owner = await createTenant(t)
    fake.script((req) =>
      req.json && system(req).includes('knowledge profile') && userText(req).includes('Refunds for annual plans')
        ? { json: { product_name: 'Acme', topics: ['Refunds', 'Warranty claims'] } }
        : undefined,
    )
    fake.script((req) =>
      req.json && system(req).includes('documentation topics') && userText(req).includes('Refunds for annual plans')
        ? { json: { topics: ['Shipping times', 'refunds'] } }
        : undefined,
    )
    await uploadReady(t, owner.api, 'refunds.md', REFUNDS)
    await extractionSettled(t, owner)
    expect((await owner.api.get('/knowledge/profile')).body.topics).toEqual(['Refunds', 'Warranty claims'])
    for (const q of ['How do I make a warranty claim?', 'how to make a warranty claim', 'Where do I send a warranty claim?']) await ask(owner, q)

    const stats = await recalculate(owner, 'both')
    expect(stats.mode_a.topics).toBe(3)
    const list = (await owner.api.get('/gap-analyzer')).body
    const labels = list.mode_a_items.map((i: { label: string }) => i.label).sort()
    expect(labels).toEqual(['Shipping times', 'Warranty claims'])
    const warranty = list.mode_a_items.find((i: { label: string }) => i.label === 'Warranty claims')
    expect(warranty, JSON.stringify(list, null, 1)).toMatchObject({
      source: 'mode_a',
      status: 'active',
      classification: 'uncovered',
      is_new: true,
      signal_weight: null,
      question_count: 3,
    })
    expect(warranty.example_questions.length).toBeGreaterThan(0)
    expect(list.mode_b_items).toHaveLength(1)
    expect(list.mode_b_items[0].linked_gap_id).toBe(warranty.id)

    const dismissed = await owner.api.post(`/gap-analyzer/mode_a/${warranty.id}/dismiss`, { reason: 'feature_request' })
    expect(dismissed.status, dismissed.text).toBe(200)
    expect(dismissed.body).toEqual({ success: true, source: 'mode_a', gap_id: warranty.id, status: 'dismissed' })

    await recalculate(owner, 'mode_a')
    const after = (await owner.api.get('/gap-analyzer')).body
    expect(after.mode_a_items.map((i: { label: string }) => i.label)).toEqual(['Shipping times'])
    const stillDismissed = (await owner.api.get('/gap-analyzer?mode_a_status=dismissed')).body.mode_a_items
    expect(stillDismissed.map((i: { id: string }) => i.id)).toEqual([warranty.id])
    expect(stillDismissed[0]).toMatchObject({ status: 'dismissed', dismiss_reason: 'feature_request', is_new: false })
    expect((await owner.api.get('/gap-analyzer?mode_a_status=all')).body.mode_a_items).toHaveLength(2)

    const re = await owner.api.post(`/gap-analyzer/mode_a/${warranty.id}/reactivate`)
    expect(re.body).toEqual({ success: true, source: 'mode_a', gap_id: warranty.id, status: 'active' })
    expect((await owner.api.get('/gap-analyzer')).body.mode_a_items).toHaveLength(2)

    // draft: the guard model writes it when the tenant has a key
    fake.script((req) =>
      req.json && system(req).includes('help-center article') && userText(req).includes('Warranty claims')
        ? { json: { title: 'Making a warranty claim', markdown: '# Making a warranty claim\n\n_Steps here._' } }
        : undefined,
    )
    const draft = await owner.api.post(`/gap-analyzer/mode_a/${warranty.id}/draft`)
    expect(draft.status, draft.text).toBe(200)
    expect(draft.body).toEqual({
      source: 'mode_a',
      gap_id: warranty.id,
      title: 'Making a warranty claim',
      markdown: '# Making a warranty claim\n\n_Steps here._',
    })
    const draftB = await owner.api.post(`/gap-analyzer/mode_b/${list.mode_b_items[0].id}/draft`)
    expect(draftB.status).toBe(200)
    expect(draftB.body.markdown).toMatch(/^#/)

    // the wrong source for an id, another tenant, bad input
    expect((await owner.api.post(`/gap-analyzer/mode_b/${warranty.id}/dismiss`, { reason: 'other' })).status).toBe(404)
    const other = await createTenant(t)
    expect((await other.api.post(`/gap-analyzer/mode_a/${warranty.id}/dismiss`, { reason: 'other' })).status).toBe(404)
    expect((await other.api.post(`/gap-analyzer/mode_a/${warranty.id}/draft`)).status).toBe(404)
    expect((await other.api.post(`/gap-analyzer/mode_a/${warranty.id}/reactivate`)).status).toBe(404)
    expect((await other.api.get('/gap-analyzer')).body.mode_a_items).toEqual([])
    expect((await owner.api.post(`/gap-analyzer/mode_c/${warranty.id}/dismiss`, { reason: 'other' })).status).toBe(422)
    expect((await owner.api.post(`/gap-analyzer/mode_a/${warranty.id}/dismiss`, { reason: 'because' })).status).toBe(422)
    expect((await owner.api.post(`/gap-analyzer/mode_a/${warranty.id}/dismiss`, {})).status).toBe(422)
    // the dismissal and the reactivation are in the workspace audit log; the refused attempts are not
    const log = (await owner.api.get('/tenants/me/audit-log?limit=50')).body.items.filter((e: { item_type: string }) => e.item_type === 'gap')
    expect(log.map((e: { action: string; item_id: string; detail: unknown }) => [e.action, e.item_id, e.detail]).reverse()).toEqual([
      ['dismissed', warranty.id, { source: 'mode_a' }],
      ['reactivated', warranty.id, { source: 'mode_a' }],
    ])
    expect((await owner.api.get('/gap-analyzer?mode_a_status=closed')).status).toBe(422)
    expect((await owner.api.get('/gap-analyzer?mode_b_sort=alphabetical')).status).toBe(422)
  })

  it('drafts from a template without a key', async () => {
    const owner = await createTenant(t, { llmKey: null })
    await owner.api.patch('/knowledge/profile', { topics: ['Data export'] })
    await recalculate(owner, 'mode_a')
    const gap = (await owner.api.get('/gap-analyzer')).body.mode_a_items[0]
    expect(gap).toMatchObject({ label: 'Data export', classification: 'uncovered', coverage_score: 0 })
    const before = fake.chatCalls().length
    const d = await owner.api.post(`/gap-analyzer/mode_a/${gap.id}/draft`)
    expect(d.body.title).toBe('Data export')
    expect(d.body.markdown).toContain('# Data export')
    expect(d.body.markdown).toContain('## Steps')
    expect(fake.chatCalls().length).toBe(before)
  })
})

describe('recalculate', () => {
  it('answers 202 at once, and in_progress with a retry time while a run is open', async () => {
    const idle = await startApp({ env: { LLM_BASE_URL: fake.url } })
    try {
      const owner = await createTenant(idle)
      const other = await createTenant(idle)
      await idle.worker!.stop(1000) // runs stay queued from here on
      const first = await owner.api.post('/gap-analyzer/recalculate?mode=both')
      expect(first.status).toBe(202)
      expect(first.body).toMatchObject({ mode: 'both', status: 'accepted', retry_after_seconds: null })
      const second = await owner.api.post('/gap-analyzer/recalculate?mode=mode_b')
      expect(second.status).toBe(202)
      expect(second.body).toMatchObject({ mode: 'both', status: 'in_progress', accepted_at: first.body.accepted_at, run_id: first.body.run_id })
      expect(second.body.retry_after_seconds).toBeGreaterThanOrEqual(5)
      expect((await owner.api.post('/gap-analyzer/recalculate')).status).toBe(422)
      expect((await owner.api.post('/gap-analyzer/recalculate?mode=all')).status).toBe(422)
      // another tenant is not blocked by this one's run
      expect((await other.api.post('/gap-analyzer/recalculate?mode=mode_a')).body.status).toBe('accepted')
      expect((await t.api().post('/gap-analyzer/recalculate?mode=both')).status).toBe(401)
    } finally {
      await idle.close()
    }
  })
})
