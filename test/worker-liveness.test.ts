import { sql } from 'kysely'
import pino from 'pino'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { LIVENESS_LOCK_CLASS } from '../src/jobs/liveness.js'
import { JobQueue } from '../src/jobs/queue.js'
import { defineJob } from '../src/jobs/types.js'
import { Worker } from '../src/jobs/worker.js'
import { startApp, type TestApp } from './helpers/app.js'

declare module '../src/jobs/types.js' {
  interface JobPayloads {
    'test.liveness': { run: string }
  }
}

/**
 * On PostgreSQL a worker holds an advisory lock while it lives; when its connection dies with it (kill -9),
 * another worker takes its running jobs back at once instead of after their lease. A live worker's jobs stay
 * its own. (The embedded database has one owner and takes them back at start: test/crash-recovery.test.ts.)
 */
const usesPostgres = Boolean(process.env.DATABASE_URL)
const silent = pino({ level: 'silent' })
let t: TestApp
beforeAll(async () => {
  if (usesPostgres) t = await startApp({ worker: false })
})
afterAll(async () => {
  await t?.close()
})

const until = async (what: string, fn: () => Promise<boolean>, ms = 30_000) => {
  for (const deadline = Date.now() + ms; !(await fn()); ) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

it.skipIf(!usesPostgres)(
  'takes back the running job of a worker whose connection died, not that of a live one',
  async () => {
    const run = Math.random().toString(36).slice(2)
    const ranBy: string[] = []
    const make = () => {
      const w: Worker = new Worker(
        t.ctx.db,
        new JobQueue(t.ctx.db, t.clock),
        t.clock,
        silent,
        [
          defineJob({
            kind: 'test.liveness',
            handler: async (_p, { signal }) => {
              ranBy.push(w.id)
              if (ranBy.length === 1) await new Promise((r) => signal.addEventListener('abort', r))
            },
          }),
        ],
        // A lease far longer than the test: only liveness can bring the job back in time.
        { concurrency: 1, pollMs: 20, leaseSeconds: 600, liveness: true, orphanSweepMs: 100 },
      )
      return w
    }
    const a = make()
    const b = make()
    try {
      const id = (await new JobQueue(t.ctx.db, t.clock).enqueue('test.liveness', { run }))!
      await a.start()
      const row = () => t.ctx.db.selectFrom('jobs').select(['status', 'locked_by']).where('id', '=', id).executeTakeFirstOrThrow()
      await until('a claims', async () => (await row()).locked_by === a.id)
      expect(a.id).toMatch(/^wl-/)

      // B is alive beside a live A: the job stays A's.
      await b.start()
      await new Promise((r) => setTimeout(r, 500))
      expect(await row()).toEqual({ status: 'running', locked_by: a.id })

      // A's connection dies as it would with its process; B takes the job and runs it to the end.
      const killedAt = Date.now()
      await sql`SELECT pg_terminate_backend(l.pid) FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.classid::bigint = ${LIVENESS_LOCK_CLASS}
        AND l.objid::bigint = (hashtext(${a.id})::bigint & 4294967295)`.execute(t.ctx.db)
      await until('b finishes the job', async () => (await row()).status === 'done', 15_000)
      expect(ranBy).toEqual([a.id, b.id])
      console.info(`worker liveness: a dead worker's job done by another ${Date.now() - killedAt} ms after its connection died (lease 600 s)`)
    } finally {
      await b.stop(1000)
      await a.stop(1000)
    }
  },
  60_000,
)
