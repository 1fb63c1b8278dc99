import type { NewPiiEvent } from '../tenants/privacy/privacy.repo.js'
import { type SessionSearch, sessionSearchWhere } from './session-search.js'
import { sql, type ExpressionBuilder, type Selectable } from 'kysely'
import type { Database } from '../../db/schema.js'
import type { Db } from '../../db/client.js'
import { scopeIds, type BotScope } from '../shared/bot-scope.js'
import { memberNameSql } from '../shared/member-name.js'
import { writeTurn, type TurnWrite } from './turn-write.js'
import type {
  ChatChannel,
  ChatMessagesTable,
  ChatSessionsTable,
  Feedback,
  QuestionOutcome,
  SessionOwner,
  SourceRef,
  TicketTrigger,
} from '../../db/schema/chat.js'

export type SessionRow = Selectable<ChatSessionsTable>
export type MessageRow = Selectable<ChatMessagesTable>

export interface NewMessage {
  id: string
  sessionId: string
  role: 'user' | 'assistant'
  content: string
  contentOriginalEnc?: string | null
  piiCounts?: Record<string, number> | null
  fromOperator?: boolean
  sourceDocuments?: string[]
  sources?: SourceRef[]
  tokensUsed?: number
  debug?: Record<string, unknown> | null
  createdAt: Date
}

/** A PII audit event as the privacy module writes it; the turn's own events go in with the turn (writeTurn). */
export type PiiEvent = NewPiiEvent

/** How a member is named to visitors (shared/member-name.ts): the display name, else the bot's name + " team". */
const sessionBotName = (sessionRef: string) =>
  sql<string | null>`(SELECT bn.name FROM chat_sessions sn JOIN bots bn ON bn.id = sn.bot_id AND bn.tenant_id = sn.tenant_id
    WHERE sn.id = ${sql.ref(sessionRef)} AND sn.tenant_id = ${sql.ref(`${sessionRef.split('.')[0]}.tenant_id`)})`
/** When an operator's message was mailed: its reply row's decision (escalations; 1850_reply_mailed_at indexes it). */
const MAILED_AT = sql<Date | null>`(SELECT r.decided_at FROM operator_replies r WHERE r.message_id = m.id AND r.tenant_id = m.tenant_id AND r.mail_status = 'sent' LIMIT 1)`

const AUTHOR_NAME = memberNameSql(sessionBotName('m.session_id'))
const ASSIGNEE_NAME = memberNameSql(sessionBotName('t.session_id'))

/** The name of the member assigned to the session's newest ticket (a subquery on `s`). */
const assigneeName = (eb: ExpressionBuilder<Database & { s: ChatSessionsTable }, 's'>, tenantId: string) =>
  eb
    .selectFrom('escalation_tickets as t')
    .innerJoin('users as u', 'u.id', 't.assignee_user_id')
    .select(ASSIGNEE_NAME.as('n'))
    .whereRef('t.session_id', '=', 's.id')
    .where('t.tenant_id', '=', tenantId)
    .orderBy('t.created_at', 'desc')
    .limit(1)

