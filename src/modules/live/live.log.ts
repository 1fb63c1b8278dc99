import { sql } from 'kysely'
import { CHANGES_CHANNEL } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { OwnerEventWrite } from '../shared/live.port.js'
import type { NewLiveEvent, OwnerPatch } from './live.repo.js'

interface Pending {
  tenantId: string
  e: NewLiveEvent
}

/**
 * Live events written at the end of their transaction. The tenant's counter row (the team stream's seq) is
 * locked from its update to the commit, so every transaction of a workspace that appends an event waits for
 * the one holding it: when the update came first, that wait lasted the rest of the transaction (webhooks,
 * jobs, a dozen round trips), and 50 agents posting at once queued one behind another for seconds. Buffered,
 * the events of a transaction are written last, by one statement that sends their change notices (delivered at
 * commit), takes the sessions' seqs (rows the transaction has locked already) and the tenant's and inserts the
 * rows: the tenant lock is held for that statement and the commit only. Same order, same seqs: each event still
 * gets the next seq of its session and of its workspace, committed in seq order.
 */
export function createLiveLog(deps: {
  /** The change notice of a session's events (null: workspace-wide), registered; its payload is sent by the events' statement. */
  notice: (tenantId: string, sessionId: string | null) => string
}) {
  const buffers = new WeakMap<Db, Pending[]>()

  async function flush(trx: Db, events: Pending[], owner?: OwnerPatch) {
    const byTenant = new Map<string, Pending[]>()
    for (const p of events) byTenant.set(p.tenantId, [...(byTenant.get(p.tenantId) ?? []), p])
    for (const [tenantId, list] of byTenant) {
      // each event's place among its session's events of this transaction (the session's seq = its base + this)
      const perSession = new Map<string, number>()
      const rows = list.map((p, ord) => {
        const sid = p.e.sessionId
        const sord = sid ? (perSession.get(sid) ?? 0) + 1 : null
        if (sid) perSession.set(sid, sord!)
        return {
          ord: ord + 1,
          sord,
          session_id: sid,
          bot_id: p.e.botId,
          type: p.e.type,
          internal: p.e.internal ?? false,
          data: p.e.data,
          created_at: p.e.at.toISOString(),
        }
      })
      const notices = [...new Set(list.map((p) => p.e.sessionId))].map((key) => deps.notice(tenantId, key))
      // an owner change written with its event (write): the session's owner columns in the same UPDATE
      const sessions = [...perSession].map(([id, n]) => ({
        id,
        n,
        ...(owner ? { owner: owner.owner, owner_since: owner.at.toISOString(), chat_ended: owner.chatEnded, clear_awaiting: owner.clearAwaiting } : {}),
      }))
      const k = rows.length
      // one statement: the change notices, the sessions' seqs (rows this transaction has locked already), the tenant's, the rows
      const r = await sql`
        WITH n AS (
          SELECT pg_notify(${CHANGES_CHANNEL}, p) FROM jsonb_array_elements_text(${JSON.stringify(notices)}::jsonb) AS p
        ), s AS (
          UPDATE chat_sessions cs SET live_seq = cs.live_seq + v.n,
            owner = coalesce(v.owner, cs.owner),
            owner_since = coalesce(v.owner_since, cs.owner_since),
            chat_ended = coalesce(v.chat_ended, cs.chat_ended),
            awaiting = CASE WHEN v.clear_awaiting THEN NULL ELSE cs.awaiting END
          FROM jsonb_to_recordset(${JSON.stringify(sessions)}::jsonb) AS v(id uuid, n int, owner text, owner_since timestamptz, chat_ended boolean, clear_awaiting boolean)
          WHERE cs.tenant_id = ${tenantId} AND cs.id = v.id
          RETURNING cs.id, cs.live_seq - v.n AS base
        ), c AS (
          -- selected from n's count, so the notices are sent (a plain CTE runs only when read), once
          INSERT INTO live_counters (tenant_id, last) SELECT ${tenantId}, ${k} FROM (SELECT count(*) FROM n) AS sent
          ON CONFLICT (tenant_id) DO UPDATE SET last = live_counters.last + ${k}
          RETURNING last
        )
        INSERT INTO live_events (tenant_id, seq, session_id, session_seq, bot_id, type, internal, data, created_at)
        SELECT ${tenantId}, c.last - ${k} + v.ord, v.session_id, s.base + v.sord, v.bot_id, v.type, v.internal, v.data, v.created_at
        FROM c CROSS JOIN jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS v(ord int, sord int, session_id uuid, bot_id uuid, type text, internal boolean, data jsonb, created_at timestamptz)
        LEFT JOIN s ON s.id = v.session_id
        WHERE v.session_id IS NULL OR s.id IS NOT NULL
        RETURNING 1 AS one`.execute(trx)
      if (r.rows.length !== k) throw new Error('live event of an unknown session')
    }
  }

  /**
   * One event with its session's owner change, as pieces of another statement that updates the session row (a turn's
   * write, turn-write.ts): what `write` does in its own statement for one event, with the same notice, seqs and row.
   */
  function ownerEventWrite(tenantId: string, e: NewLiveEvent & { sessionId: string }, owner: OwnerPatch): OwnerEventWrite {
    const notice = deps.notice(tenantId, e.sessionId)
    return {
      sessionSet: sql`live_seq = live_seq + 1, owner = ${owner.owner}::text, owner_since = ${owner.at}`,
      chatEnded: owner.chatEnded,
      clearAwaiting: owner.clearAwaiting,
      // all of it only when the session's row was updated (a statement that writes only while its plan holds)
      ctes: (s) => sql`, ln AS (
          SELECT pg_notify(${CHANGES_CHANNEL}, ${notice}) AS sent FROM ${sql.ref(s)}
        ), lc AS (
          INSERT INTO live_counters (tenant_id, last) SELECT ${tenantId}, 1 FROM ln
          ON CONFLICT (tenant_id) DO UPDATE SET last = live_counters.last + 1
          RETURNING last
        ), le AS (
          INSERT INTO live_events (tenant_id, seq, session_id, session_seq, bot_id, type, internal, data, created_at)
          SELECT ${tenantId}, lc.last, ${e.sessionId}::uuid, ${sql.ref(s)}.live_seq, ${e.botId}::uuid, ${e.type}, ${e.internal ?? false},
            ${JSON.stringify(e.data)}::jsonb, ${e.at}
          FROM lc CROSS JOIN ${sql.ref(s)}
          RETURNING 1 AS one
        )`,
    }
  }

  return {
    ownerEventWrite,
    /**
     * Writes one event now (a transaction not run through `atEnd`) in one statement: its notice, the session's
     * seq, the tenant's and the row; with `owner`, the event's session's owner change too (ownerPatch's columns).
     */
    write(trx: Db, tenantId: string, e: NewLiveEvent, owner?: OwnerPatch): Promise<void> {
      return flush(trx, [{ tenantId, e }], owner)
    },
    /** Whether `trx` runs an `atEnd` callback (its events are written last). */
    buffered(trx: Db): boolean {
      return buffers.has(trx)
    },
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
