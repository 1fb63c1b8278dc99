import { sql } from 'kysely'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase, type DatabaseHandle } from '../src/db/client.js'
import { pruneFinishedJobs, pruneJobs } from '../src/jobs/prune.js'
import { JobQueue, defaultBackoff } from '../src/jobs/queue.js'
import { defineJob, type JobDefinition } from '../src/jobs/types.js'
import { PermanentJobError, Worker } from '../src/jobs/worker.js'
import { tokenFromMail } from './fakes/smtp.js'
import { FakeSmtp } from './fakes/smtp.js'
import { startApp, type TestApp } from './helpers/app.js'
import { PASSWORD, uniqueEmail } from './helpers/factories.js'

declare module '../src/jobs/types.js' {
  interface JobPayloads {
    'test.count': { n: number; run: string }
    'test.flaky': { failTimes: number; run: string }
    'test.broken': { run: string }
    'test.tick': Record<string, never>
  }
}

const usesPostgres = Boolean(process.env.DATABASE_URL)
const silent = pino({ level: 'silent' })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

let t: TestApp
beforeAll(async () => {
  t = await startApp({ worker: false })
})
afterAll(async () => {
  await t?.close()
})

function workerWith(defs: JobDefinition<any>[], opts: { db?: DatabaseHandle; leaseSeconds?: number; concurrency?: number } = {}) {
  const db = opts.db?.db ?? t.ctx.db
  return new Worker(db, new JobQueue(db, t.clock), t.clock, silent, defs, {
    concurrency: opts.concurrency ?? 4,
    pollMs: 10,
    leaseSeconds: opts.leaseSeconds,
  })
}

const jobRow = (id: string) => t.ctx.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
const run = () => Math.random().toString(36).slice(2)

