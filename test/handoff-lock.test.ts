import { sql } from 'kysely'
import { afterEach, expect, it } from 'vitest'
import { createTicketsRepo } from '../src/modules/escalations/tickets.repo.js'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { chatApi } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'

/**
 * A turn's hand-off locks the session and reads its tickets and messages in one statement
 * (tickets.repo lockWithHandOffState). What it reads is handOffState's; a row changed while the lock was
 * awaited (the read saw the statement's earlier snapshot) gives no state, and the hand-off reads it again.
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
