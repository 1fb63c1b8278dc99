import { sql } from 'kysely'
import { deleteInBatches } from '../db/batches.js'
import type { Db } from '../db/client.js'
import type { Clock } from '../lib/clock.js'
import { defineJob } from './types.js'

declare module './types.js' {
  interface JobPayloads {
    /** Daily: finished jobs (done or failed) older than JOBS_RETENTION_DAYS are deleted. */
    'jobs.prune': Record<string, never>
  }
}

/** Rows deleted per statement (deleteInBatches). */
const BATCH = 5000

/**
 * The job table keeps finished jobs for a while (what ran, what failed and why); recurring jobs alone add a few
 * thousand rows a day, so the old ones go. Queued and running jobs are never touched. Safe to run twice.
 */
export function pruneFinishedJobs(db: Db, clock: Clock, days: number) {
  return (): Promise<number> => {
    const before = new Date(clock.now().getTime() - days * 86_400_000)
    return deleteInBatches(BATCH, async (limit) => {
      const r = await sql<{ n: number }>`
        WITH gone AS (
          DELETE FROM jobs WHERE id IN (
            SELECT id FROM jobs WHERE status IN ('done', 'failed') AND finished_at < ${before} LIMIT ${limit}
          )
          RETURNING 1
        )
        SELECT count(*)::int AS n FROM gone`.execute(db)
      return r.rows[0]?.n ?? 0
    })
  }
}

export const pruneJobs = (prune: () => Promise<number>) => [
  defineJob({
    kind: 'jobs.prune',
    everySeconds: 86_400,
    maxAttempts: 3,
    handler: async () => {
      await prune()
    },
  }),
]