describe('durability', () => {
  it('keeps a queued mail across a restart and sends it from the next process', async () => {
    const smtp = await new FakeSmtp().start()
    const dir = mkdtempSync(join(tmpdir(), 'scb-jobs-'))
    try {
      const first = await startApp({ worker: false, smtp, pgliteDir: join(dir, 'pgdata'), keepDatabase: true })
      const email = uniqueEmail()
      expect((await first.api().post('/auth/register', { email, password: PASSWORD })).status).toBe(200)
      const mailJobs = (app: TestApp) => app.ctx.db.selectFrom('jobs').select('status').where('kind', '=', 'email.send').execute()
      expect(await mailJobs(first)).toEqual([{ status: 'queued' }])
      await sleep(200)
      expect(smtp.mails).toHaveLength(0)
      const databaseUrl = first.ctx.config.DATABASE_URL
      await first.close()

      const second = await startApp({ smtp, pgliteDir: join(dir, 'pgdata'), databaseUrl })
      try {
        const mail = await smtp.waitFor((m) => m.to.includes(email))
        const verified = await second.api().post('/auth/verify-email', { token: tokenFromMail(mail) })
        expect(verified.status).toBe(200)
        await expect.poll(() => mailJobs(second)).toEqual([{ status: 'done' }])
      } finally {
        await second.close()
      }
    } finally {
      await smtp.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000) // two databases on disk: initdb takes seconds on a busy machine

  it('runs alone with `npm run worker` (src/worker.ts) and stops cleanly on SIGTERM', async () => {
    const smtp = await new FakeSmtp().start()
    const dataDir = mkdtempSync(join(tmpdir(), 'scb-worker-'))
    try {
      const app = await startApp({ worker: false, smtp, pgliteDir: join(dataDir, 'pgdata'), keepDatabase: true })
      const email = uniqueEmail()
      await app.api().post('/auth/register', { email, password: PASSWORD })
      const { DATABASE_URL, JWT_SECRET, ENCRYPTION_KEY } = app.ctx.config
      // PGlite is one process's database: the server stops before the worker opens it. PostgreSQL is shared.
      if (!usesPostgres) await app.close()
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
        cwd: process.cwd(),
        env: {
          PATH: process.env.PATH,
          DATA_DIR: dataDir,
          DATABASE_URL: DATABASE_URL ?? '',
          JWT_SECRET,
          ENCRYPTION_KEY,
          SMTP_URL: smtp.url,
          LOG_LEVEL: 'warn',
          WORKER_POLL_MS: '50',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (d) => (output += d))
      child.stderr.on('data', (d) => (output += d))
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
      try {
        // a process of its own: importing the app and opening the database took over 20 s at a load of 13 on 2 cores
        const mail = await smtp.waitFor((m) => m.to.includes(email), 90_000)
        expect(tokenFromMail(mail).length).toBeGreaterThan(20)
      } finally {
        child.kill('SIGTERM')
      }
      expect(await exited, output).toBe(0)
      if (usesPostgres) await app.close()
    } finally {
      await smtp.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 150_000)
})

describe('retries', () => {
  it('retries a failed job after its backoff, on the clock, until it succeeds', async () => {
    const attempts: number[] = []
    const id = run()
    const worker = workerWith([
      defineJob<'test.flaky'>({
        kind: 'test.flaky',
        backoffSeconds: (n) => 10 * n,
        async handler(p, ctx) {
          if (p.run !== id) return
          attempts.push(ctx.attempt)
          if (ctx.attempt <= p.failTimes) throw new Error(`boom ${ctx.attempt}`)
        },
      }),
    ])
    const jobId = (await t.ctx.queue.enqueue('test.flaky', { failTimes: 2, run: id }))!
    expect(await worker.drain()).toBe(1)
    let row = await jobRow(jobId)
    expect(row).toMatchObject({ status: 'queued', attempts: 1, last_error: 'boom 1', locked_by: null })
    expect(row.run_at.getTime() - t.clock.now().getTime()).toBeGreaterThan(9_000)

    expect(await worker.drain()).toBe(0) // not due yet
    t.clock.advance(10_000)
    expect(await worker.drain()).toBe(1)
    row = await jobRow(jobId)
    expect(row).toMatchObject({ status: 'queued', attempts: 2, last_error: 'boom 2' })
    expect(row.run_at.getTime() - t.clock.now().getTime()).toBeGreaterThan(19_000)

    t.clock.advance(20_000)
    expect(await worker.drain()).toBe(1)
    row = await jobRow(jobId)
    expect(row).toMatchObject({ status: 'done', attempts: 3, last_error: null })
    expect(row.finished_at).not.toBeNull()
    expect(attempts).toEqual([1, 2, 3])
  })

  it('marks a job failed when its attempts are exhausted, or at once for a permanent error', async () => {
    const id = run()
    let calls = 0
    const worker = workerWith([
      defineJob<'test.broken'>({
        kind: 'test.broken',
        backoffSeconds: () => 1,
        async handler(p) {
          if (p.run !== id) return
          calls++
          throw new Error('still broken')
        },
      }),
      defineJob<'test.count'>({
        kind: 'test.count',
        async handler(p) {
          if (p.run === id) throw new PermanentJobError('bad payload')
        },
      }),
    ])
    const jobId = (await t.ctx.queue.enqueue('test.broken', { run: id }, { maxAttempts: 3 }))!
    for (let i = 0; i < 5; i++) {
      await worker.drain()
      t.clock.advance(2000)
    }
    expect(calls).toBe(3)
    expect(await jobRow(jobId)).toMatchObject({ status: 'failed', attempts: 3, last_error: 'still broken', locked_by: null })

    const permanent = (await t.ctx.queue.enqueue('test.count', { n: 0, run: id }))!
    await worker.drain()
    expect(await jobRow(permanent)).toMatchObject({ status: 'failed', attempts: 1, last_error: 'bad payload' })
  })

  it('backs off exponentially by default, capped at an hour', () => {
    for (let i = 0; i < 50; i++) {
      expect(defaultBackoff(1)).toBeGreaterThanOrEqual(4)
      expect(defaultBackoff(1)).toBeLessThanOrEqual(6)
      expect(defaultBackoff(4)).toBeGreaterThanOrEqual(32)
      expect(defaultBackoff(4)).toBeLessThanOrEqual(48)
      expect(defaultBackoff(30)).toBeLessThanOrEqual(3600 * 1.2)
    }
  })
})

describe('concurrency', () => {
  it('never runs the same job twice with two workers on one database', async () => {
    // Two workers as two processes would have them: on PostgreSQL each with its own connection pool.
    const extra = usesPostgres ? await openDatabase({ url: t.ctx.config.DATABASE_URL, pgliteDir: 'memory', poolSize: 4 }) : undefined
    const id = run()
    const executions = new Map<number, number>()
    const byWorker = [0, 0]
    const def = (w: number) =>
      defineJob<'test.count'>({
        kind: 'test.count',
        async handler(p) {
          if (p.run !== id) return
          executions.set(p.n, (executions.get(p.n) ?? 0) + 1)
          byWorker[w]!++
          await sleep(Math.random() * 3)
        },
      })
    const a = workerWith([def(0)], { concurrency: 4 })
    const b = workerWith([def(1)], { concurrency: 4, db: extra })
    const total = 120
    for (let n = 0; n < total; n++) await t.ctx.queue.enqueue('test.count', { n, run: id })
    await Promise.all([a.start(), b.start()])
    try {
      await expect.poll(() => executions.size, { timeout: 20_000, interval: 50 }).toBe(total)
      await sleep(200)
    } finally {
      await Promise.all([a.stop(2000), b.stop(2000)])
      await extra?.close()
    }
    expect([...executions.values()].every((c) => c === 1)).toBe(true)
    expect(byWorker[0]! + byWorker[1]!).toBe(total)
    expect(byWorker[0]).toBeGreaterThan(0)
    expect(byWorker[1]).toBeGreaterThan(0)
  })

  it('never runs more jobs at once than its concurrency, however many wake-ups overlap a claim', async () => {
    const id = run()
    let now = 0
    let most = 0
    let done = 0
    const w = workerWith(
      [
        defineJob<'test.count'>({
          kind: 'test.count',
          async handler(p) {
            if (p.run !== id) return
            now++
            most = Math.max(most, now)
            await sleep(15)
            now--
            done++
          },
        }),
      ],
      { concurrency: 2 },
    )
    await w.start()
    try {
      // every enqueue wakes the worker while earlier claims are still in flight
      await Promise.all(Array.from({ length: 40 }, (_, n) => t.ctx.queue.enqueue('test.count', { n, run: id })))
      await expect.poll(() => done, { timeout: 20_000, interval: 20 }).toBe(40)
    } finally {
      await w.stop(2000)
    }
    expect(most).toBeLessThanOrEqual(2)
  })

  it("takes over a crashed worker's job once its lease has lapsed", async () => {
    const id = run()
    const ran: string[] = []
    const def = (name: string) =>
      defineJob<'test.count'>({
        kind: 'test.count',
        async handler(p) {
          if (p.run === id) ran.push(name)
        },
      })
    const crashed = workerWith([def('crashed')], { leaseSeconds: 30 })
    const survivor = workerWith([def('survivor')], { leaseSeconds: 30 })
    const jobId = (await t.ctx.queue.enqueue('test.count', { n: 1, run: id }))!
    // The first worker claims the job and dies before running it (no heartbeat, no finish).
    const claimed = await (crashed as unknown as { claim(n: number): Promise<{ id: string }[]> }).claim(10)
    expect(claimed.map((j) => j.id)).toContain(jobId)
    expect(await jobRow(jobId)).toMatchObject({ status: 'running', locked_by: crashed.id, attempts: 1 })

    expect(await survivor.drain()).toBe(0) // the lease still holds
    t.clock.advance(31_000)
    expect(await survivor.drain()).toBeGreaterThanOrEqual(1)
    expect(ran).toEqual(['survivor'])
    expect(await jobRow(jobId)).toMatchObject({ status: 'done', attempts: 2, locked_by: null })
  })
})

describe('enqueueing', () => {
  it('keeps one live job per dedupe key, and allows a new one once it has run', async () => {
    const id = run()
    const key = `dedupe:${id}`
    const first = await t.ctx.queue.enqueue('test.count', { n: 1, run: id }, { dedupeKey: key })
    const second = await t.ctx.queue.enqueue('test.count', { n: 2, run: id }, { dedupeKey: key })
    expect(first).toEqual(expect.any(String))
    expect(second).toBeNull()
    const rows = await t.ctx.db.selectFrom('jobs').selectAll().where('dedupe_key', '=', key).execute()
    expect(rows).toHaveLength(1)

    const seen: number[] = []
    await workerWith([defineJob<'test.count'>({ kind: 'test.count', handler: async (p) => void (p.run === id && seen.push(p.n)) })]).drain()
    expect(seen).toEqual([1])
    const third = await t.ctx.queue.enqueue('test.count', { n: 3, run: id }, { dedupeKey: key })
    expect(third).toEqual(expect.any(String))
    expect(third).not.toBe(first)
  })

  it('enqueues atomically with the transaction that makes the job meaningful', async () => {
    const id = run()
    await expect(
      t.ctx.db.transaction().execute(async (trx) => {
        await t.ctx.queue.enqueue('test.count', { n: 1, run: id }, { dedupeKey: `tx:${id}` }, trx)
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    expect(await t.ctx.db.selectFrom('jobs').select('id').where('dedupe_key', '=', `tx:${id}`).execute()).toHaveLength(0)
  })

  it('runs a job only once it is due (runAt)', async () => {
    const id = run()
    const seen: number[] = []
    const worker = workerWith([defineJob<'test.count'>({ kind: 'test.count', handler: async (p) => void (p.run === id && seen.push(p.n)) })])
    await t.ctx.queue.enqueue('test.count', { n: 1, run: id }, { runAt: new Date(t.clock.now().getTime() + 60_000) })
    await worker.drain()
    expect(seen).toEqual([])
    t.clock.advance(60_000)
    await worker.drain()
    expect(seen).toEqual([1])
  })

  it('keeps exactly one pending instance of a recurring job and reschedules it after each run', async () => {
    let runs = 0
    const worker = workerWith([defineJob<'test.tick'>({ kind: 'test.tick', everySeconds: 300, handler: async () => void runs++ })])
    const pending = () => t.ctx.db.selectFrom('jobs').selectAll().where('kind', '=', 'test.tick').where('status', 'in', ['queued', 'running']).execute()
    await worker.start()
    try {
      await expect.poll(() => runs, { timeout: 5000 }).toBe(1)
      await expect.poll(async () => (await pending()).length, { timeout: 5000 }).toBe(1)
      const [next] = await pending()
      expect(next!.run_at.getTime() - t.clock.now().getTime()).toBeGreaterThan(290_000)
      // A second worker starting up does not add another instance.
      const other = workerWith([defineJob<'test.tick'>({ kind: 'test.tick', everySeconds: 300, handler: async () => void runs++ })])
      await other.start()
      await other.stop()
      expect(await pending()).toHaveLength(1)
      t.clock.advance(300_000)
      await expect.poll(() => runs, { timeout: 5000 }).toBe(2)
    } finally {
      await worker.stop()
    }
  })

  it('prunes finished jobs older than the retention in batches, and never a queued or running one, however old', async () => {
    const day = 86_400_000
    const at = (daysAgo: number) => new Date(t.clock.now().getTime() - daysAgo * day)
    const run = `prune-${Date.now()}`
    const rows: { status: 'done' | 'failed' | 'queued' | 'running'; finished_at: Date | null; tag: string }[] = [
      { status: 'done', finished_at: at(20), tag: 'old-done' },
      { status: 'failed', finished_at: at(15), tag: 'old-failed' },
      { status: 'done', finished_at: at(3), tag: 'recent-done' },
      { status: 'queued', finished_at: null, tag: 'old-queued' },
      { status: 'running', finished_at: null, tag: 'old-running' },
    ]
    for (const r of rows) {
      await t.ctx.db
        .insertInto('jobs')
        .values({
          kind: 'test.tick',
          payload: JSON.stringify({ run, tag: r.tag }),
          status: r.status,
          max_attempts: 1,
          run_at: at(30),
          created_at: at(30),
          finished_at: r.finished_at,
        })
        .execute()
    }
    const left = async () =>
      (await t.ctx.db.selectFrom('jobs').select('payload').where(sql<boolean>`payload->>'run' = ${run}`).execute())
        .map((j) => (j.payload as { tag: string }).tag)
        .sort()
    await pruneFinishedJobs(t.ctx.db, t.clock, 14)()
    expect(await left()).toEqual(['old-queued', 'old-running', 'recent-done'])
    // the job that runs it daily
    expect(pruneJobs(async () => 0).map((d) => [d.kind, d.everySeconds])).toEqual([['jobs.prune', 86_400]])
  })
})
