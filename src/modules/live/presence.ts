import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import type { Clock } from '../../lib/clock.js'
import type { LivePort } from '../shared/live.port.js'

/** An open widget stream refreshes its session's visitor_seen_at this often (well under VISITOR_GONE_MINUTES). */
const REFRESH_MS = 60_000
/** At most this many conversations are closed in one sweep (each in its own transaction). */
const CLOSE_LIMIT = 200

/**
 * Whether the visitor of a waiting conversation is still there (#39). Presence is durable, not a process's
 * memory: an open widget stream writes visitor_seen_at when it opens, every minute while open and when it
 * ends, so a sweep on any process reads the same truth. A visitor message counts as seen too.
 */
export function createPresence(deps: { db: Db; clock: Clock; onBack?: (tenantId: string, sessionId: string, trx: Db) => Promise<void> }) {
  const { db, clock } = deps
  /** Open widget streams of this process, per `<tenant>/<session>`. */
  const open = new Map<string, number>()
  let timer: NodeJS.Timeout | null = null

  async function seen(tenantId: string, sessionIds: string[], trx: Db = db): Promise<void> {
    if (sessionIds.length === 0) return
    const now = clock.now()
    const gone = await trx
      .selectFrom('chat_sessions')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', sessionIds)
      .where('visitor_gone', '=', true)
      .execute()
    await trx
      .updateTable('chat_sessions')
      .set({ visitor_seen_at: now, visitor_gone: false })
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', sessionIds)
      .execute()
    const returned = gone.map((r) => r.id)
    if (returned.length === 0) return
    await trx
      .updateTable('escalation_tickets')
      .set({ visitor_gone: false, visitor_gone_at: null })
      .where('tenant_id', '=', tenantId)
      .where('session_id', 'in', returned)
      .where('visitor_gone', '=', true)
      .execute()
    for (const id of returned) await deps.onBack?.(tenantId, id, trx)
  }

  /** Writes visitor_seen_at for every stream open on this process (the timer's work; the sweep calls it first). */
  async function refresh(): Promise<void> {
    const byTenant = new Map<string, string[]>()
    for (const key of open.keys()) {
      const [tenantId, sessionId] = key.split('/') as [string, string]
      byTenant.set(tenantId, [...(byTenant.get(tenantId) ?? []), sessionId])
    }
    for (const [tenantId, ids] of byTenant) await seen(tenantId, ids)
  }

  return {
    seen,
    refresh,

    /** A widget stream opened: the visitor is here (a gone visitor is back) until `signal` aborts. */
    async streamOpened(tenantId: string, sessionId: string, signal: AbortSignal): Promise<void> {
      const key = `${tenantId}/${sessionId}`
      open.set(key, (open.get(key) ?? 0) + 1)
      if (!timer) {
        timer = setInterval(() => void refresh().catch(() => {}), REFRESH_MS)
        timer.unref()
      }
      signal.addEventListener(
        'abort',
        () => {
          const n = (open.get(key) ?? 1) - 1
          if (n > 0) open.set(key, n)
          else open.delete(key)
          if (open.size === 0 && timer) {
            clearInterval(timer)
            timer = null
          }
          // the moment they left counts as seen (VISITOR_GONE_MINUTES runs from here); it does not clear gone
          void db
            .updateTable('chat_sessions')
            .set({ visitor_seen_at: clock.now() })
            .where('tenant_id', '=', tenantId)
            .where('id', '=', sessionId)
            .where('visitor_gone', '=', false)
            .execute()
            .catch(() => {})
        },
        { once: true },
      )
      await seen(tenantId, [sessionId])
    },

    close() {
      if (timer) clearInterval(timer)
      timer = null
      open.clear()
    },
  }
}

export type Presence = ReturnType<typeof createPresence>

/**
 * The sweep (job live.visitor_gone): a queued or person-owned conversation whose visitor has no open stream
 * and sent nothing for `goneMinutes` (and was not handed off in that time) is marked gone, session and ticket;
 * one gone for `closeHours` with no e-mail address to answer is closed. Safe to run twice. An e-mail customer
 * never has a stream open and never "leaves": their conversation is never marked (#52).
 */
export async function sweepGone(
  deps: { db: Db; clock: Clock; presence: Presence; live: Pick<LivePort, 'changeOwner'> },
  opts: { goneMinutes: number; closeHours: number },
): Promise<{ gone: number; closed: number }> {
  const { db } = deps
  await deps.presence.refresh()
  const now = deps.clock.now()
  const cut = new Date(now.getTime() - opts.goneMinutes * 60_000)
  const marked = await sql<{ tenant_id: string; id: string }>`
    UPDATE chat_sessions s SET visitor_gone = true
    WHERE s.owner IN ('queue', 'human') AND NOT s.visitor_gone AND s.channel <> 'email'
      AND coalesce(s.visitor_seen_at, s.created_at) < ${cut}
      AND NOT EXISTS (SELECT 1 FROM chat_messages m WHERE m.tenant_id = s.tenant_id AND m.session_id = s.id AND m.role = 'user' AND m.created_at >= ${cut})
      AND NOT EXISTS (SELECT 1 FROM escalation_tickets t WHERE t.tenant_id = s.tenant_id AND t.session_id = s.id AND t.created_at >= ${cut})
    RETURNING s.tenant_id, s.id`.execute(db)
  if (marked.rows.length > 0) {
    await sql`
      UPDATE escalation_tickets t SET visitor_gone = true, visitor_gone_at = ${now}
      FROM chat_sessions s
      WHERE s.id = t.session_id AND s.tenant_id = t.tenant_id AND s.visitor_gone AND NOT t.visitor_gone
        AND t.status IN ('open', 'in_progress') AND s.id IN (${sql.join(marked.rows.map((r) => r.id))})`.execute(db)
  }
  // gone long enough and nobody can answer by mail: closed (nobody would read a reply in the widget)
  const closeCut = new Date(now.getTime() - opts.closeHours * 3_600_000)
  const stale = await db
    .selectFrom('escalation_tickets as t')
    .innerJoin('chat_sessions as s', (j) => j.onRef('s.id', '=', 't.session_id').onRef('s.tenant_id', '=', 't.tenant_id'))
    .select(['t.tenant_id', 't.id as ticket_id', 's.id as session_id'])
    .where('t.visitor_gone', '=', true)
    .where('t.visitor_gone_at', '<', closeCut)
    .where('t.status', 'in', ['open', 'in_progress'])
    .where('s.visitor_gone', '=', true)
    .where('s.owner', 'in', ['queue', 'human'])
    .where('s.visitor_email_enc', 'is', null)
    .where('t.user_email_enc', 'is', null)
    .limit(CLOSE_LIMIT)
    .execute()
  let closed = 0
  for (const r of stale) {
    const moved = await db
      .transaction()
      .execute((trx) =>
        deps.live.changeOwner(
          r.tenant_id,
          r.session_id,
          { to: 'closed', from: ['queue', 'human'], by: { type: 'system' }, reason: 'visitor_gone', ticketId: r.ticket_id },
          trx,
        ),
      )
    if (moved.to === 'closed') closed++
  }
  return { gone: marked.rows.length, closed }
}
