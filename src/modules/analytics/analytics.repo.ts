import { scopeIds } from '../shared/bot-scope.js'
import { sql, type RawBuilder } from 'kysely'
import type { Db } from '../../db/client.js'
import type { AnalyticsRollupTable } from '../../db/schema/analytics.js'
import { FINAL_AFTER_MS, type RollupRead } from './analytics.fns.js'

/** Which conversations a figure covers: started in [start, end), of these bots (null: all), of one channel. */
export interface FigureFilter {
  start: Date
  end: Date
  botIds: readonly string[] | null
  channel: string | null
  /** Group by local day in this zone; null: one total. */
  tz: string | null
  /** The rollup rows that sum [start, end): which grain over which part (analytics.fns.ts rangeReads). */
  reads: RollupRead[]
}

/** The rollup's counters summed over a local day (or the whole range: `day` null). */
export type RollupSums = { day: string | null } & Pick<
  AnalyticsRollupTable,
  | 'conversations'
  | 'questions'
  | 'handed_off'
  | 'resolved_confirmed'
  | 'resolved_assumed'
  | 'unresolved'
  | 'bot_up'
  | 'bot_down'
  | 'op_up'
  | 'op_down'
  | 'tokens'
>

const ALL = sql<string | null>`null::text`
const dayOf = (tz: string | null, col: RawBuilder<unknown>) => (tz ? sql<string>`to_char(${col} AT TIME ZONE ${tz}, 'YYYY-MM-DD')` : ALL)

