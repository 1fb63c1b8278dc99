import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import type { AssistCitation, AssistKind } from '../../db/schema/assist.js'
import { scopeIds, type BotScope } from '../shared/bot-scope.js'
import type { ConversationLine } from './assist.fns.js'

/** Where a conversation stands: its newest message and how many it has (both unchanged: nothing new arrived). */
export interface ConversationHead {
  latestId: string | null
  count: number
}

export interface NewDraft {
  id: string
  kind: AssistKind
  ticketId: string
  sessionId: string
  botId: string | null
  userId: string | null
  text: string
  language: string
  cited: AssistCitation[]
  head: ConversationHead
  instruction: string | null
  tokens: number
  modelMs: number | null
  stale: boolean
  now: Date
}

/** Suggestions, summaries and what a ticket's conversation holds; every read takes the tenant first. */
export function createAssistRepo(db: Db) {
  return {
    /** The ticket within the caller's bots, with its conversation, bot and workspace settings the model needs. */
    async ticket(tenantId: string, ticketId: string, scope: BotScope) {
      return db
        .selectFrom('escalation_tickets as t')
        .innerJoin('tenants as w', 'w.id', 't.tenant_id')
        .leftJoin('bots as b', (j) => j.onRef('b.id', '=', 't.bot_id').onRef('b.tenant_id', '=', 't.tenant_id'))
        .leftJoin('chat_sessions as s', (j) => j.onRef('s.id', '=', 't.session_id').onRef('s.tenant_id', '=', 't.tenant_id'))
        .select([
          't.id',
          't.session_id',
          't.bot_id',
          't.status',
          't.primary_question',
          't.user_note',
          'b.name as bot_name',
          'b.agent_instructions',
          'w.llm_key_enc',
          'w.escalation_language',
          's.locale',
          // the session's language when the session has that column (the languages work adds it): read from the
          // row as JSON, so this works with or without it
          sql<string | null>`to_jsonb(s) ->> 'language'`.as('session_language'),
        ])
        .where('t.tenant_id', '=', tenantId)
        .where('t.id', '=', ticketId)
        .$if(scope !== null, (q) => q.where('t.bot_id', 'in', scopeIds(scope!)))
        .executeTakeFirst()
    },

    /**
     * The newest messages of the conversation, oldest first (stored text: a visitor's is redacted), and its head as
     * of the same read (newest message id, message count), in one statement.
     */
    async conversation(tenantId: string, sessionId: string, limit: number): Promise<{ lines: ConversationLine[]; head: ConversationHead }> {
      const r = await sql<{ id: string; role: 'user' | 'assistant'; from_operator: boolean; content: string; n: number }>`
        SELECT id, role, from_operator, content, (count(*) OVER ())::int AS n FROM chat_messages
        WHERE tenant_id = ${tenantId} AND session_id = ${sessionId}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`.execute(db)
      const rows = r.rows
      const head = { latestId: rows[0]?.id ?? null, count: Number(rows[0]?.n ?? 0) }
      return { lines: rows.reverse().map((x) => ({ id: x.id, role: x.role, fromOperator: x.from_operator, content: x.content })), head }
    },

    async head(tenantId: string, sessionId: string): Promise<ConversationHead> {
      const r = await sql<{ latest_id: string | null; n: number }>`
        SELECT (SELECT id FROM chat_messages WHERE tenant_id = ${tenantId} AND session_id = ${sessionId}
                ORDER BY created_at DESC, id DESC LIMIT 1) AS latest_id,
               (SELECT count(*)::int FROM chat_messages WHERE tenant_id = ${tenantId} AND session_id = ${sessionId}) AS n`.execute(db)
      const row = r.rows[0]
      return { latestId: row?.latest_id ?? null, count: Number(row?.n ?? 0) }
    },

    async insert(tenantId: string, d: NewDraft): Promise<void> {
      await db
        .insertInto('assist_drafts')
        .values({
          id: d.id,
          tenant_id: tenantId,
          kind: d.kind,
          ticket_id: d.ticketId,
          session_id: d.sessionId,
          bot_id: d.botId,
          user_id: d.userId,
          text: d.text,
          language: d.language,
          cited: JSON.stringify(d.cited),
          based_on_message_id: d.head.latestId,
          message_count: d.head.count,
          instruction: d.instruction,
          tokens: d.tokens,
          model_ms: d.modelMs,
          stale: d.stale,
          created_at: d.now,
        })
        .execute()
    },

    /** The ticket's newest summary (the cache: still good while the conversation's head is the same). */
    latestSummary(tenantId: string, ticketId: string) {
      return db
        .selectFrom('assist_drafts')
        .select(['text', 'language', 'message_count', 'based_on_message_id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('ticket_id', '=', ticketId)
        .where('kind', '=', 'summary')
        .where('stale', '=', false)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst()
    },

    /** The newest ticket of a conversation (an e-mail draft's: the ticket its turn just opened). */
    ticketOfSession(tenantId: string, sessionId: string) {
      return db
        .selectFrom('escalation_tickets')
        .select(['id', 'bot_id'])
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst()
    },

    /** The bot's draft waiting on a ticket (an e-mail bot in draft mode; no member asked for it), newest, not yet used. */
    waitingDraft(tenantId: string, ticketId: string) {
      return db
        .selectFrom('assist_drafts')
        .select(['id', 'text', 'cited', 'language', 'based_on_message_id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('ticket_id', '=', ticketId)
        .where('kind', '=', 'suggestion')
        .where('user_id', 'is', null)
        .where('used_at', 'is', null)
        .where('stale', '=', false)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst()
    },

    /** A suggestion of this ticket, for the message that uses it (locked: two sends count it once). */
    suggestionOf(tenantId: string, ticketId: string, suggestionId: string, trx: Db) {
      return trx
        .selectFrom('assist_drafts')
        .select(['id', 'text', 'used_at'])
        .where('tenant_id', '=', tenantId)
        .where('ticket_id', '=', ticketId)
        .where('id', '=', suggestionId)
        .where('kind', '=', 'suggestion')
        .forUpdate()
        .executeTakeFirst()
    },

    async markUsed(tenantId: string, suggestionId: string, u: { messageId: string; unedited: boolean; now: Date }, trx: Db): Promise<void> {
      await trx
        .updateTable('assist_drafts')
        .set({ used_at: u.now, used_message_id: u.messageId, used_unedited: u.unedited })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', suggestionId)
        .where('used_at', 'is', null)
        .execute()
    },

    /** The figures of `/analytics/summary`: drafts written in [start, end) for these bots (null: all). */
    async figures(tenantId: string, f: { start: Date; end: Date; botIds: readonly string[] | null }) {
      const bots = f.botIds ? sql`AND bot_id IN (SELECT x::uuid FROM jsonb_array_elements_text(${JSON.stringify(f.botIds)}::jsonb) x)` : sql``
      const r = await sql<{ suggestions: number; used: number; used_unedited: number; summaries: number; tokens: number }>`
        SELECT (count(*) FILTER (WHERE kind = 'suggestion' AND NOT stale))::int AS suggestions,
               (count(*) FILTER (WHERE kind = 'suggestion' AND used_at IS NOT NULL))::int AS used,
               (count(*) FILTER (WHERE kind = 'suggestion' AND used_at IS NOT NULL AND used_unedited))::int AS used_unedited,
               (count(*) FILTER (WHERE kind = 'summary' AND NOT stale))::int AS summaries,
               coalesce(sum(tokens), 0)::float8 AS tokens
        FROM assist_drafts WHERE tenant_id = ${tenantId} AND created_at >= ${f.start} AND created_at < ${f.end} ${bots}`.execute(db)
      const row = r.rows[0]
      return {
        suggestions: row?.suggestions ?? 0,
        used: row?.used ?? 0,
        used_unedited: row?.used_unedited ?? 0,
        summaries: row?.summaries ?? 0,
        tokens: Number(row?.tokens ?? 0),
      }
    },
  }
}

export type AssistRepo = ReturnType<typeof createAssistRepo>