export function createChatRepo(db: Db) {
  /** The tenant's sessions of the bots in `scope`, as a subquery. */
  const sessionsOf = (tenantId: string, scope: readonly string[]) =>
    db.selectFrom('chat_sessions').select('id').where('tenant_id', '=', tenantId).where('bot_id', 'in', scopeIds(scope))

  return {
    findSession(tenantId: string, sessionId: string, trx: Db = db) {
      return trx.selectFrom('chat_sessions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', sessionId).executeTakeFirst()
    },

    /** Locks the session for the rest of the transaction (one turn or escalation at a time per session). */
    lockSession(tenantId: string, sessionId: string, trx: Db) {
      return trx.selectFrom('chat_sessions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', sessionId).forUpdate().executeTakeFirst()
    },

    /**
     * Creates a session, with the caller's id when it gave one and that id is free; an id already taken
     * (by any tenant) silently gets a fresh one, so no one learns whether it exists elsewhere. `version`: the new
     * row's version (xmin), for a write planned on the row as created (a turn's hand-off, HandOffPort.plan).
     */
    async insertSession(
      tenantId: string,
      s: {
        id?: string | null
        botId: string
        channel: 'api' | 'widget' | 'email'
        mode: 'identified' | 'anonymous'
        identityEnc: string | null
        locale: string | null
        now: Date
      },
      trx: Db = db,
    ): Promise<{ session: SessionRow; version: string }> {
      const values = {
        tenant_id: tenantId,
        bot_id: s.botId,
        channel: s.channel,
        mode: s.mode,
        identity_enc: s.identityEnc,
        locale: s.locale,
        created_at: s.now,
        last_activity_at: s.now,
      }
      const version = sql<string>`xmin::text`.as('row_version')
      const split = ({ row_version, ...session }: SessionRow & { row_version: string }) => ({ session, version: row_version })
      if (s.id) {
        const row = await trx
          .insertInto('chat_sessions')
          .values({ ...values, id: s.id })
          .onConflict((oc) => oc.column('id').doNothing())
          .returningAll()
          .returning(version)
          .executeTakeFirst()
        if (row) return split(row)
      }
      return split(await trx.insertInto('chat_sessions').values(values).returningAll().returning(version).executeTakeFirstOrThrow())
    },

    /** The newest `limit` messages of the session, oldest first. */
    async recentMessages(tenantId: string, sessionId: string, limit: number, trx: Db = db) {
      const rows = await trx
        .selectFrom('chat_messages')
        .select(['id', 'role', 'content', 'created_at', 'from_operator'])
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute()
      return rows.reverse()
    },

    /** The session's messages, oldest first, each operator message with its author's name. */
    sessionMessages(tenantId: string, sessionId: string, trx: Db = db) {
      return trx
        .selectFrom('chat_messages as m')
        .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'm.author_user_id').on('u.tenant_id', '=', tenantId))
        .selectAll('m')
        .select(sql<string | null>`CASE WHEN m.from_operator THEN ${AUTHOR_NAME} END`.as('author_name'))
        .select(sql<Date | null>`CASE WHEN m.from_operator THEN ${MAILED_AT} END`.as('mailed_at'))
        .where('m.tenant_id', '=', tenantId)
        .where('m.session_id', '=', sessionId)
        .orderBy('m.created_at')
        .orderBy('m.id')
        .execute()
    },

    /** Who answers the session, and the member who has it while a person does. */
    async ownerOf(tenantId: string, sessionId: string): Promise<{ owner: SessionOwner; assignee_name: string | null } | undefined> {
      const row = await db
        .selectFrom('chat_sessions as s')
        .select(['s.owner', (eb) => assigneeName(eb, tenantId).as('assignee_name')])
        .where('s.tenant_id', '=', tenantId)
        .where('s.id', '=', sessionId)
        .executeTakeFirst()
      return row ? { owner: row.owner, assignee_name: row.owner === 'human' ? (row.assignee_name ?? null) : null } : undefined
    },

    async insertMessages(tenantId: string, messages: NewMessage[], trx: Db = db): Promise<void> {
      if (messages.length === 0) return
      await trx
        .insertInto('chat_messages')
        .values(
          messages.map((m) => ({
            id: m.id,
            tenant_id: tenantId,
            session_id: m.sessionId,
            role: m.role,
            content: m.content,
            content_original_enc: m.contentOriginalEnc ?? null,
            pii_counts: m.piiCounts && Object.keys(m.piiCounts).length ? JSON.stringify(m.piiCounts) : null,
            from_operator: m.fromOperator ?? false,
            source_documents: JSON.stringify(m.sourceDocuments ?? []),
            sources: JSON.stringify(m.sources ?? []),
            tokens_used: m.tokensUsed ?? 0,
            debug: m.debug ? JSON.stringify(m.debug) : null,
            created_at: m.createdAt,
          })),
        )
        .execute()
    },

    /** Everything a turn writes, in one statement (turn-write.ts). */
    writeTurn: (tenantId: string, w: TurnWrite, trx: Db = db) => writeTurn(trx, tenantId, w),

    async touchSession(
      tenantId: string,
      sessionId: string,
      p: { addMessages: number; lastQuestion?: string | null; lastAnswerPreview?: string | null; chatEnded?: boolean; now: Date },
      trx: Db = db,
    ): Promise<void> {
      await trx
        .updateTable('chat_sessions')
        .set((eb) => ({
          message_count: eb('message_count', '+', p.addMessages),
          last_activity_at: p.now,
          ...(p.lastQuestion !== undefined ? { last_question: p.lastQuestion } : {}),
          ...(p.lastAnswerPreview !== undefined ? { last_answer_preview: p.lastAnswerPreview } : {}),
          ...(p.chatEnded ? { chat_ended: true } : {}),
        }))
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .execute()
    },

    async insertQuestionLog(
      tenantId: string,
      q: {
        botId: string
        sessionId: string
        messageId: string
        question: string
        outcome: QuestionOutcome
        trigger: TicketTrigger | null
        bestScore: number | null
        now: Date
      },
      trx: Db = db,
    ): Promise<void> {
      await trx
        .insertInto('question_log')
        .values({
          tenant_id: tenantId,
          bot_id: q.botId,
          session_id: q.sessionId,
          message_id: q.messageId,
          question: q.question,
          outcome: q.outcome,
          trigger: q.trigger,
          best_score: q.bestScore,
          created_at: q.now,
        })
        .execute()
    },

    /** The session's newest question was handed to a person after all (a manual escalation). */
    async markLastQuestionEscalated(tenantId: string, sessionId: string, trigger: TicketTrigger, trx: Db = db): Promise<void> {
      await trx
        .updateTable('question_log')
        .set({ outcome: 'escalated', trigger })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', (eb) =>
          eb
            .selectFrom('question_log')
            .select('id')
            .where('tenant_id', '=', tenantId)
            .where('session_id', '=', sessionId)
            .orderBy('created_at', 'desc')
            .limit(1),
        )
        .execute()
    },

    /** Title and public address of the tenant's documents among `ids` (the ones answers cited); deleted ones are absent. */
    citedDocuments(tenantId: string, ids: string[]) {
      if (ids.length === 0) return Promise.resolve([])
      return db.selectFrom('documents').select(['id', 'title', 'filename', 'source_url']).where('tenant_id', '=', tenantId).where('id', 'in', ids).execute()
    },

    /** Sessions with their bot's public id and newest ticket number, most recent activity first. */
    listSessions(
      tenantId: string,
      limit: number,
      offset: number,
      scope: BotScope = null,
      search: SessionSearch | null = null,
      channel: ChatChannel | null = null,
    ) {
      return db
        .selectFrom('chat_sessions as s')
        .innerJoin('bots as b', (j) => j.onRef('b.id', '=', 's.bot_id').onRef('b.tenant_id', '=', 's.tenant_id'))
        .select([
          's.id',
          'b.public_id as bot_public_id',
          's.channel',
          's.mode',
          's.message_count',
          's.last_question',
          's.last_answer_preview',
          's.last_activity_at',
          's.chat_ended',
          's.owner',
          's.language',
          's.language_source',
          's.visitor_gone',
          // an e-mail conversation's subject (its first mail's, redacted as stored; #52)
          sql<string | null>`(SELECT e.subject FROM email_messages e WHERE e.tenant_id = s.tenant_id AND e.session_id = s.id
            AND e.direction = 'in' AND s.channel = 'email' ORDER BY e.created_at, e.id LIMIT 1)`.as('subject'),
          (eb) => assigneeName(eb, tenantId).as('assignee_name'),
          (eb) =>
            eb
              .selectFrom('escalation_tickets as t')
              .select('t.ticket_number')
              .whereRef('t.session_id', '=', 's.id')
              .where('t.tenant_id', '=', tenantId)
              .orderBy('t.created_at', 'desc')
              .limit(1)
              .as('ticket_number'),
        ])
        .where('s.tenant_id', '=', tenantId)
        .$if(scope !== null, (q) => q.where('s.bot_id', 'in', scopeIds(scope!)))
        .$if(channel !== null, (q) => q.where('s.channel', '=', channel!))
        .$if(search !== null, (q) => q.where(sessionSearchWhere(tenantId, search!)))
        .orderBy('s.last_activity_at', 'desc')
        .orderBy('s.id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute()
    },

    countSessions(tenantId: string, scope: BotScope = null, search: SessionSearch | null = null, channel: ChatChannel | null = null) {
      return db
        .selectFrom('chat_sessions as s')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('s.tenant_id', '=', tenantId)
        .$if(scope !== null, (q) => q.where('s.bot_id', 'in', scopeIds(scope!)))
        .$if(channel !== null, (q) => q.where('s.channel', '=', channel!))
        .$if(search !== null, (q) => q.where(sessionSearchWhere(tenantId, search!)))
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },

    /** Erases the encrypted originals of a session; returns the erased messages' entity counts. */
    deleteOriginals(tenantId: string, sessionId: string, trx: Db = db) {
      return trx
        .updateTable('chat_messages')
        .set({ content_original_enc: null })
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('content_original_enc', 'is not', null)
        .returning(['id', 'pii_counts'])
        .execute()
    },

    findMessage(tenantId: string, messageId: string, trx: Db = db) {
      return trx.selectFrom('chat_messages').selectAll().where('tenant_id', '=', tenantId).where('id', '=', messageId).executeTakeFirst()
    },

    /** The visitor message an answer replied to: the session's last user message before it. */
    async questionBefore(tenantId: string, m: { session_id: string; created_at: Date; id: string }, trx: Db = db): Promise<string | null> {
      const row = await trx
        .selectFrom('chat_messages')
        .select('content')
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', m.session_id)
        .where('role', '=', 'user')
        .where((w) => w.or([w('created_at', '<', m.created_at), w.and([w('created_at', '=', m.created_at), w('id', '<', m.id)])]))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst()
      return row?.content ?? null
    },

    async setFeedback(tenantId: string, messageId: string, feedback: Feedback, idealAnswer: string | null, trx: Db = db) {
      const row = await trx
        .updateTable('chat_messages')
        .set({ feedback, ideal_answer: idealAnswer })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', messageId)
        .returning(['id', 'feedback', 'ideal_answer'])
        .executeTakeFirst()
      await trx.updateTable('question_log').set({ feedback }).where('tenant_id', '=', tenantId).where('message_id', '=', messageId).execute()
      return row
    },

    /** Down-voted answers, newest first, each with the visitor message right before it. */
    badAnswers(tenantId: string, limit: number, offset: number, scope: BotScope = null) {
      return db
        .selectFrom('chat_messages as m')
        .select([
          'm.id',
          'm.session_id',
          'm.content',
          'm.ideal_answer',
          'm.created_at',
          (eb) =>
            eb
              .selectFrom('chat_messages as q')
              .select('q.content')
              .whereRef('q.session_id', '=', 'm.session_id')
              .where('q.tenant_id', '=', tenantId)
              .where('q.role', '=', 'user')
              .where((w) =>
                w.or([w('q.created_at', '<', w.ref('m.created_at')), w.and([w('q.created_at', '=', w.ref('m.created_at')), w('q.id', '<', w.ref('m.id'))])]),
              )
              .orderBy('q.created_at', 'desc')
              .orderBy('q.id', 'desc')
              .limit(1)
              .as('question'),
        ])
        .where('m.tenant_id', '=', tenantId)
        .where('m.feedback', '=', 'down')
        .where('m.role', '=', 'assistant')
        .$if(scope !== null, (q) => q.where('m.session_id', 'in', sessionsOf(tenantId, scope!)))
        .orderBy('m.created_at', 'desc')
        .orderBy('m.id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute()
    },

    countBadAnswers(tenantId: string, scope: BotScope = null) {
      return db
        .selectFrom('chat_messages')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .where('feedback', '=', 'down')
        .where('role', '=', 'assistant')
        .$if(scope !== null, (q) => q.where('session_id', 'in', sessionsOf(tenantId, scope!)))
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },

    setChatEnded(tenantId: string, sessionId: string, now: Date, trx: Db = db) {
      return trx
        .updateTable('chat_sessions')
        .set({ chat_ended: true, last_activity_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .execute()
    },

    /** What a turn needs of its tenant in one read: the encrypted key, privacy settings, whether it may answer. */
    tenantSettings(tenantId: string) {
      return db.selectFrom('tenants').select(['id', 'name', 'is_active', 'llm_key_enc', 'pii_optional_types']).where('id', '=', tenantId).executeTakeFirst()
    },
  }
}

export type ChatRepo = ReturnType<typeof createChatRepo>
