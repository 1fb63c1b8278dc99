import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRefresher } from '../src/modules/analytics/analytics.jobs.js'
import { createRollupRepo } from '../src/modules/analytics/rollup.repo.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, REFUNDS_MD, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { memoryLogger } from './helpers/logs.js'
import { until } from './helpers/wait.js'

let fake: FakeLlm
let t: TestApp
let owner: Tenant
let other: Tenant
const logs = memoryLogger()
const EMAIL = 'kim.doe@example.com'
const sessions: string[] = []

const today = () => t.clock.now().toISOString().slice(0, 10)

async function exportOf(body: Record<string, unknown>, who: Tenant = owner) {
  const r = await who.api.post('/exports', { from: today(), to: today(), ...body })
  expect(r.status, r.text).toBe(202)
  expect(r.body.status).toBe('queued')
  const done = await until('the export', async () => {
    const s = await who.api.get(`/exports/${r.body.id}`)
    return s.body.status === 'done' || s.body.status === 'failed' ? s.body : null
  })
  expect(done.status).toBe('done')
  // read as text whatever the type (the JSON client would parse JSON lines as one document)
  const res = await fetch(who.api.base + done.download_url, { headers: { authorization: `Bearer ${who.api.token}` } })
  expect(res.status).toBe(200)
  const file = { headers: res.headers, text: await res.text() }
  return { status: done, file }
}

/** What the database holds, as the export presents it (the redacted text only). */
async function storedMessages() {
  const rows = await t.ctx.db
    .selectFrom('chat_messages as m')
    .innerJoin('chat_sessions as s', 's.id', 'm.session_id')
    .select([
      'm.id',
      'm.session_id',
      's.bot_id',
      's.channel',
      'm.created_at',
      'm.role',
      'm.from_operator',
      'm.content',
      'm.feedback',
      'm.tokens_used',
      'm.debug',
    ])
    .where('m.tenant_id', '=', owner.tenantId)
    .orderBy('m.created_at')
    .orderBy('m.id')
    .execute()
  return rows.map((m) => ({
    message_id: m.id,
    session_id: m.session_id,
    bot_id: m.bot_id,
    channel: m.channel,
    created_at: m.created_at.toISOString(),
    role: m.from_operator ? 'operator' : m.role,
    content: m.content,
    feedback: m.feedback,
    tokens: m.tokens_used,
    model_ms: (m.debug as any)?.timings?.model ?? null,
  }))
}

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url }, log: logs.log })
  owner = await createTenant(t)
  other = await createTenant(t)
  await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
  const api = chatApi(t, owner)
  for (const question of [
    `How long do refunds take? Reach me at ${EMAIL}`,
    '=HYPERLINK("http://evil.test","click") how long do refunds take?',
    '@SUM(1+1) can digital products be refunded?',
    'I want to talk to a human agent please',
  ]) {
    const r = await api.post('/chat', { question })
    expect(r.status, r.text).toBe(200)
    sessions.push(r.body.session_id)
  }
  await createRefresher({ repo: createRollupRepo(t.ctx.db), clock: t.clock, log: pino({ level: 'silent' }) }).run()
}, 120_000)

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