/** The figures' reads: the rollup for sums, the per-conversation facts for what cannot be summed. */
export function createAnalyticsRepo(db: Db) {
  /** WHERE of the rollup or the facts, tenant first. */
  function where(tenantId: string, f: FigureFilter, table: 'r' | 'c') {
    const time =
      table === 'r'
        ? sql`(${sql.join(
            f.reads.map((x) => {
              const hod = x.hours ? sql` AND r.hod ${x.hours.only ? sql`IN` : sql`NOT IN`} (${sql.join(x.hours.list.map((h) => sql`${h}::int`))})` : sql``
              return sql`(r.grain = ${x.grain}${hod} AND r.slot >= ${x.from} AND r.slot < ${x.to})`
            }),
            sql` OR `,
          )})`
        : sql`c.started_at >= ${f.start} AND c.started_at < ${f.end}`
    const parts = [sql`${sql.ref(`${table}.tenant_id`)} = ${tenantId}::uuid`, time]
    if (f.botIds) parts.push(sql`${sql.ref(`${table}.bot_id`)} IN (SELECT x::uuid FROM jsonb_array_elements_text(${JSON.stringify(f.botIds)}::jsonb) x)`)
    if (f.channel) parts.push(sql`${sql.ref(`${table}.channel`)} = ${f.channel}`)
    return sql.join(parts, sql` AND `)
  }

  return {
    async sums(tenantId: string, f: FigureFilter): Promise<RollupSums[]> {
      const day = dayOf(f.tz, sql`r.slot`)
      const r = await sql<RollupSums>`
        SELECT ${day} AS day, coalesce(sum(conversations), 0)::int AS conversations, coalesce(sum(questions), 0)::int AS questions,
               coalesce(sum(handed_off), 0)::int AS handed_off, coalesce(sum(resolved_confirmed), 0)::int AS resolved_confirmed,
               coalesce(sum(resolved_assumed), 0)::int AS resolved_assumed, coalesce(sum(unresolved), 0)::int AS unresolved,
               coalesce(sum(bot_up), 0)::int AS bot_up, coalesce(sum(bot_down), 0)::int AS bot_down,
               coalesce(sum(op_up), 0)::int AS op_up, coalesce(sum(op_down), 0)::int AS op_down, coalesce(sum(tokens), 0)::float8 AS tokens
        FROM analytics_rollup r WHERE ${where(tenantId, f, 'r')} GROUP BY 1`.execute(db)
      return r.rows
    },

    /** The model latency histogram ({bucket: count}) per day (or in total). */
    async modelHist(tenantId: string, f: FigureFilter): Promise<{ day: string | null; bucket: string; n: number }[]> {
      const day = dayOf(f.tz, sql`r.slot`)
      const r = await sql<{ day: string | null; bucket: string; n: number }>`
        SELECT ${day} AS day, e.key AS bucket, sum(e.value::int)::int AS n
        FROM analytics_rollup r, jsonb_each_text(r.model_hist) e WHERE ${where(tenantId, f, 'r')} GROUP BY 1, 2`.execute(db)
      return r.rows
    },

    /**
     * Conversations of the range still within 24 h of their last message, by final outcome: the figures count
     * them as pending instead (the rollup holds every conversation with its outcome as if final).
     */
    async recent(tenantId: string, f: FigureFilter, now: Date): Promise<{ day: string | null; outcome: string; n: number }[]> {
      const day = dayOf(f.tz, sql`c.started_at`)
      const r = await sql<{ day: string | null; outcome: string; n: number }>`
        SELECT ${day} AS day, c.outcome, count(*)::int AS n FROM analytics_conversations c
        WHERE ${where(tenantId, f, 'c')} AND c.last_message_at > ${new Date(now.getTime() - FINAL_AFTER_MS)} GROUP BY 1, 2`.execute(db)
      return r.rows
    },

    /** First response and resolution times (s) of the conversations' first tickets: p50 and p90. */
    async ticketTimes(tenantId: string, f: FigureFilter) {
      const day = dayOf(f.tz, sql`c.started_at`)
      const pc = (p: number, col: string) => sql<number | null>`percentile_cont(${p}::float8) WITHIN GROUP (ORDER BY ${sql.ref(col)})`
      const r = await sql<{ day: string | null; fr50: number | null; fr90: number | null; rs50: number | null; rs90: number | null }>`
        SELECT ${day} AS day, ${pc(0.5, 'c.first_response_s')} AS fr50, ${pc(0.9, 'c.first_response_s')} AS fr90,
               ${pc(0.5, 'c.resolve_s')} AS rs50, ${pc(0.9, 'c.resolve_s')} AS rs90
        FROM analytics_conversations c WHERE ${where(tenantId, f, 'c')} AND c.tickets > 0 GROUP BY 1`.execute(db)
      return r.rows
    },

    /**
     * Hand-offs of the range (tickets opened in [start, end) of the bots): the wait from the ticket to the first
     * time a person had the conversation (live owner `human`), and those the visitor left before any human
     * reply (no reply, not resolved, the conversation quiet for `quietMs` or closed).
     */
    async queueTimes(tenantId: string, f: FigureFilter, now: Date, quietMs: number) {
      const bots = f.botIds ? sql`AND t.bot_id IN (SELECT x::uuid FROM jsonb_array_elements_text(${JSON.stringify(f.botIds)}::jsonb) x)` : sql``
      const quietBefore = new Date(now.getTime() - quietMs)
      const r = await sql<{ w50: number | null; w90: number | null; abandoned: number }>`
        WITH h AS (
          SELECT t.id, t.first_response_at, t.resolved_at, s.owner, s.last_activity_at,
            extract(epoch FROM ((SELECT min(e.created_at) FROM live_events e
              WHERE e.tenant_id = t.tenant_id AND e.session_id = t.session_id AND e.type = 'owner' AND e.data->>'owner' = 'human'
                AND e.created_at >= t.created_at) - t.created_at)) AS wait_s
          FROM escalation_tickets t JOIN chat_sessions s ON s.id = t.session_id AND s.tenant_id = t.tenant_id
          WHERE t.tenant_id = ${tenantId} AND t.created_at >= ${f.start} AND t.created_at < ${f.end} ${bots}
        )
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY wait_s) AS w50, percentile_cont(0.9) WITHIN GROUP (ORDER BY wait_s) AS w90,
          (count(*) FILTER (WHERE wait_s IS NULL AND first_response_at IS NULL AND resolved_at IS NULL
            AND (owner = 'closed' OR last_activity_at < ${quietBefore})))::int AS abandoned
        FROM h`.execute(db)
      return r.rows[0] ?? { w50: null, w90: null, abandoned: 0 }
    },

    /**
     * Per agent (#39): the hand-offs of the range (tickets opened in [start, end) of the bots) each member has,
     * with the first reply and the resolution times (s, from the hand-off) of those tickets: p50 and p90. A
     * member no longer in the workspace keeps their rows, named by what the users row still says.
     */
    async agentTimes(tenantId: string, f: FigureFilter) {
      const bots = f.botIds ? sql`AND t.bot_id IN (SELECT x::uuid FROM jsonb_array_elements_text(${JSON.stringify(f.botIds)}::jsonb) x)` : sql``
      const channel = f.channel
        ? sql`AND EXISTS (SELECT 1 FROM chat_sessions cs WHERE cs.tenant_id = t.tenant_id AND cs.id = t.session_id AND cs.channel = ${f.channel})`
        : sql``
      const pc = (p: number, col: string) => sql<number | null>`percentile_cont(${p}::float8) WITHIN GROUP (ORDER BY ${sql.ref(col)})`
      const r = await sql<{
        user_id: string
        name: string | null
        conversations: number
        resolved: number
        fr50: number | null
        fr90: number | null
        rs50: number | null
        rs90: number | null
      }>`
        WITH a AS (
          SELECT t.assignee_user_id AS user_id, t.resolved_at,
            extract(epoch FROM (t.first_response_at - t.created_at))::float8 AS fr_s,
            extract(epoch FROM (t.resolved_at - t.created_at))::float8 AS rs_s
          FROM escalation_tickets t
          WHERE t.tenant_id = ${tenantId} AND t.created_at >= ${f.start} AND t.created_at < ${f.end}
            AND t.assignee_user_id IS NOT NULL ${bots} ${channel}
        )
        SELECT a.user_id, coalesce(nullif(trim(u.display_name), ''), u.email) AS name, count(*)::int AS conversations,
          (count(*) FILTER (WHERE a.resolved_at IS NOT NULL))::int AS resolved,
          ${pc(0.5, 'a.fr_s')} AS fr50, ${pc(0.9, 'a.fr_s')} AS fr90, ${pc(0.5, 'a.rs_s')} AS rs50, ${pc(0.9, 'a.rs_s')} AS rs90
        FROM a LEFT JOIN users u ON u.id = a.user_id
        GROUP BY a.user_id, u.display_name, u.email
        ORDER BY count(*) DESC, a.user_id`.execute(db)
      return r.rows
    },

    /** The bots of a tenant that exist (a foreign or unknown bot id is a 404). */
    async knownBots(tenantId: string, botIds: readonly string[]): Promise<string[]> {
      if (botIds.length === 0) return []
      const rows = await db
        .selectFrom('bots')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('id', 'in', [...botIds])
        .execute()
      return rows.map((r) => r.id)
    },

    /** The gap analyzer's active topics with most questions. */
    topGaps(tenantId: string, limit: number) {
      return db
        .selectFrom('gaps')
        .select(['id', 'source', 'label', 'question_count', 'classification', 'example_questions', 'last_question_at'])
        .where('tenant_id', '=', tenantId)
        .where('status', '=', 'active')
        .where('classification', '!=', 'covered')
        .orderBy('question_count', 'desc')
        .orderBy('id')
        .limit(limit)
        .execute()
    },

    /** The gaps a scoped view matches its bots' questions to (as many as the analyzer keeps active). */
    gapTerms(tenantId: string, limit: number) {
      return db
        .selectFrom('gaps')
        .select(['id', 'source', 'classification', 'terms'])
        .where('tenant_id', '=', tenantId)
        .where('status', '=', 'active')
        .where('classification', '!=', 'covered')
        .orderBy('question_count', 'desc')
        .orderBy('id')
        .limit(limit)
        .execute()
    },

    /** These bots' logged (redacted) questions since a time, newest first. */
    botQuestions(tenantId: string, botIds: readonly string[], since: Date, limit: number) {
      return db
        .selectFrom('question_log')
        .select(['question', 'session_id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('bot_id', 'in', scopeIds(botIds))
        .where('created_at', '>=', since)
        .orderBy('created_at', 'desc')
        .limit(limit)
        .execute()
    },

    /** The newest conversation that asked each of these (redacted) questions, by exact text. */
    async conversationsAsking(tenantId: string, questions: readonly string[], botIds: readonly string[] | null) {
      if (questions.length === 0) return []
      let q = db
        .selectFrom('question_log')
        .select(['question', 'session_id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where(sql<boolean>`md5(question) IN (SELECT md5(x) FROM jsonb_array_elements_text(${JSON.stringify(questions)}::jsonb) x)`)
        .where('session_id', 'is not', null)
      if (botIds) q = q.where('bot_id', 'in', [...botIds])
      return q.orderBy('created_at', 'desc').limit(500).execute()
    },
  }
}

export type AnalyticsRepo = ReturnType<typeof createAnalyticsRepo>
