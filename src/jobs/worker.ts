import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/client.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { holdLiveness, lapseOrphanLeases, type Liveness } from './liveness.js'
import { defaultBackoff, type JobQueue } from './queue.js'
import type { JobDefinition, JobKind } from './types.js'

export interface WorkerOptions {
  concurrency: number
  pollMs: number
  /** How long a claimed job stays ours without a heartbeat; a crashed worker's jobs return after this. */
  leaseSeconds?: number
  /**
   * No other process can hold a job (the embedded database has one owner): jobs found 'running' at start
   * belong to a crashed run of this process and are taken back at once instead of after their lease.
   */
  soleOwner?: boolean
  /**
   * PostgreSQL: hold a session advisory lock for this worker's life, so any worker can tell at once that the
   * holder of a 'running' job is gone (its connection, and so its lock, ended with it) instead of waiting
   * for the lease (see src/jobs/liveness.ts). Off on the embedded database (soleOwner covers it).
   */
  liveness?: boolean
  /** How often a worker looks for jobs of dead workers (liveness on); default 1 s. */
  orphanSweepMs?: number
  /** Told each run's outcome (the metrics); `retry` is a failure that will run again. */
  onOutcome?: (kind: string, outcome: 'done' | 'retry' | 'failed', ms: number) => void
}

interface ClaimedJob {
  id: string
  kind: string
  payload: unknown
  attempts: number
  max_attempts: number
}

/**
 * Runs jobs from the durable queue. Claims with `FOR UPDATE SKIP LOCKED`, so any number of workers (in
 * the server or in `npm run worker`) never run the same job at once; a lease with a heartbeat brings back
 * the jobs of a worker that died. Handlers must be idempotent: a job can run again after a crash.
 */
export class Worker {
  /** `wl-`: this worker holds a liveness lock (only such holders' jobs are taken back early). */
  readonly id: string
  private readonly defs = new Map<string, JobDefinition<any>>()
  private running = 0
  /** Slots a claim in flight may fill: ticks overlap (timer, wake-ups, notices), and each must count the others' claims. */
  private reserved = 0
  private stopped = true
  private timer: NodeJS.Timeout | null = null
  private wakeScheduled = false
  private readonly inFlight = new Set<Promise<void>>()
  private readonly abort = new AbortController()
  private unsubscribe: (() => void) | null = null
  private readonly leaseSeconds: number
  private liveness: Liveness | null = null
  private lastOrphanSweep = 0

  constructor(
    private readonly db: Db,
    private readonly queue: JobQueue,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    defs: JobDefinition<any>[],
    private readonly opts: WorkerOptions,
  ) {
    for (const d of defs) this.defs.set(d.kind, d)
    this.leaseSeconds = opts.leaseSeconds ?? 20
    this.id = `${opts.liveness ? 'wl' : 'w'}-${randomUUID().slice(0, 8)}`
  }

  async start(): Promise<void> {
    if (!this.stopped) return
    this.stopped = false
    if (this.opts.soleOwner) await this.reclaimOrphans()
    if (this.opts.liveness) {
      // Held before the first claim: a job this worker takes is never taken for a dead worker's.
      this.liveness = await holdLiveness(this.db, this.id, this.log).catch((err: Error) => {
        this.log.warn({ err: { message: err.message } }, 'worker liveness lock not taken; a crash of this worker returns its jobs after their lease')
        return null
      })
      await this.sweepOrphans()
    }
    await this.ensureRecurring()
    this.unsubscribe = this.queue.onEnqueue(() => this.wake())
    this.schedule(0)
  }

  /** Stops claiming, lets running jobs finish (up to `graceMs`), then aborts the rest. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true
    this.unsubscribe?.()
    if (this.timer) clearTimeout(this.timer)
    const all = Promise.allSettled([...this.inFlight])
    const timeout = new Promise((r) => setTimeout(r, graceMs).unref())
    await Promise.race([all, timeout])
    this.abort.abort()
    await all
    await this.liveness?.release()
    this.liveness = null
  }

  /** Takes back at once the jobs of workers whose liveness lock is gone (they died); at most every orphanSweepMs. */
  private async sweepOrphans(): Promise<void> {
    if (!this.liveness) return
    this.lastOrphanSweep = Date.now()
    const n = await lapseOrphanLeases(this.db, this.clock.now()).catch(() => 0)
    if (n > 0) this.log.warn({ jobs: n }, 'jobs of a worker that died taken back')
  }

  /** Lapses the lease of every 'running' job so the first claim takes them (see WorkerOptions.soleOwner). */
  private async reclaimOrphans(): Promise<void> {
    const now = this.clock.now()
    const r = await this.db
      .updateTable('jobs')
      .set({ locked_until: new Date(now.getTime() - 1000), updated_at: now })
      .where('status', '=', 'running')
      .executeTakeFirst()
    const n = Number(r.numUpdatedRows ?? 0)
    if (n > 0) this.log.warn({ jobs: n }, 'jobs left running by a previous crash taken back')
  }

  /** Claims and runs what is due now, once; returns how many jobs ran. For tests and scripts. */
  async drain(maxRounds = 50): Promise<number> {
    let total = 0
    for (let i = 0; i < maxRounds; i++) {
      const jobs = await this.claim(this.opts.concurrency)
      if (jobs.length === 0) break
      await Promise.all(jobs.map((j) => this.run(j)))
      total += jobs.length
    }
    return total
  }

