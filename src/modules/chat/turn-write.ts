import { sql, type RawBuilder } from 'kysely'
import type { Db } from '../../db/client.js'
import { PREPARED, tenantChecked } from '../../db/prepared.js'
import type { QuestionOutcome, SessionOwner, TicketTrigger } from '../../db/schema/chat.js'
import type { TicketWrite } from '../escalations/handoff.js'
import type { OwnerEventWrite } from '../shared/live.port.js'
import type { NewMessage, PiiEvent } from './chat.repo.js'

export type TurnWrite = {
  sessionId: string
  messages: NewMessage[]
  lastQuestion: string | null
  lastAnswerPreview: string | null
  chatEnded: boolean
  now: Date
  pii: PiiEvent[]
  questionLog: {
    botId: string
    messageId: string
    question: string
    outcome: QuestionOutcome
    trigger: TicketTrigger | null
    bestScore: number | null
  } | null
  /**
   * The bot's part (its messages, preview and question log) is stored only while the bot owns the
   * conversation, read under the session's row lock in this very statement: an agent who took over while
   * the answer was being written wins, and the answer is dropped.
   */
  onlyIfBot?: boolean
  /** The session's language, set by this write when it has none yet or the visitor chose it (stage 1b settled it this turn). */
  language?: { language: string; source: string } | null
  /** An owner change of this turn (its hand-off), written by this statement: the session's owner columns and the live event. */
  ownerEvent?: OwnerEventWrite | null
  /** A hand-off's follow-up of the session (handoff.ts): what it waits for next, an e-mail the visitor already wrote. */
  sessionFollowUp?: { email: { enc: string; hash: string } | null; awaiting: 'email' | null } | null
  /**
   * A hand-off planned before this statement (HandOffPort.plan), written by it: its ticket, and everything else of
   * the turn, only while the session's row is still the version the plan was read from and the bot owns it;
   * otherwise nothing at all (`written` false), and the caller hands off in a transaction instead.
   */
  handOff?: (TicketWrite & { previewText: string }) | null
}

/** preview() (stage 10) in SQL, of a text whose whitespace is collapsed already. */
const previewSql = (text: RawBuilder<string>) =>
  sql<string>`(SELECT CASE WHEN char_length(r) > 200 THEN left(r, 199) || '…' ELSE r END FROM (SELECT ${text} AS r) AS pv)`

/**
 * Everything a turn writes, in ONE statement (data-modifying CTEs): its messages, the session's
 * counters, previews and language (once known), PII events and the question-log row. A single statement is atomic, and a
 * turn costs one round trip instead of a transaction's six.
 */
