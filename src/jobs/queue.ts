import { sql, type RawBuilder } from 'kysely'
import { CHANGES_CHANNEL, type ChangeFeed } from '../db/change-feed.js'
import type { Db } from '../db/client.js'
import type { Clock } from '../lib/clock.js'
import { addSeconds } from '../lib/clock.js'
import type { JobKind, JobPayloads } from './types.js'

export interface EnqueueOptions {
  runAt?: Date
  /** While a job with this key is queued or running, enqueueing another with the same key does nothing. */
  dedupeKey?: string
  tenantId?: string | null
  maxAttempts?: number
  /** With `dedupeKey`: a job already queued under the key runs at `runAt` if that is sooner (a running one is left alone). */
  advance?: boolean
}

const JOBS_TOPIC = 'jobs'

/** Anything that can run a query: the database or a transaction, so jobs can be enqueued atomically. */
type Executor = Pick<Db, 'insertInto' | 'with'>

/**
 * The durable queue's producer side. Enqueue inside the transaction that makes the job meaningful (pass
 * `trx`), so a rolled-back change never leaves a job behind and a committed one always has its job.
 */
export class JobQueue {
  private readonly listeners = new Set<() => void>()

  /**
   * With a change feed, an enqueue also wakes the workers of the other processes (the supervisor's worker
   * process, `npm run worker`) when its transaction commits, instead of at their next poll.
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly feed: Pick<ChangeFeed, 'subscribe'> | null = null,
  ) {
    feed?.subscribe(JOBS_TOPIC, () => this.wakeAll())
  }

  private wakeAll(): void {
    for (const l of this.listeners) l()
  }

  async enqueue<K extends JobKind>(kind: K, payload: JobPayloads[K], opts: EnqueueOptions = {}, trx: Executor = this.db): Promise<string | null> {
    const now = this.clock.now()
    const insert = (db: Pick<Db, 'insertInto'>) =>
      db
        .insertInto('jobs')
        .values({
          kind,
          payload: JSON.stringify(payload ?? {}),
          tenant_id: opts.tenantId ?? null,
          status: 'queued',
          max_attempts: opts.maxAttempts ?? 5,
          run_at: opts.runAt ?? now,
          dedupe_key: opts.dedupeKey ?? null,
          locked_by: null,
          locked_until: null,
          last_error: null,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => {
          const key = oc.column('dedupe_key').where('dedupe_key', 'is not', null).where('status', 'in', ['queued', 'running'])
          if (!opts.advance) return key.doNothing()
          return key.doUpdateSet({ run_at: sql<Date>`least(jobs.run_at, excluded.run_at)`, updated_at: now }).where('jobs.status', '=', 'queued')
        })
        .returning('id')
    // In-process workers wake at once instead of waiting for their next poll; the others at commit, by a notice
    // sent in the insert's own statement (one round trip) only when a row was written. No nonce: this notice is
    // no cache's business.
    const row = this.feed
      ? await trx
          .with('j', (db) => insert(db))
          .selectFrom('j')
          .select(['j.id', sql<string>`pg_notify(${CHANGES_CHANNEL}, ${`${JOBS_TOPIC}\x1f${kind}`})::text`.as('n')])
          .executeTakeFirst()
      : await insert(trx).executeTakeFirst()
    this.wakeAll()
    return row?.id ?? null
  }

  /**
   * An enqueue written by another statement, as its data-modifying CTEs (the job commits with that write, and it
   * costs no round trip of its own): `ctes` (each starting with a comma) inserts the job from `from`, a CTE of that
   * statement with one row, whose columns the payload and the dedupe key may read; the statement's final SELECT
   * must evaluate `sent` (a boolean, always true), which sends the workers' wake-up when a job was written. The same
   * row, dedupe rule and notice as `enqueue`; call `written()` once the statement has run.
   */
  enqueueSql(
    kind: JobKind,
    from: string,
    payload: RawBuilder<unknown>,
    opts: { tenantId: string | null; dedupeKey: RawBuilder<string>; maxAttempts?: number },
  ): { ctes: RawBuilder<unknown>; sent: RawBuilder<boolean>; written: () => void } {
    const now = this.clock.now()
    const notice = `${JOBS_TOPIC}\x1f${kind}`
    const ctes = sql`, j_${sql.raw(from)} AS (
        INSERT INTO jobs (kind, payload, tenant_id, status, max_attempts, run_at, dedupe_key, locked_by, locked_until, last_error, created_at, updated_at)
        SELECT ${kind}, ${payload}, ${opts.tenantId}::uuid, 'queued', ${opts.maxAttempts ?? 5}::int, ${now}, ${opts.dedupeKey}, NULL, NULL, NULL, ${now}, ${now}
        FROM ${sql.raw(from)}
        ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING
        RETURNING id
      ), n_${sql.raw(from)} AS (
        SELECT pg_notify(${CHANGES_CHANNEL}, ${notice}) FROM j_${sql.raw(from)} WHERE ${this.feed !== null}::boolean
      )`
    return {
      ctes,
      sent: sql<boolean>`((SELECT count(*) FROM n_${sql.raw(from)}) >= 0)`,
      written: () => this.wakeAll(),
    }
  }

  onEnqueue(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** For tests and operations: counts by status. */
  async stats(): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['status', sql<number>`count(*)::int`.as('n')])
      .groupBy('status')
      .execute()
    return Object.fromEntries(rows.map((r) => [r.status, r.n]))
  }
}

export const defaultBackoff = (attempt: number): number => Math.min(3600, 5 * 2 ** (attempt - 1)) * (0.8 + Math.random() * 0.4)

export { addSeconds }
