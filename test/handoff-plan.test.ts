import { sql } from 'kysely'
import { afterEach, expect, it } from 'vitest'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { chatApi } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { until } from './helpers/wait.js'

/**
 * A turn's hand-off written with the turn in one statement (HandOffPort.plan, writeTurn's `handOff`): planned from a
 * read without a lock, written only while the session's row is still the version read. A row changed in between
 * makes the statement write nothing at all, and the hand-off's transaction writes the turn once. A workspace whose
 * hand-off writes more (webhooks, auto-assignment) hands off in the transaction.
 */
let fake: FakeLlm
let t: TestApp
appWithFakeLlm({ CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true' }, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())

const usesPostgres = Boolean(process.env.DATABASE_URL)

/** A widget session the bot owns, with no turn yet. */
async function session(owner: Tenant) {
  const r = await t.api().post('/widget/session/init', { bot_id: owner.bot.public_id })
  expect(r.status, r.text).toBe(200)
  return r.body.session_id as string
}

/** Everything a hand-off turn writes, counted for the tenant. */
async function written(tenantId: string) {
  const count = async (table: 'escalation_tickets' | 'chat_messages' | 'question_log' | 'live_events') =>
    Number((await t.ctx.db.selectFrom(table).select(sql<number>`count(*)::int`.as('n')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow()).n)
  const last = async (table: 'ticket_counters' | 'live_counters') =>
    (await sql<{ last: number }>`SELECT last::int AS last FROM ${sql.table(table)} WHERE tenant_id = ${tenantId}`.execute(t.ctx.db)).rows[0]?.last ?? 0
  const jobs = await t.ctx.db
    .selectFrom('jobs')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', 'escalations.notify')
    .executeTakeFirstOrThrow()
  return {
    tickets: await count('escalation_tickets'),
    messages: await count('chat_messages'),
    questions: await count('question_log'),
    events: await count('live_events'),
    ticketCounter: await last('ticket_counters'),
    liveCounter: await last('live_counters'),
    notifyJobs: Number(jobs.n),
  }
}

async function botMessage(sessionId: string) {
  return t.ctx.db
    .selectFrom('chat_messages')
    .select(['content', 'debug'])
    .where('session_id', '=', sessionId)
    .where('role', '=', 'assistant')
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow()
}

it("writes a turn's hand-off with the turn: the ticket's number in the bot's words, its preview and debug, the job, the event", async () => {
  const owner = await createTenant(t)
  const api = chatApi(t, owner)
  const sid = await session(owner)
  const r = await api.post('/chat', { question: 'My parcel never arrived, what now?', session_id: sid })
  expect(r.status, r.text).toBe(200)
  expect(r.body).toMatchObject({ ticket_number: 'ESC-0001', owner: 'queue', delivered_to_operator: true })
  expect(r.body.text).toContain('ESC-0001')
  const bot = await botMessage(sid)
  expect(bot.content).toBe(r.body.text)
  expect(bot.debug).toMatchObject({ ticket: { number: 'ESC-0001', created: true, written: 'with_turn' } })
  const s = await t.ctx.db.selectFrom('chat_sessions').select(['last_answer_preview', 'owner', 'awaiting']).where('id', '=', sid).executeTakeFirstOrThrow()
  expect(s.last_answer_preview).toContain('ESC-0001')
  expect(`${s.last_answer_preview}${bot.content}${JSON.stringify(bot.debug)}`).not.toContain('\uE000')
  expect(s).toMatchObject({ owner: 'queue', awaiting: 'email' })
  expect(await written(owner.tenantId)).toEqual({ tickets: 1, messages: 2, questions: 1, events: 1, ticketCounter: 1, liveCounter: 1, notifyJobs: 1 })
  const ticket = await t.ctx.db
    .selectFrom('escalation_tickets')
    .select(['id', 'session_id', 'status'])
    .where('tenant_id', '=', owner.tenantId)
    .executeTakeFirstOrThrow()
  expect(ticket).toMatchObject({ session_id: sid, status: 'open' })
  const job = await t.ctx.db
    .selectFrom('jobs')
    .select(['payload', 'dedupe_key'])
    .where('kind', '=', 'escalations.notify')
    .where('tenant_id', '=', owner.tenantId)
    .executeTakeFirstOrThrow()
  expect(job.dedupe_key).toBe(`ticket-notify:opened:${ticket.id}`)
  expect(job.payload).toEqual({ tenantId: owner.tenantId, ticketId: ticket.id, kind: 'opened' })
  // the next ticket of the workspace gets the next number, in its own conversation
  const again = await api.post('/chat', { question: 'Where is my refund?', session_id: await session(owner) })
  expect(again.body.ticket_number).toBe('ESC-0002')
  // a conversation the turn itself starts has nothing to read first: the same write, on the row as created
  const fresh = await api.post('/chat', { question: 'Nobody answers my mails, write to me at ana@example.com' })
  expect(fresh.body).toMatchObject({ ticket_number: 'ESC-0003', owner: 'queue' })
  expect((await botMessage(fresh.body.session_id)).debug).toMatchObject({ ticket: { number: 'ESC-0003', created: true, written: 'with_turn' } })
  const found = await t.ctx.db
    .selectFrom('chat_sessions')
    .select(['awaiting', 'visitor_email_hash'])
    .where('id', '=', fresh.body.session_id)
    .executeTakeFirstOrThrow()
  // the e-mail in the question is on the session (and the ticket): nothing to ask for
  expect(found).toEqual({ awaiting: null, visitor_email_hash: t.ctx.cipher.emailHash('ana@example.com') })
  const ticket3 = await t.ctx.db
    .selectFrom('escalation_tickets')
    .select('user_email_hash')
    .where('ticket_number', '=', 'ESC-0003')
    .where('tenant_id', '=', owner.tenantId)
    .executeTakeFirstOrThrow()
  expect(ticket3.user_email_hash).toBe(t.ctx.cipher.emailHash('ana@example.com'))
  expect(fresh.body.text).not.toContain('\uE000')
})

it("adds a turn's hand-off to the conversation's open ticket, with the turn, after the team gave it back to the bot", async () => {
  const owner = await createTenant(t)
  const api = chatApi(t, owner)
  const sid = await session(owner)
  const first = await api.post('/chat', { question: 'My parcel never arrived, what now?', session_id: sid })
  expect(first.body.ticket_number).toBe('ESC-0001')
  const ticket = await t.ctx.db.selectFrom('escalation_tickets').select('id').where('session_id', '=', sid).executeTakeFirstOrThrow()
  const back = await owner.api.post(`/escalations/${ticket.id}/return-to-bot`)
  expect(back.status, back.text).toBe(200)
  const again = await api.post('/chat', { question: 'Still nothing, can someone look at order 5521?', session_id: sid })
  expect(again.status, again.text).toBe(200)
  // the open ticket, not a new one: its number in the bot's words, no number in the response
  expect(again.body).toMatchObject({ owner: 'queue', delivered_to_operator: true })
  expect(again.body.ticket_number).toBeUndefined()
  expect(again.body.text).toContain('ESC-0001')
  expect((await botMessage(sid)).debug).toMatchObject({ ticket: { number: 'ESC-0001', created: false, written: 'with_turn' } })
  const after = await t.ctx.db.selectFrom('escalation_tickets').select(['transcript', 'status']).where('id', '=', ticket.id).executeTakeFirstOrThrow()
  expect(after.status).toBe('open')
  expect(JSON.stringify(after.transcript)).toContain('order 5521')
  // owner changes: to the queue, back to the bot, to the queue again; one ticket, one number, one 'opened' notice
  expect(await written(owner.tenantId)).toEqual({ tickets: 1, messages: 4, questions: 2, events: 3, ticketCounter: 1, liveCounter: 3, notifyJobs: 1 })
})

it.skipIf(!usesPostgres)(
  'a session row changed between the read and the write: the statement writes nothing, the transaction writes the turn once',
  async () => {
    const owner = await createTenant(t)
    const sid = await session(owner)
    // another transaction changes the session's row and holds it while the turn runs: the turn's plan was read before
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let changed!: () => void
    const isChanged = new Promise<void>((r) => (changed = r))
    const other = t.ctx.db.transaction().execute(async (trx) => {
      await sql`UPDATE chat_sessions SET last_activity_at = last_activity_at WHERE id = ${sid}`.execute(trx)
      changed()
      await held
    })
    await isChanged
    const turn = chatApi(t, owner).post('/chat', { question: 'My parcel never arrived, what now?', session_id: sid })
    // the turn's write waits for the row's lock
    await until('the turn waits for the session row', async () => {
      const waiting = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`.execute(t.ctx.db)
      return (waiting.rows[0]?.n ?? 0) > 0
    })
    release()
    await other
    const r = await turn
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({ ticket_number: 'ESC-0001', owner: 'queue' })
    expect((await botMessage(sid)).debug).toMatchObject({ ticket: { number: 'ESC-0001', written: 'transaction' } })
    // nothing of the planned write is left: one ticket, one number taken, one event, one job
    expect(await written(owner.tenantId)).toEqual({ tickets: 1, messages: 2, questions: 1, events: 1, ticketCounter: 1, liveCounter: 1, notifyJobs: 1 })
  },
)

it('a workspace with a webhook endpoint hands off in the transaction, and its endpoint gets ticket.created', async () => {
  const owner = await createTenant(t)
  const ep = await owner.api.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', events: ['ticket.created'] })
  expect(ep.status, ep.text).toBe(201)
  const sid = await session(owner)
  // the endpoint's cache learns of it by the change feed
  await until('the endpoint is known', async () => {
    const r = await chatApi(t, owner).post('/chat', { question: 'My parcel never arrived, what now?', session_id: sid })
    return r.status === 200
  })
  expect((await botMessage(sid)).debug).toMatchObject({ ticket: { number: 'ESC-0001', written: 'transaction' } })
  const events = await t.ctx.db.selectFrom('webhook_events').select('type').where('tenant_id', '=', owner.tenantId).execute()
  expect(events.map((e) => e.type)).toContain('ticket.created')
})

it("finds the session of a prepared statement by its key, whatever the tenant's sessions and the statistics", async () => {
  // PostgreSQL keeps a prepared statement's generic plan, made from the statistics of the moment (src/db/prepared.ts):
  // statistics of a small table, then a tenant of many sessions, must not make the lookup scan the tenant's sessions
  const owner = await createTenant(t)
  const sid = await session(owner)
  await sql`ANALYZE chat_sessions`.execute(t.ctx.db)
  await sql`INSERT INTO chat_sessions
    SELECT (jsonb_populate_record(cs, jsonb_build_object('id', gen_random_uuid(), 'created_at', now() - make_interval(secs => g)))).*
    FROM chat_sessions cs, generate_series(1, 3000) g WHERE cs.id = ${sid}::uuid`.execute(t.ctx.db)
  const plan = await t.ctx.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(trx)
    await sql`PREPARE session_by_key(uuid, uuid) AS SELECT owner FROM chat_sessions WHERE id = $1 AND ${sql.raw('tenant_id IS NOT DISTINCT FROM $2')}`.execute(
      trx,
    )
    const r = await sql<{ 'QUERY PLAN': string }>`EXPLAIN EXECUTE session_by_key(${sql.lit(sid)}::uuid, ${sql.lit(owner.tenantId)}::uuid)`.execute(trx)
    await sql`DEALLOCATE session_by_key`.execute(trx)
    return r.rows.map((x) => x['QUERY PLAN']).join('\n')
  })
  expect(plan).toContain('chat_sessions_pkey')
  expect(plan).not.toMatch(/tenant_(created|activity)_idx/)
  // the statements' own helper writes the check that way
  const { tenantChecked } = await import('../src/db/prepared.js')
  expect(sql`${tenantChecked(owner.tenantId, 'cs.tenant_id')}`.compile(t.ctx.db).sql).toBe('"cs"."tenant_id" IS NOT DISTINCT FROM $1::uuid')
})