export async function writeTurn(
  trx: Db,
  tenantId: string,
  w: TurnWrite,
): Promise<{ owner: SessionOwner; answered: boolean; written: boolean; ticketNumber: string | null }> {
  const messages = JSON.stringify(
    w.messages.map((m) => ({
      id: m.id,
      role: m.role,
      content: m.content,
      content_original_enc: m.contentOriginalEnc ?? null,
      pii_counts: m.piiCounts && Object.keys(m.piiCounts).length ? m.piiCounts : null,
      from_operator: m.fromOperator ?? false,
      source_documents: m.sourceDocuments ?? [],
      sources: m.sources ?? [],
      tokens_used: m.tokensUsed ?? 0,
      debug: m.debug ?? null,
      created_at: m.createdAt.toISOString(),
    })),
  )
  const pii = JSON.stringify(
    w.pii.map((e) => ({
      entity_type: e.entityType,
      action: e.action,
      direction: e.direction,
      count: e.count,
      ticket_id: e.ticketId ?? null,
      actor_user_id: e.actorUserId ?? null,
    })),
  )
  const q = w.questionLog ? JSON.stringify([{ ...w.questionLog, best_score: w.questionLog.bestScore }]) : '[]'
  const cas = w.onlyIfBot ?? false
  const lang = w.language?.language ?? null
  const langSource = w.language?.source ?? null
  const ev = w.ownerEvent ?? null
  const fu = w.sessionFollowUp ?? null
  const h = w.handOff ?? null
  // with a planned hand-off, everything is written only when its ticket was (`bot`); the bot's words get its number
  const slot = h?.placeholder ?? null
  const numbered = (text: RawBuilder<string>) => (slot ? sql<string>`replace(${text}, ${slot}::text, (SELECT ticket_number FROM t))` : text)
  const preview = h && slot ? previewSql(numbered(sql`${h.previewText}::text`)) : sql`${w.lastAnswerPreview}::text`
  // a few fixed shapes (which parts are present), values as parameters: prepared once per connection
  const { rows } = await sql<{ owner: SessionOwner; events?: number; written: boolean; ticket_number: string | null; sent: boolean }>`${PREPARED}
      WITH o AS (
        SELECT owner${h ? sql`, xmin::text AS v` : sql``} FROM chat_sessions WHERE id = ${w.sessionId}::uuid AND ${tenantChecked(tenantId)} FOR UPDATE
      )${
        h
          ? sql`, hg AS MATERIALIZED (
        SELECT coalesce((SELECT owner = 'bot' AND v = ${h.sessionVersion}::text FROM o), false) AS ok
      ), ${h.ctes}, bot AS (
        SELECT EXISTS (SELECT 1 FROM t) AS ok
      )`
          : sql`, bot AS (
        SELECT NOT ${cas}::boolean OR coalesce((SELECT owner FROM o), 'bot') = 'bot' AS ok
      )`
      }, x AS (
        SELECT * FROM jsonb_to_recordset(${messages}::jsonb) AS x(id uuid, role text, content text, content_original_enc text, pii_counts jsonb, from_operator boolean,
             source_documents jsonb, sources jsonb, tokens_used int, debug jsonb, created_at timestamptz)
        WHERE ${h ? sql`(SELECT ok FROM bot)` : sql`x.role = 'user' OR (SELECT ok FROM bot)`}
      ), m AS (
        INSERT INTO chat_messages (id, tenant_id, session_id, role, content, content_original_enc, pii_counts, from_operator, source_documents, sources, tokens_used, debug, created_at)
        SELECT x.id, ${tenantId}::uuid, ${w.sessionId}::uuid, x.role,
               ${slot ? sql`CASE WHEN x.role = 'assistant' THEN ${numbered(sql`x.content`)} ELSE x.content END` : sql`x.content`},
               x.content_original_enc, x.pii_counts, x.from_operator, coalesce(x.source_documents, '[]'), coalesce(x.sources, '[]'), x.tokens_used,
               ${slot ? sql`CASE WHEN x.role = 'assistant' THEN ${numbered(sql`x.debug::text`)}::jsonb ELSE x.debug END` : sql`x.debug`}, x.created_at
        FROM x
      ), s AS (
        UPDATE chat_sessions SET
          message_count = message_count + (SELECT count(*) FROM x)::int,
          last_activity_at = ${w.now},
          last_question = coalesce(${w.lastQuestion}::text, last_question),
          last_answer_preview = CASE WHEN (SELECT ok FROM bot) THEN coalesce(${preview}, last_answer_preview) ELSE last_answer_preview END,
          chat_ended = ${ev ? sql`${ev.chatEnded}::boolean` : sql`chat_ended`} OR (${w.chatEnded}::boolean AND (SELECT ok FROM bot)),
          language = CASE WHEN ${lang}::text IS NOT NULL AND (language IS NULL OR ${langSource}::text = 'visitor') THEN ${lang}::text ELSE language END,
          language_source = CASE WHEN ${lang}::text IS NOT NULL AND (language IS NULL OR ${langSource}::text = 'visitor') THEN ${langSource}::text ELSE language_source END
          ${ev ? sql`, ${ev.sessionSet}` : sql``}
          ${fu ? sql`, visitor_email_enc = coalesce(${fu.email?.enc ?? null}::text, visitor_email_enc), visitor_email_hash = coalesce(${fu.email?.hash ?? null}::text, visitor_email_hash)` : sql``}
          ${ev || fu ? sql`, awaiting = ${ev?.clearAwaiting ? sql`NULL` : fu ? sql`${fu.awaiting}::text` : sql`awaiting`}` : sql``}
        WHERE id = ${w.sessionId}::uuid AND ${tenantChecked(tenantId)}${h ? sql` AND (SELECT ok FROM bot)` : sql``}
        RETURNING live_seq
      )${ev ? ev.ctes('s') : sql``}, p AS (
        INSERT INTO pii_events (tenant_id, entity_type, action, direction, count, session_id, ticket_id, actor_user_id, created_at)
        SELECT ${tenantId}::uuid, x.entity_type, x.action, x.direction, x.count, ${w.sessionId}::uuid, x.ticket_id, x.actor_user_id, ${w.now}
        FROM jsonb_to_recordset(${pii}::jsonb) AS x(entity_type text, action text, direction text, count int, ticket_id uuid, actor_user_id uuid)
        ${h ? sql`WHERE (SELECT ok FROM bot)` : sql``}
      ), q AS (
        INSERT INTO question_log (tenant_id, bot_id, session_id, message_id, question, outcome, trigger, best_score, created_at)
        SELECT ${tenantId}::uuid, x."botId", ${w.sessionId}::uuid, x."messageId", x.question, x.outcome, x.trigger, x.best_score, ${w.now}
        FROM jsonb_to_recordset(${q}::jsonb) AS x("botId" uuid, "messageId" uuid, question text, outcome text, trigger text, best_score real)
        WHERE (SELECT ok FROM bot)
      )
      SELECT coalesce((SELECT owner FROM o), 'bot') AS owner, (SELECT ok FROM bot) AS written${ev ? sql`, (SELECT count(*) FROM le)::int AS events` : sql``}${
        h ? sql`, (SELECT ticket_number FROM t) AS ticket_number, ${h.sent} AS sent` : sql``
      }
    `.execute(trx)
  const r = rows[0]
  const written = !h || !!r?.written
  if (ev && written && r?.events !== 1) throw new Error('live event of an unknown session')
  const owner = r?.owner ?? 'bot'
  return { owner, answered: !cas || owner === 'bot', written, ticketNumber: r?.ticket_number ?? null }
}
