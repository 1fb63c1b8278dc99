import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import type { NewLiveEvent } from './live.repo.js'

interface Pending {
  tenantId: string
  e: NewLiveEvent
}

/**
 * Live events written at the end of their transaction. The tenant's counter row (the team stream's seq) is
 * locked from its update to the commit, so every transaction of a workspace that appends an event waits for
 * the one holding it: when the update came first, that wait lasted the rest of the transaction (webhooks,
 * jobs, a dozen round trips), and 50 agents posting at once queued one behind another for seconds. Buffered,
 * the events of a transaction are written last: the sessions' seqs (their rows are locked by the transaction
 * already), the change notices (sent at commit anyway), then one statement that takes the tenant's seqs and
 * inserts the rows: the tenant lock is held for that statement and the commit only. Same order, same seqs:
 * each event still gets the next seq of its session and of its workspace, committed in seq order.
 */
export function createLiveLog(deps: { announce: (trx: Db, tenantId: string, sessionId: string | null) => Promise<void> }) {
  const buffers = new WeakMap<Db, Pending[]>()

  async function flush(trx: Db, events: Pending[]) {
    const byTenant = new Map<string, Pending[]>()
    for (const p of events) byTenant.set(p.tenantId, [...(byTenant.get(p.tenantId) ?? []), p])
    for (const [tenantId, list] of byTenant) {
      const sessionSeq = new Map<string, number>()
      for (const sessionId of new Set(list.map((p) => p.e.sessionId).filter((s): s is string => s !== null))) {
        const n = list.filter((p) => p.e.sessionId === sessionId).length
        const r = await sql<{ last: string }>`
          UPDATE chat_sessions SET live_seq = live_seq + ${n} WHERE tenant_id = ${tenantId} AND id = ${sessionId} RETURNING live_seq::text AS last`.execute(trx)
        if (!r.rows[0]) throw new Error('live event of an unknown session')
        sessionSeq.set(sessionId, Number(r.rows[0].last) - n)
      }
      const rows = list.map((p, ord) => {
        let s: number | null = null
        if (p.e.sessionId) {
          s = sessionSeq.get(p.e.sessionId)! + 1
          sessionSeq.set(p.e.sessionId, s)
        }
        return {
          ord: ord + 1,
          session_id: p.e.sessionId,
          session_seq: s,
          bot_id: p.e.botId,
          type: p.e.type,
          internal: p.e.internal ?? false,
          data: p.e.data,
          created_at: p.e.at.toISOString(),
        }
      })
      for (const key of new Set(list.map((p) => p.e.sessionId))) await deps.announce(trx, tenantId, key)
      const k = rows.length
      await sql`
        WITH c AS (
          INSERT INTO live_counters (tenant_id, last) VALUES (${tenantId}, ${k})
          ON CONFLICT (tenant_id) DO UPDATE SET last = live_counters.last + ${k}
          RETURNING last
        )
        INSERT INTO live_events (tenant_id, seq, session_id, session_seq, bot_id, type, internal, data, created_at)
        SELECT ${tenantId}, c.last - ${k} + v.ord, v.session_id, v.session_seq, v.bot_id, v.type, v.internal, v.data, v.created_at
        FROM c, jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS v(ord int, session_id uuid, session_seq bigint, bot_id uuid, type text, internal boolean, data jsonb, created_at timestamptz)`.execute(trx)
    }
  }

  return {
    /** Keeps the event for the end of `trx` when `trx` runs an `atEnd` callback; false: write it now. */
    defer(trx: Db, tenantId: string, e: NewLiveEvent): boolean {
      const buf = buffers.get(trx)
      if (!buf) return false
      buf.push({ tenantId, e })
      return true
    },
    /** The transaction callback `fn`, which then writes the events it appended (the transaction's last statements). */
    atEnd<T>(fn: (trx: Db) => Promise<T>): (trx: Db) => Promise<T> {
      return async (trx) => {
        const buf: Pending[] = []
        buffers.set(trx, buf)
        try {
          const r = await fn(trx)
          buffers.delete(trx)
          if (buf.length) await flush(trx, buf)
          return r
        } finally {
          buffers.delete(trx)
        }
      }
    },
  }
}