  private wake(): void {
    if (this.stopped || this.wakeScheduled) return
    this.wakeScheduled = true
    setImmediate(() => {
      this.wakeScheduled = false
      void this.tick()
    })
  }

  private schedule(ms: number): void {
    if (this.stopped) return
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.tick(), ms)
  }

  private async tick(): Promise<void> {
    if (this.stopped) return
    const free = this.opts.concurrency - this.running - this.reserved
    if (this.liveness && Date.now() - this.lastOrphanSweep >= (this.opts.orphanSweepMs ?? 1000)) await this.sweepOrphans()
    if (free > 0) {
      this.reserved += free
      try {
        const jobs = await this.claim(free)
        for (const job of jobs) {
          // run() counts itself as running before its first await, so the slot passes from reserved to running
          const p = this.run(job).finally(() => {
            this.inFlight.delete(p)
            this.wake()
          })
          this.inFlight.add(p)
        }
      } catch (err) {
        this.log.warn({ err: { message: (err as Error).message } }, 'job claim failed')
      } finally {
        this.reserved -= free
      }
    }
    this.schedule(this.opts.pollMs)
  }

  private async claim(limit: number): Promise<ClaimedJob[]> {
    const kinds = [...this.defs.keys()]
    if (kinds.length === 0 || limit <= 0) return []
    const now = this.clock.now()
    const result = await sql<ClaimedJob>`
      UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_by = ${this.id},
        locked_until = ${addSeconds(now, this.leaseSeconds)}, updated_at = ${now}
      WHERE id IN (
        SELECT id FROM jobs
        WHERE kind = ANY(${kinds})
          AND ((status = 'queued' AND run_at <= ${now}) OR (status = 'running' AND locked_until < ${now}))
        ORDER BY run_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id, kind, payload, attempts, max_attempts`.execute(this.db)
    return result.rows
  }

  private async run(job: ClaimedJob): Promise<void> {
    const def = this.defs.get(job.kind)!
    this.running++
    const heartbeat = setInterval(
      () => {
        void this.db
          .updateTable('jobs')
          .set({ locked_until: addSeconds(this.clock.now(), this.leaseSeconds) })
          .where('id', '=', job.id)
          .where('locked_by', '=', this.id)
          .execute()
          .catch(() => {})
      },
      (this.leaseSeconds * 1000) / 3,
    )
    heartbeat.unref()
    const started = Date.now()
    try {
      if (job.attempts > job.max_attempts) throw new Error('attempts exhausted (worker lost the job)')
      await def.handler(job.payload as never, { jobId: job.id, attempt: job.attempts, signal: this.abort.signal })
      await this.finish(job, def)
      this.opts.onOutcome?.(job.kind, 'done', Date.now() - started)
      this.log.debug({ job: job.kind, jobId: job.id, ms: Date.now() - started }, 'job done')
    } catch (err) {
      // Recording the failure can fail too (the database went away during shutdown): the job keeps its lease,
      // which lapses, and a worker runs it again. Never an unhandled rejection.
      const exhausted = job.attempts >= job.max_attempts || err instanceof PermanentJobError
      this.opts.onOutcome?.(job.kind, exhausted ? 'failed' : 'retry', Date.now() - started)
      await this.fail(job, def, err as Error).catch((e: Error) =>
        this.log.warn({ job: job.kind, jobId: job.id, err: { message: e.message } }, 'job outcome not recorded; it runs again when its lease lapses'),
      )
    } finally {
      clearInterval(heartbeat)
      this.running--
    }
  }

  private async finish(job: ClaimedJob, def: JobDefinition<any>): Promise<void> {
    const now = this.clock.now()
    await this.db
      .updateTable('jobs')
      .set({ status: 'done', finished_at: now, updated_at: now, locked_by: null, locked_until: null, last_error: null })
      .where('id', '=', job.id)
      // A worker whose lease lapsed (and whose job another worker took over) must not overwrite that run.
      .where('locked_by', '=', this.id)
      .executeTakeFirst()
    if (def.everySeconds) await this.enqueueRecurring(def, addSeconds(now, def.everySeconds))
  }

  private async fail(job: ClaimedJob, def: JobDefinition<any>, err: Error): Promise<void> {
    const now = this.clock.now()
    const exhausted = job.attempts >= job.max_attempts || err instanceof PermanentJobError
    const message = (err.message || err.name || 'error').slice(0, 500)
    this.log.warn({ job: job.kind, jobId: job.id, attempt: job.attempts, err: { message } }, 'job failed')
    const delay = (def.backoffSeconds ?? defaultBackoff)(job.attempts)
    await this.db
      .updateTable('jobs')
      .set({
        status: exhausted ? 'failed' : 'queued',
        run_at: exhausted ? now : addSeconds(now, delay),
        finished_at: exhausted ? now : null,
        last_error: message,
        updated_at: now,
        locked_by: null,
        locked_until: null,
      })
      .where('id', '=', job.id)
      .where('locked_by', '=', this.id)
      .execute()
    if (exhausted && def.everySeconds) await this.enqueueRecurring(def, addSeconds(now, def.everySeconds))
  }

  private async ensureRecurring(): Promise<void> {
    for (const def of this.defs.values()) {
      if (def.everySeconds) await this.enqueueRecurring(def, this.clock.now())
    }
  }

  private enqueueRecurring(def: JobDefinition<any>, runAt: Date) {
    return this.queue.enqueue(def.kind as JobKind, {} as never, { runAt, dedupeKey: `recurring:${def.kind}` })
  }
}

/** Throw from a handler when retrying cannot help (bad payload, deleted record). */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError'
}
