import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { PREPARED } from '../src/db/prepared.js'
import { startApp, type TestApp } from './helpers/app.js'

/**
 * Statements marked PREPARED (src/db/prepared.ts) go to PostgreSQL as named statements, one per text and connection;
 * the others stay unnamed (parsed and planned on every call). The embedded database ignores the mark.
 */
let t: TestApp
beforeAll(async () => {
  t = await startApp({ worker: false })
})
afterAll(() => t?.close())

const usesPostgres = Boolean(process.env.DATABASE_URL)

it.skipIf(!usesPostgres)('sends a marked statement as one prepared statement per connection, and leaves the others unnamed', async () => {
  const seen = await t.ctx.db.transaction().execute(async (trx) => {
    for (const n of [1, 2, 3]) {
      const r = await sql<{ n: number }>`${PREPARED}SELECT ${n}::int AS n, 'marked' AS k`.execute(trx)
      expect(r.rows).toEqual([{ n, k: 'marked' }])
    }
    await sql`SELECT 1 AS unmarked`.execute(trx)
    return (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(trx)).rows.map((r) => r.statement)
  })
  expect(seen.filter((s) => s.includes("'marked'"))).toHaveLength(1)
  expect(seen.some((s) => s.includes('unmarked'))).toBe(false)
})

it('runs a marked statement on either database', async () => {
  const r = await sql<{ n: number }>`${PREPARED}SELECT ${7}::int AS n`.execute(t.ctx.db)
  expect(r.rows).toEqual([{ n: 7 }])
})

it.skipIf(!usesPostgres)('keeps an idle connection (and its prepared statements) for DATABASE_POOL_IDLE_SECONDS, not the driver default of 10 s', async () => {
  const { openDatabase } = await import('../src/db/client.js')
  const pidAfterIdle = async (idle: number | undefined, waitMs: number) => {
    const handle = await openDatabase({ url: t.ctx.config.DATABASE_URL, pgliteDir: 'memory', poolSize: 1, poolIdleSeconds: idle })
    try {
      const pid = async () => (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(handle.db)).rows[0]!.pid
      const before = await pid()
      await new Promise((r) => setTimeout(r, waitMs))
      return { before, after: await pid() }
    } finally {
      await handle.close()
    }
  }
  // the default keeps it past a pause
  const kept = await pidAfterIdle(undefined, 1500)
  expect(kept.after).toBe(kept.before)
  // one second: closed while idle, the next statement gets a new backend
  const dropped = await pidAfterIdle(1, 2500)
  expect(dropped.after).not.toBe(dropped.before)
})
