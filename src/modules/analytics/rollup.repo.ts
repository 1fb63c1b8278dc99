import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import type { ConversationFacts, FactMessage, FactTicket } from './analytics.fns.js'

/** Rollup slots are this long (every IANA offset in use is a multiple of it, so local days are exact). */
export const SLOT_MS = 15 * 60 * 1000
export const slotOf = (d: Date): Date => new Date(Math.floor(d.getTime() / SLOT_MS) * SLOT_MS)

const STATE_ID = 1

export interface SessionRecord {
  id: string
  botId: string
  channel: string
  startedAt: Date
  messages: FactMessage[]
  tickets: FactTicket[]
}

const jsonList = (xs: readonly unknown[]) => JSON.stringify(xs)

/**
 * What the analytics job reads and writes. The sweep (`changedSince`, `dirty`) looks across tenants, as the
 * job queue does; everything else takes the tenant first.
 */
export function createRollupRepo(db: Db) {
  return {
    async watermark(): Promise<Date | null> {
      const row = await db.selectFrom('analytics_state').select('watermark').where('id', '=', STATE_ID).executeTakeFirst()
      return row?.watermark ?? null
    },

    async setWatermark(at: Date): Promise<void> {
      await db
        .insertInto('analytics_state')
        .values({ id: STATE_ID, watermark: at })
        .onConflict((oc) => oc.column('id').doUpdateSet({ watermark: at }))
        .execute()
    },

    /** Conversations with a message or a ticket change at or after `since`, oldest change first. */
    changedSince(since: Date, limit: number) {
      return sql<{ tenant_id: string; session_id: string; at: Date }>`
        SELECT tenant_id, session_id, at FROM (
          SELECT tenant_id, id AS session_id, last_activity_at AS at FROM chat_sessions WHERE last_activity_at >= ${since}
          UNION ALL
          SELECT tenant_id, session_id, updated_at AS at FROM escalation_tickets WHERE updated_at >= ${since} AND session_id IS NOT NULL
        ) x ORDER BY at LIMIT ${limit}`
        .execute(db)
        .then((r) => r.rows)
    },

    /** Conversations marked for a change nothing else records (feedback). */
    dirty(limit: number) {
      return db.selectFrom('analytics_dirty').select(['tenant_id', 'session_id', 'marked_at']).orderBy('marked_at').limit(limit).execute()
    },

    async markDirty(tenantId: string, sessionId: string, now: Date, trx: Db = db): Promise<void> {
      await trx
        .insertInto('analytics_dirty')
        .values({ tenant_id: tenantId, session_id: sessionId, marked_at: now })
        .onConflict((oc) => oc.columns(['tenant_id', 'session_id']).doUpdateSet({ marked_at: now }))
        .execute()
    },

    /** Clears marks the refresh has covered (a mark set again since then stays). */
    async clearDirty(tenantId: string, sessionIds: string[], upTo: Date): Promise<void> {
      if (sessionIds.length === 0) return
      await db.deleteFrom('analytics_dirty').where('tenant_id', '=', tenantId).where('session_id', 'in', sessionIds).where('marked_at', '<=', upTo).execute()
    },

    /** The sessions with their messages (question-log refusals joined) and tickets (first reply joined). */
    async records(tenantId: string, sessionIds: string[]): Promise<SessionRecord[]> {
      if (sessionIds.length === 0) return []
      const [sessions, messages, tickets] = await Promise.all([
        db
          .selectFrom('chat_sessions')
          .select(['id', 'bot_id', 'channel', 'created_at'])
          .where('tenant_id', '=', tenantId)
          .where('id', 'in', sessionIds)
          .execute(),
        db
          .selectFrom('chat_messages as m')
          .leftJoin('question_log as q', (j) => j.onRef('q.message_id', '=', 'm.id').onRef('q.tenant_id', '=', 'm.tenant_id'))
          .select([
            'm.session_id',
            'm.role',
            'm.from_operator',
            'm.feedback',
            'm.tokens_used',
            'm.created_at',
            sql<number | null>`(m.debug->'timings'->>'model')::float8`.as('model_ms'),
            sql<boolean>`coalesce(q.outcome = 'refused', false)`.as('refused'),
          ])
          .where('m.tenant_id', '=', tenantId)
          .where('m.session_id', 'in', sessionIds)
          .orderBy('m.created_at')
          .orderBy('m.id')
          .execute(),
        db
          .selectFrom('escalation_tickets as t')
          .select([
            't.session_id',
            't.created_at',
            't.resolved_at',
            (eb) =>
              eb
                .selectFrom('operator_replies as r')
                .select(sql<Date | null>`min(r.created_at)`.as('m'))
                .whereRef('r.tenant_id', '=', 't.tenant_id')
                .whereRef('r.ticket_id', '=', 't.id')
                .as('first_reply_at'),
          ])
          .where('t.tenant_id', '=', tenantId)
          .where('t.session_id', 'in', sessionIds)
          .execute(),
      ])
      const bySession = new Map<string, SessionRecord>()
      for (const s of sessions) bySession.set(s.id, { id: s.id, botId: s.bot_id, channel: s.channel, startedAt: s.created_at, messages: [], tickets: [] })
      for (const m of messages) {
        bySession.get(m.session_id)?.messages.push({
          role: m.role,
          fromOperator: m.from_operator,
          feedback: m.feedback,
          tokens: m.tokens_used,
          modelMs: m.model_ms === null ? null : Number(m.model_ms),
          refused: m.refused,
          createdAt: m.created_at,
        })
      }
      for (const t of tickets) {
        const firsts = [t.first_reply_at ? new Date(t.first_reply_at) : null, t.resolved_at].filter((d): d is Date => !!d)
        const firstResponseAt = firsts.length ? new Date(Math.min(...firsts.map((d) => d.getTime()))) : null
        bySession.get(t.session_id!)?.tickets.push({ createdAt: t.created_at, firstResponseAt, resolvedAt: t.resolved_at })
      }
      return [...bySession.values()]
    },

    /**
     * Writes the facts of these conversations (null: none, a session without messages) and rebuilds the
     * rollup slots they fall in, under a per-tenant lock so two refreshes never interleave their sums.
     */
    async writeFacts(tenantId: string, facts: { record: SessionRecord; facts: ConversationFacts | null }[], now: Date): Promise<void> {
      if (facts.length === 0) return
      await db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(hashtext(${`analytics:${tenantId}`}))`.execute(trx)
        const present = facts.filter((f) => f.facts !== null)
        const gone = facts.filter((f) => f.facts === null).map((f) => f.record.id)
        const slots = new Set<number>(present.map((f) => slotOf(f.facts!.startedAt).getTime()))
        if (gone.length) {
          const old = await trx
            .deleteFrom('analytics_conversations')
            .where('tenant_id', '=', tenantId)
            .where('session_id', 'in', gone)
            .returning('slot')
            .execute()
          for (const o of old) slots.add(o.slot.getTime())
        }
        if (present.length) {
          await trx
            .insertInto('analytics_conversations')
            .values(
              present.map(({ record: r, facts: f }) => ({
                session_id: r.id,
                tenant_id: tenantId,
                bot_id: r.botId,
                channel: r.channel,
                started_at: f!.startedAt,
                slot: slotOf(f!.startedAt),
                last_message_at: f!.lastMessageAt,
                messages: f!.messages,
                questions: f!.questions,
                bot_up: f!.botUp,
                bot_down: f!.botDown,
                op_up: f!.opUp,
                op_down: f!.opDown,
                tokens: f!.tokens,
                model_hist: JSON.stringify(f!.modelHist),
                tickets: f!.tickets,
                first_response_s: f!.firstResponseS,
                resolve_s: f!.resolveS,
                outcome: f!.outcome,
                refreshed_at: now,
              })),
            )
            .onConflict((oc) =>
              oc.column('session_id').doUpdateSet((eb) => ({
                last_message_at: eb.ref('excluded.last_message_at'),
                messages: eb.ref('excluded.messages'),
                questions: eb.ref('excluded.questions'),
                bot_up: eb.ref('excluded.bot_up'),
                bot_down: eb.ref('excluded.bot_down'),
                op_up: eb.ref('excluded.op_up'),
                op_down: eb.ref('excluded.op_down'),
                tokens: eb.ref('excluded.tokens'),
                model_hist: eb.ref('excluded.model_hist'),
                tickets: eb.ref('excluded.tickets'),
                first_response_s: eb.ref('excluded.first_response_s'),
                resolve_s: eb.ref('excluded.resolve_s'),
                outcome: eb.ref('excluded.outcome'),
                refreshed_at: eb.ref('excluded.refreshed_at'),
              })),
            )
            .execute()
        }
        await rebuildSlots(
          trx,
          tenantId,
          [...slots].map((t) => new Date(t).toISOString()),
        )
      })
    },
  }
}

/** Rollup grains: 15-minute slots (any zone), hours (whole-hour zones), UTC days (the inside of a range). */
export const GRAINS = { q: SLOT_MS, h: 3600_000, d: 86400_000 } as const
export type Grain = keyof typeof GRAINS
const binOf = (t: number, g: Grain) => Math.floor(t / GRAINS[g]) * GRAINS[g]

/**
 * Recomputes the rollup rows of these 15-minute slots, and of the hours and UTC days they are in, from the
 * facts (idempotent: delete and sum again).
 */
async function rebuildSlots(trx: Db, tenantId: string, slots: string[]): Promise<void> {
  if (slots.length === 0) return
  const times = slots.map((x) => Date.parse(x))
  for (const g of Object.keys(GRAINS) as Grain[]) {
    const bins = [...new Set(times.map((t) => binOf(t, g)))]
    const lo = new Date(Math.min(...bins))
    const hi = new Date(Math.max(...bins) + GRAINS[g])
    const inBins = sql`(SELECT x::timestamptz FROM jsonb_array_elements_text(${jsonList(bins.map((b) => new Date(b).toISOString()))}::jsonb) x)`
    await sql`DELETE FROM analytics_rollup WHERE tenant_id = ${tenantId}::uuid AND grain = ${g} AND slot IN ${inBins}`.execute(trx)
    await sql`
      WITH c AS (
        SELECT x.* FROM (
          SELECT *, date_bin(${`${GRAINS[g] / 1000} seconds`}::interval, started_at, '2000-01-01T00:00:00Z'::timestamptz) AS b
          FROM analytics_conversations WHERE tenant_id = ${tenantId}::uuid AND started_at >= ${lo} AND started_at < ${hi}
        ) x WHERE x.b IN ${inBins}
      ), h AS (
        SELECT bot_id, channel, b, jsonb_object_agg(k, n) AS hist
        FROM (SELECT c.bot_id, c.channel, c.b, e.key AS k, sum(e.value::int) AS n FROM c, jsonb_each_text(c.model_hist) e GROUP BY 1, 2, 3, 4) x
        GROUP BY 1, 2, 3
      )
      INSERT INTO analytics_rollup (tenant_id, grain, bot_id, channel, slot, hod, conversations, questions, handed_off, resolved_confirmed, resolved_assumed,
                                    unresolved, bot_up, bot_down, op_up, op_down, tokens, model_hist)
      SELECT ${tenantId}::uuid, ${g}, c.bot_id, c.channel, c.b, extract(hour from c.b AT TIME ZONE 'UTC')::int, count(*)::int, sum(c.questions)::int,
             count(*) FILTER (WHERE c.outcome = 'handed_off')::int, count(*) FILTER (WHERE c.outcome = 'resolved_confirmed')::int,
             count(*) FILTER (WHERE c.outcome = 'resolved_assumed')::int, count(*) FILTER (WHERE c.outcome = 'unresolved')::int,
             sum(c.bot_up)::int, sum(c.bot_down)::int, sum(c.op_up)::int, sum(c.op_down)::int, sum(c.tokens)::bigint, coalesce(h.hist, '{}'::jsonb)
      FROM c LEFT JOIN h ON h.bot_id = c.bot_id AND h.channel = c.channel AND h.b = c.b
      GROUP BY c.bot_id, c.channel, c.b, h.hist`.execute(trx)
  }
}

export type RollupRepo = ReturnType<typeof createRollupRepo>
