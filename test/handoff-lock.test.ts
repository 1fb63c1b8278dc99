import { sql } from 'kysely'
import { afterEach, expect, it } from 'vitest'
import { createTicketsRepo } from '../src/modules/escalations/tickets.repo.js'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { chatApi } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'
import { openEventStream } from './helpers/live.js'

/**
 * A turn's hand-off locks the session and reads its tickets and messages in one statement
 * (tickets.repo lockWithHandOffState). What it reads is handOffState's; a row changed while the lock was
 * awaited (the read saw the statement's earlier snapshot) gives no state, and the hand-off reads it again.
 * Its owner change and live event are written by the turn's own write (turn-write.ts, OwnerEventWrite).
 */
let fake: FakeLlm
let t: TestApp
appWithFakeLlm({}, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())

const usesPostgres = Boolean(process.env.DATABASE_URL)
const opts = { messages: 50, emails: true }

async function handedOffSession() {
  const owner = await createTenant(t)
  const api = chatApi(t, owner)
  const first = await api.post('/chat', { question: 'My parcel never arrived, mail me at kim.lee@example.com' })
  expect(first.body.ticket_number).toBe('ESC-0001')
  await api.post('/chat', { question: 'It was order 77812', session_id: first.body.session_id })
  return { tenantId: owner.tenantId, sessionId: first.body.session_id as string }
}

it('reads what handOffState reads, with the session row locked (owner and bot)', async () => {
  const { tenantId, sessionId } = await handedOffSession()
  // the hand-off found the e-mail the visitor wrote: on the session (written by the turn's write) and the ticket
  const followed = await t.ctx.db
    .selectFrom('chat_sessions')
    .select(['awaiting', 'visitor_email_hash', 'visitor_email_enc'])
    .where('id', '=', sessionId)
    .executeTakeFirstOrThrow()
  expect(followed.awaiting).toBeNull()
  expect(followed.visitor_email_hash).toBe(t.ctx.cipher.emailHash('kim.lee@example.com'))
  expect(followed.visitor_email_enc).not.toContain('kim.lee')
  const repo = createTicketsRepo(t.ctx.db)
  const both = await t.ctx.db.transaction().execute(async (trx) => ({
    merged: await repo.lockWithHandOffState(tenantId, sessionId, opts, trx),
    plain: await repo.handOffState(tenantId, sessionId, opts, trx),
  }))
  const session = await t.ctx.db.selectFrom('chat_sessions').select(['owner', 'bot_id']).where('id', '=', sessionId).executeTakeFirstOrThrow()
  expect(both.merged.locked).toEqual(session)
  expect(both.merged.state).toEqual(both.plain)
  expect(both.plain.open).not.toBeNull()
  expect(both.plain.messages.length).toBeGreaterThanOrEqual(3)
  expect(both.plain.messages[0]!.created_at).toBeInstanceOf(Date)
  expect(both.plain.emailCandidates.length).toBeGreaterThan(0)
  // another tenant's session: nothing locked, nothing read
  const other = await createTenant(t)
  const none = await t.ctx.db.transaction().execute((trx) => repo.lockWithHandOffState(other.tenantId, sessionId, opts, trx))
  expect(none).toEqual({ locked: undefined, state: null })
})

it.skipIf(!usesPostgres)('a session row changed while the lock was awaited gives no state (read again under the lock)', async () => {
  const { tenantId, sessionId } = await handedOffSession()
  const repo = createTicketsRepo(t.ctx.db)
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let locked!: () => void
  const isLocked = new Promise<void>((r) => (locked = r))
  const first = t.ctx.db.transaction().execute(async (trx) => {
    await sql`UPDATE chat_sessions SET owner = 'bot' WHERE id = ${sessionId}`.execute(trx)
    locked()
    await held
  })
  await isLocked
  const second = t.ctx.db.transaction().execute((trx) => repo.lockWithHandOffState(tenantId, sessionId, opts, trx))
  // the second waits for the first's lock; once it commits, the row the second locks is not its snapshot's
  await new Promise((r) => setTimeout(r, 150))
  release()
  await first
  const r = await second
  expect(r.locked?.owner).toBe('bot')
  expect(r.state).toBeNull()
  // without a wait, the state is read
  const calm = await t.ctx.db.transaction().execute((trx) => repo.lockWithHandOffState(tenantId, sessionId, opts, trx))
  expect(calm.state).not.toBeNull()
})

it("a turn's hand-off: the owner change and its live event are written with the turn (seqs, columns, the team's stream)", async () => {
  const owner = await createTenant(t)
  const frames: Array<{ type: string; owner?: string; session_id?: string; reason?: string; ticket_id?: string }> = []
  const { cut } = openEventStream(`${t.url}/escalations/events`, { authorization: `Bearer ${owner.token}` }, (block) => {
    const data = block.match(/^data: (.*)$/m)?.[1]
    if (data) frames.push(JSON.parse(data))
  })
  try {
    await new Promise((r) => setTimeout(r, 200))
    const api = chatApi(t, owner)
    const a = await api.post('/chat', { question: 'My parcel never arrived, what now?' })
    const b = await api.post('/chat', { question: 'Where is my refund?' })
    expect([a.body.ticket_number, b.body.ticket_number]).toEqual(['ESC-0001', 'ESC-0002'])
    for (const r of [a, b]) expect(r.body).toMatchObject({ owner: 'queue', chat_ended: true, delivered_to_operator: true })
    const events = await t.ctx.db
      .selectFrom('live_events')
      .select(['session_id', sql<number>`seq::int`.as('seq'), sql<number>`session_seq::int`.as('session_seq'), 'type', 'data'])
      .where('tenant_id', '=', owner.tenantId)
      .orderBy('seq')
      .execute()
    expect(events.map((e) => [e.session_id, e.seq, e.session_seq, e.type])).toEqual([
      [a.body.session_id, 1, 1, 'owner'],
      [b.body.session_id, 2, 1, 'owner'],
    ])
    expect(events[0]!.data).toMatchObject({ owner: 'queue', reason: 'no_documents', by: { type: 'system' } })
    const session = await t.ctx.db
      .selectFrom('chat_sessions')
      .select(['owner', 'owner_since', sql<number>`live_seq::int`.as('live_seq'), 'awaiting', 'chat_ended', 'message_count'])
      .where('id', '=', a.body.session_id)
      .executeTakeFirstOrThrow()
    // the owner columns and the turn's own (the hand-off asked for an e-mail: the session waits for it)
    expect(session).toMatchObject({ owner: 'queue', live_seq: 1, awaiting: 'email', chat_ended: false, message_count: 2 })
    expect(session.owner_since).toBeInstanceOf(Date)
    const counter = await t.ctx.db
      .selectFrom('live_counters')
      .select(sql<number>`last::int`.as('last'))
      .where('tenant_id', '=', owner.tenantId)
      .executeTakeFirstOrThrow()
    expect(counter.last).toBe(2)
    // the team's stream has both, at commit
    await expect
      .poll(() => frames.filter((f) => f.type === 'owner').map((f) => f.session_id), { timeout: 10_000 })
      .toEqual([a.body.session_id, b.body.session_id])
  } finally {
    cut()
  }
})
