import { sql } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/client.js'

/**
 * Worker liveness on PostgreSQL: each worker holds a session advisory lock named after its id on a
 * connection of its own for as long as it runs. A process killed hard loses its connection, so PostgreSQL
 * drops the lock within moments; any other worker (or the restarted one) then sees that the holder of a
 * 'running' job is gone and lapses the job's lease, and the next claim takes it, seconds after the crash
 * instead of after the lease (JOB_LEASE_SECONDS). Only ids starting `wl-` are judged this way: a worker of an
 * older version holds no lock, and its jobs keep their lease.
 */
export const LIVENESS_LOCK_CLASS = 23729

export interface Liveness {
  release(): Promise<void>
}

export async function holdLiveness(db: Db, workerId: string, log: FastifyBaseLogger): Promise<Liveness> {
  let release!: () => void
  const released = new Promise<void>((r) => (release = r))
  let taken!: (ok: boolean) => void
  const ready = new Promise<boolean>((r) => (taken = r))
  const held = db
    .connection()
    .execute(async (conn) => {
      const r = await sql<{ ok: boolean }>`SELECT pg_try_advisory_lock(${LIVENESS_LOCK_CLASS}, hashtext(${workerId})) AS ok`.execute(conn)
      const ok = r.rows[0]?.ok === true
      taken(ok)
      if (!ok) return
      await released
      await sql`SELECT pg_advisory_unlock(${LIVENESS_LOCK_CLASS}, hashtext(${workerId}))`.execute(conn)
    })
    .catch((err: Error) => {
      taken(false)
      log.warn({ err: { message: err.message } }, 'worker liveness connection lost')
    })
  if (!(await ready)) {
    release()
    await held
    throw new Error('liveness lock not taken')
  }
  return {
    async release() {
      release()
      await held
    },
  }
}

/**
 * Lapses the lease of every running job held by a `wl-` worker whose liveness lock nobody holds, so the next
 * claim takes it. A job claimed in the same moment by a live worker is safe: that worker took its lock first.
 */
export async function lapseOrphanLeases(db: Db, now: Date): Promise<number> {
  const r = await sql`
    UPDATE jobs SET locked_until = ${new Date(now.getTime() - 1000)}, updated_at = ${now}
    WHERE status = 'running' AND locked_until >= ${now} AND locked_by LIKE 'wl-%'
      AND NOT EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid::bigint = ${LIVENESS_LOCK_CLASS}
          AND l.objid::bigint = (hashtext(jobs.locked_by)::bigint & 4294967295)
      )`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