describe('exports', () => {
  it('round-trips messages as CSV: parsed back, the rows equal the data, formulas neutralised, originals never', async () => {
    const { status, file } = await exportOf({ kind: 'messages', format: 'csv' })
    expect(file.headers.get('content-type')).toMatch(/^text\/csv/)
    expect(file.headers.get('content-disposition')).toMatch(/attachment; filename="messages-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"/)
    const parsed = parse(file.text, { columns: true }) as Record<string, string>[]
    const stored = await storedMessages()
    expect(status.rows).toBe(stored.length)
    expect(status.progress).toBe(1)
    expect(parsed).toHaveLength(stored.length)
    const unneutralise = (v: string) => (/^'[=+\-@\t\r]/.test(v) ? v.slice(1) : v)
    parsed.forEach((row, i) => {
      const want = stored[i]!
      const asText = Object.fromEntries(Object.entries(want).map(([k, v]) => [k, v === null ? '' : String(v)]))
      expect({ ...row, content: unneutralise(row.content!) }).toEqual(asText)
    })
    expect(parsed.some((r) => r.content!.startsWith(`'=HYPERLINK`))).toBe(true)
    expect(parsed.some((r) => r.content!.startsWith(`'@SUM`))).toBe(true)
    expect(parsed.every((r) => !/^[=+\-@]/.test(r.content!))).toBe(true)
    expect(file.text).not.toContain(EMAIL)
    expect(parsed.find((r) => r.session_id === sessions[0] && r.role === 'user')!.content).toContain('[EMAIL')
  })

  it('writes JSON lines of the same rows, unaltered', async () => {
    const { file } = await exportOf({ kind: 'messages', format: 'jsonl' })
    expect(file.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const lines = file.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines).toEqual(await storedMessages())
    expect(file.text).not.toContain(EMAIL)
  })

  it('exports a conversation started a moment ago: the export brings the facts up to date first', async () => {
    const r = await chatApi(t, owner).post('/chat', { question: 'Can digital products be refunded after download?' })
    expect(r.status, r.text).toBe(200)
    const conv = parse((await exportOf({ kind: 'conversations', format: 'csv' })).file.text, { columns: true }) as Record<string, string>[]
    // with the conversation's language (#40), detected from the question
    expect(conv.find((c) => c.session_id === r.body.session_id)).toMatchObject({ outcome: 'pending', questions: '1', messages: '2', language: 'en' })
    sessions.push(r.body.session_id)
  })

  it('exports conversations with their outcome, tickets and questions, each for its bots', async () => {
    const conv = parse((await exportOf({ kind: 'conversations', format: 'csv' })).file.text, { columns: true }) as Record<string, string>[]
    expect(conv.map((c) => c.session_id).sort()).toEqual([...sessions].sort())
    // recent conversations are pending, except one with a ticket: handed off from the moment its ticket opens (#37)
    const ticketed = new Set(
      (await t.ctx.db.selectFrom('escalation_tickets').select('session_id').where('tenant_id', '=', owner.tenantId).execute()).map((x) => x.session_id),
    )
    for (const c of conv) expect(c.outcome, c.session_id).toBe(ticketed.has(c.session_id) ? 'handed_off' : 'pending')
    const tickets = parse((await exportOf({ kind: 'tickets', format: 'csv' })).file.text, { columns: true }) as Record<string, string>[]
    const stored = await t.ctx.db
      .selectFrom('escalation_tickets')
      .selectAll()
      .where('tenant_id', '=', owner.tenantId)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
    expect(tickets.length).toBeGreaterThanOrEqual(1)
    expect(tickets.map((x) => [x.ticket_id, x.ticket_number, x.session_id, x.trigger, x.status])).toEqual(
      stored.map((x) => [x.id, x.ticket_number, x.session_id, x.trigger, x.status]),
    )
    expect(tickets.map((x) => x.question.replace(/^'(?=[=+\-@])/, ''))).toEqual(stored.map((x) => x.primary_question))
    expect(tickets.find((x) => x.session_id === sessions[3])).toMatchObject({ trigger: 'user_request', question: 'I want to talk to a human agent please' })
    const questions = (await exportOf({ kind: 'questions', format: 'jsonl' })).file.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(questions.map((q) => q.session_id).sort()).toEqual([...sessions].sort())
    expect(JSON.stringify(questions)).not.toContain(EMAIL)
    // another bot of the tenant: nothing of these conversations
    const bot = await owner.api.post('/bots', { name: 'Second' })
    expect(bot.status, bot.text).toBe(201)
    const { status } = await exportOf({ kind: 'messages', format: 'csv', bot_ids: [bot.body.id] })
    expect(status.rows).toBe(0)
    // a bot of another tenant is a 404, and the other tenant cannot see this tenant's export
    expect((await other.api.post('/exports', { kind: 'messages', format: 'csv', from: today(), to: today(), bot_ids: [owner.bot.id] })).status).toBe(404)
    expect((await other.api.get(`/exports/${status.id}`)).status).toBe(404)
    expect((await other.api.get(`/exports/${status.id}/download`)).status).toBe(404)
  })

  it('records every export in the audit log', async () => {
    const { status } = await exportOf({ kind: 'tickets', format: 'jsonl' })
    // the workspace's stored audit log (GET /tenants/me/audit-log), visible to owners and admins
    const log = await owner.api.get('/tenants/me/audit-log?action=exported')
    expect(log.status, log.text).toBe(200)
    const mine = log.body.items.filter((i: { item_id: string | null }) => i.item_id === status.id)
    expect(mine).toEqual([expect.objectContaining({ action: 'exported', actor_user_id: owner.userId, item_type: 'export' })])
  })

  it('refuses bad requests naming the field', async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const r = await owner.api.post('/exports', { kind: 'messages', format: 'csv', from: today(), to: today(), ...body })
      expect(r.status, JSON.stringify(body)).toBe(422)
      expect(r.body.detail[0].loc).toEqual(['body', field])
    }
    await bad({ tz: 'Nowhere/Land' }, 'tz')
    await bad({ from: '2026-13-01' }, 'from')
    await bad({ from: '2020-01-01', to: '2026-01-01' }, 'to')
    await bad({ kind: 'everything' }, 'kind')
    expect((await owner.api.post('/exports', { kind: 'messages', format: 'xlsx', from: today(), to: today() })).status).toBe(422)
  })

  it('expires the link after 24 h (410) and the sweep deletes the file', async () => {
    const { status } = await exportOf({ kind: 'messages', format: 'csv' })
    expect(Date.parse(status.expires_at) - t.clock.now().getTime()).toBeGreaterThan(23 * 3600_000)
    const dir = join(t.ctx.config.dataDir, 'exports', owner.tenantId)
    expect(readdirSync(dir)).toContain(`${status.id}.csv`)
    t.clock.advance(24 * 3600_000 + 1000)
    const login = await t.api().post('/auth/login', { email: owner.email, password: owner.password })
    owner.api.withToken(login.body.access_token)
    const after = await owner.api.get(`/exports/${status.id}`)
    expect(after.body).toMatchObject({ status: 'done', download_url: null, expired: true })
    const gone = await owner.api.get(`/exports/${status.id}/download`)
    expect(gone.status).toBe(410)
    expect(gone.body.detail.code).toBe('export_expired')
    const sweep = t.ctx.queue.enqueue('analytics.export_sweep', {}, { dedupeKey: 'recurring:analytics.export_sweep', advance: true, runAt: t.clock.now() })
    await sweep
    await until('the sweep', async () => !existsSync(join(dir, `${status.id}.csv`)))
  })
})
