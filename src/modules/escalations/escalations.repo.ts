import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import { scopeIds, type BotScope } from '../shared/bot-scope.js'
import type { TranscriptEntry } from '../../db/schema/chat.js'
import type { ReplyMailStatus } from '../../db/schema/escalations.js'
import { visibleMemberName } from '../shared/member-name.js'
import { applyTicketFilter, type TicketFilter } from './ticket-filter.js'

/**
 * The operator side of tickets: listing with the bot's public id and the session's identity, status
 * moves, operator replies and their mail decision, notification markers and erasure of originals.
 * Ticket creation lives in tickets.repo.ts; the hand-off (handoff.ts) uses both.
 */
/** A ticket list's assignee filter: a user id, null for unassigned tickets, undefined for all. */
export type AssigneeFilter = string | null | undefined

/**
 * An operator's text as an assistant message (from_operator) in the visitor's chat, counted in the session with
 * its preview. `debug` says which path wrote it: a ticket's reply here, a live conversation's message in live.repo.ts.
 */
export async function writeOperatorMessage(
  tenantId: string,
  m: { id: string; sessionId: string; content: string; authorUserId?: string | null; debug: Record<string, unknown>; now: Date },
  trx: Db,
): Promise<void> {
  await trx
    .insertInto('chat_messages')
    .values({
      id: m.id,
      tenant_id: tenantId,
      session_id: m.sessionId,
      role: 'assistant',
      content: m.content,
      from_operator: true,
      author_user_id: m.authorUserId,
      source_documents: '[]',
      sources: '[]',
      debug: JSON.stringify(m.debug),
      created_at: m.now,
    })
    .execute()
  const preview = m.content.replace(/\s+/g, ' ').trim()
  await trx
    .updateTable('chat_sessions')
    .set((eb) => ({
      message_count: eb('message_count', '+', 1),
      last_answer_preview: preview.length > 200 ? `${preview.slice(0, 199)}…` : preview,
      last_activity_at: m.now,
    }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', m.sessionId)
    .execute()
}

export function createEscalationsRepo(db: Db) {
  const ticketQuery = (trx: Db, tenantId: string, scope: BotScope = null) =>
    trx
      .selectFrom('escalation_tickets as t')
      .leftJoin('bots as b', (j) => j.onRef('b.id', '=', 't.bot_id').on('b.tenant_id', '=', tenantId))
      .leftJoin('chat_sessions as s', (j) => j.onRef('s.id', '=', 't.session_id').on('s.tenant_id', '=', tenantId))
      .leftJoin('users as a', (j) => j.onRef('a.id', '=', 't.assignee_user_id').on('a.tenant_id', '=', tenantId))
      .selectAll('t')
      .select([
        'b.public_id as bot_public_id',
        'b.name as bot_name',
        's.identity_enc as session_identity_enc',
        's.locale as session_locale',
        's.visitor_email_enc as session_email_enc',
        's.owner as session_owner',
        's.language as session_language',
        's.channel as session_channel',
        // an e-mail conversation's subject (redacted as stored): its first mail's
        sql<string | null>`(SELECT e.subject FROM email_messages e WHERE e.tenant_id = t.tenant_id AND e.session_id = t.session_id
          AND e.direction = 'in' AND s.channel = 'email' ORDER BY e.created_at, e.id LIMIT 1)`.as('email_subject'),
        'a.email as assignee_email',
        'a.display_name as assignee_display_name',
        // the visitor's messages since the team last wrote (or since the hand-off): the inbox's unread count
        sql<number>`(SELECT count(*)::int FROM chat_messages m WHERE m.tenant_id = t.tenant_id AND m.session_id = t.session_id
          AND m.role = 'user' AND m.created_at > GREATEST(t.created_at, COALESCE((SELECT max(o.created_at) FROM chat_messages o
          WHERE o.tenant_id = t.tenant_id AND o.session_id = t.session_id AND o.from_operator), t.created_at)))`.as('unread_count'),
      ])
      .where('t.tenant_id', '=', tenantId)
      .$if(scope !== null, (q) => q.where('t.bot_id', 'in', scopeIds(scope!)))

  type Filter = TicketFilter

  /** Locks the ticket row for the rest of the transaction; undefined when it is not this tenant's (or outside the caller's bots). */
  const lockTicket = (tenantId: string, ticketId: string, trx: Db, scope: BotScope) =>
    trx
      .selectFrom('escalation_tickets')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', ticketId)
      .$if(scope !== null, (q) => q.where('bot_id', 'in', scopeIds(scope!)))
      .forUpdate()
      .executeTakeFirst()

  return {
    list(tenantId: string, f: Filter & { limit: number; offset: number }) {
      const query = applyTicketFilter(ticketQuery(db, tenantId, f.scope), f)
      // the default view is a queue: visitors who left after everyone still there, a visitor who asked for a person
      // before the automatic hand-offs (#52), then who waits longest first
      const ordered = f.needsPerson
        ? query.orderBy('t.visitor_gone').orderBy(sql`(t.trigger <> 'user_request')`).orderBy('t.created_at').orderBy('t.seq')
        : query.orderBy('t.created_at', 'desc').orderBy('t.seq', 'desc')
      return ordered.limit(f.limit).offset(f.offset).execute()
    },

    count(tenantId: string, f: Filter) {
      const query = db.selectFrom('escalation_tickets as t').select(sql<number>`count(*)::int`.as('n')).where('t.tenant_id', '=', tenantId)
      return applyTicketFilter(query, f)
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },

    /** The conversation's internal notes, oldest first: for the team's ticket view only (never a visitor's read). */
    notes(tenantId: string, sessionId: string) {
      return db
        .selectFrom('conversation_notes as n')
        .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'n.author_user_id').on('u.tenant_id', '=', tenantId))
        .select(['n.id', 'n.content', 'n.created_at', 'u.email as author_email', 'u.display_name as author_display_name'])
        .where('n.tenant_id', '=', tenantId)
        .where('n.session_id', '=', sessionId)
        .orderBy('n.created_at')
        .limit(500)
        .execute()
    },

    /** The ticket, if it is this tenant's and within the caller's bots. */
    find(tenantId: string, ticketId: string, trx: Db = db, scope: BotScope = null) {
      return ticketQuery(trx, tenantId, scope).where('t.id', '=', ticketId).executeTakeFirst()
    },

    /**
     * Locks the ticket's conversation, then the ticket: the one lock order of every change that touches both
     * (a turn's hand-off and the live routes take the session first too), so two of them never deadlock.
     */
    async lockWithSession(tenantId: string, ticketId: string, trx: Db, scope: BotScope = null) {
      const peek = await trx
        .selectFrom('escalation_tickets')
        .select('session_id')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .executeTakeFirst()
      if (peek?.session_id) {
        await trx.selectFrom('chat_sessions').select('id').where('tenant_id', '=', tenantId).where('id', '=', peek.session_id).forUpdate().execute()
      }
      return lockTicket(tenantId, ticketId, trx, scope)
    },

    /** Locks the ticket row for the rest of the transaction; undefined when it is not this tenant's (or outside the caller's bots). */
    lock(tenantId: string, ticketId: string, trx: Db, scope: BotScope = null) {
      return lockTicket(tenantId, ticketId, trx, scope)
    },

    async setAssignee(tenantId: string, ticketId: string, userId: string | null, now: Date, trx: Db): Promise<void> {
      await trx
        .updateTable('escalation_tickets')
        // a taken ticket is being worked on (viewing it no longer says so, #52)
        .set({
          assignee_user_id: userId,
          updated_at: now,
          ...(userId ? { status: sql<'in_progress'>`CASE WHEN status = 'open' THEN 'in_progress' ELSE status END` } : {}),
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .execute()
    },

    /** A member of the workspace who could be given a ticket, with its mail preference. */
    member(tenantId: string, userId: string, trx: Db = db) {
      return trx
        .selectFrom('users')
        .select(['id', 'email', 'role', 'bot_ids', 'can_view_original', 'notify_on_assignment'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', userId)
        .executeTakeFirst()
    },

    async resolve(tenantId: string, ticketId: string, text: string, now: Date, trx: Db): Promise<void> {
      await trx
        .updateTable('escalation_tickets')
        .set((eb) => ({
          status: 'resolved',
          resolution_text: text,
          resolved_at: now,
          updated_at: now,
          first_response_at: eb.fn.coalesce('first_response_at', sql<Date>`${now}::timestamptz`),
        }))
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .execute()
    },

    /** The latest ticket of the session (the one a visitor's e-mail belongs to). */
    latestForSession(tenantId: string, sessionId: string, trx: Db = db) {
      return trx
        .selectFrom('escalation_tickets')
        .select(['id', 'user_email_enc', 'status', 'primary_question'])
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst()
    },

    /**
     * The conversation to date as a ticket shows it: visitor, bot and operator messages (redacted text; internal
     * notes live elsewhere and never appear), oldest first, the last `limit` of them. An operator's message carries
     * when its mail left (null: not mailed, or not yet).
     */
    async conversation(
      tenantId: string,
      sessionId: string,
      limit: number,
      trx: Db = db,
    ): Promise<(TranscriptEntry & { id: string; mailed_at?: string | null })[]> {
      const rows = await trx
        .selectFrom('chat_messages as m')
        .leftJoin('operator_replies as r', (j) => j.onRef('r.message_id', '=', 'm.id').on('r.tenant_id', '=', tenantId).on('r.mail_status', '=', 'sent'))
        .select(['m.id', 'm.role', 'm.content', 'm.from_operator', 'm.created_at', 'r.decided_at as mailed_at'])
        .where('m.tenant_id', '=', tenantId)
        .where('m.session_id', '=', sessionId)
        .orderBy('m.created_at', 'desc')
        .orderBy('m.id', 'desc')
        .limit(limit)
        .execute()
      return rows.reverse().map((m) => ({
        id: m.id,
        role: m.from_operator ? 'operator' : m.role,
        content: m.content,
        created_at: m.created_at.toISOString(),
        ...(m.from_operator ? { mailed_at: m.mailed_at ? new Date(m.mailed_at).toISOString() : null } : {}),
      }))
    },

    /** The ticket's e-mail: encrypted, and its keyed hash for an exact search (1665_email_search). */
    async setTicketEmail(tenantId: string, ticketId: string, email: { enc: string; hash: string }, now: Date, trx: Db): Promise<void> {
      await trx
        .updateTable('escalation_tickets')
        .set({ user_email_enc: email.enc, user_email_hash: email.hash, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .execute()
    },

    async setSessionAwaiting(tenantId: string, sessionId: string, awaiting: string | null, trx: Db = db, email?: { enc: string; hash: string }): Promise<void> {
      await trx
        .updateTable('chat_sessions')
        .set({ awaiting, ...(email ? { visitor_email_enc: email.enc, visitor_email_hash: email.hash } : {}) })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .execute()
    },

    lockSession(tenantId: string, sessionId: string, trx: Db) {
      return trx
        .selectFrom('chat_sessions')
        .select(['id', 'awaiting', 'chat_ended', 'visitor_email_enc'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .forUpdate()
        .executeTakeFirst()
    },

    /** The operator's reply as an assistant message in the visitor's chat. */
    insertOperatorMessage(
      tenantId: string,
      m: { id: string; sessionId: string; content: string; authorUserId: string | null; now: Date },
      trx: Db,
    ): Promise<void> {
      return writeOperatorMessage(tenantId, { ...m, debug: { operator_reply: true } }, trx)
    },

    insertReply(tenantId: string, r: { ticketId: string; sessionId: string; messageId: string; actorUserId: string | null; dueAt: Date; now: Date }, trx: Db) {
      return trx
        .insertInto('operator_replies')
        .values({
          tenant_id: tenantId,
          ticket_id: r.ticketId,
          session_id: r.sessionId,
          message_id: r.messageId,
          actor_user_id: r.actorUserId,
          due_at: r.dueAt,
          created_at: r.now,
        })
        .returning(['id'])
        .executeTakeFirstOrThrow()
    },

    /**
     * The reply, locked, with what its mail decision needs: the reply message's time, the visitor's read
     * cursor's time, and the e-mail addresses known for the ticket and the session.
     */
    lockReply(tenantId: string, replyId: string, trx: Db) {
      return trx
        .selectFrom('operator_replies as r')
        .innerJoin('escalation_tickets as t', (j) => j.onRef('t.id', '=', 'r.ticket_id').on('t.tenant_id', '=', tenantId))
        .leftJoin('chat_messages as m', 'm.id', 'r.message_id')
        .leftJoin('chat_sessions as s', (j) => j.onRef('s.id', '=', 'r.session_id').on('s.tenant_id', '=', tenantId))
        .leftJoin('chat_messages as cur', (j) => j.onRef('cur.id', '=', 's.read_message_id').onRef('cur.session_id', '=', 's.id'))
        .select([
          'r.id',
          'r.session_id',
          'r.mail_status',
          'r.message_id',
          'm.content as reply_text',
          'm.created_at as reply_at',
          'cur.created_at as read_at',
          'cur.id as read_id',
          't.id as ticket_id',
          't.ticket_number',
          't.primary_question',
          't.user_email_enc',
          's.visitor_email_enc',
          's.locale',
          's.language',
          's.channel',
        ])
        .where('r.tenant_id', '=', tenantId)
        .where('r.id', '=', replyId)
        .forUpdate('r')
        .executeTakeFirst()
    },

    /** The session a reply belongs to, unlocked (to lock the session's replies in one order first). */
    async replySession(tenantId: string, replyId: string, trx: Db): Promise<string | null> {
      const r = await trx.selectFrom('operator_replies').select('session_id').where('tenant_id', '=', tenantId).where('id', '=', replyId).executeTakeFirst()
      return r?.session_id ?? null
    },

    /** A session's replies still waiting for their mail decision, locked in creation order, with their text and time. */
    pendingSessionReplies(tenantId: string, sessionId: string, trx: Db) {
      return trx
        .selectFrom('operator_replies as r')
        .leftJoin('chat_messages as m', 'm.id', 'r.message_id')
        .select(['r.id', 'm.content as text', 'm.created_at as at', 'r.message_id'])
        .where('r.tenant_id', '=', tenantId)
        .where('r.session_id', '=', sessionId)
        .where('r.mail_status', '=', 'pending')
        .orderBy('r.created_at')
        .orderBy('r.id')
        .forUpdate('r')
        .execute()
    },

    /** The session's channel: an e-mail conversation's replies are mailed at once, a chat's after the grace period. */
    async sessionChannel(tenantId: string, sessionId: string, trx: Db = db): Promise<string | null> {
      const row = await trx.selectFrom('chat_sessions').select('channel').where('tenant_id', '=', tenantId).where('id', '=', sessionId).executeTakeFirst()
      return row?.channel ?? null
    },

    /** How a reply is signed in its mail: the member's display name, else the session's bot name + " team". */
    async replyAuthor(tenantId: string, sessionId: string, userId: string | null, trx: Db = db): Promise<string> {
      const bot = await trx
        .selectFrom('chat_sessions as s')
        .innerJoin('bots as b', 'b.id', 's.bot_id')
        .select('b.name')
        .where('s.tenant_id', '=', tenantId)
        .where('s.id', '=', sessionId)
        .executeTakeFirst()
      const user = userId
        ? await trx.selectFrom('users').select('display_name').where('tenant_id', '=', tenantId).where('id', '=', userId).executeTakeFirst()
        : undefined
      return visibleMemberName(user?.display_name, bot?.name)
    },

    async decideReply(tenantId: string, replyId: string, status: Exclude<ReplyMailStatus, 'pending'>, now: Date, trx: Db): Promise<void> {
      await trx
        .updateTable('operator_replies')
        .set({ mail_status: status, decided_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', replyId)
        .where('mail_status', '=', 'pending')
        .execute()
    },

    repliesOf(tenantId: string, ticketId: string) {
      return db
        .selectFrom('operator_replies')
        .select(['id', 'message_id', 'mail_status', 'due_at', 'decided_at', 'created_at', 'actor_user_id'])
        .where('tenant_id', '=', tenantId)
        .where('ticket_id', '=', ticketId)
        .orderBy('created_at')
        .execute()
    },

    /** Whether a ticket mail of this kind was queued already. */
    async notificationSent(tenantId: string, ticketId: string, kind: string): Promise<boolean> {
      const row = await db
        .selectFrom('ticket_notifications')
        .select('ticket_id')
        .where('tenant_id', '=', tenantId)
        .where('ticket_id', '=', ticketId)
        .where('kind', '=', kind)
        .executeTakeFirst()
      return !!row
    },

    /** Marks a ticket mail as queued; false when it already was (so a job run twice queues it once). */
    async claimNotification(tenantId: string, ticketId: string, kind: string, now: Date, trx: Db): Promise<boolean> {
      const row = await trx
        .insertInto('ticket_notifications')
        .values({ tenant_id: tenantId, ticket_id: ticketId, kind, created_at: now })
        .onConflict((oc) => oc.columns(['ticket_id', 'kind']).doNothing())
        .returning('ticket_id')
        .executeTakeFirst()
      return !!row
    },

    async eraseTicketOriginal(tenantId: string, ticketId: string, now: Date, trx: Db): Promise<boolean> {
      const r = await trx
        .updateTable('escalation_tickets')
        .set({ primary_question_original_enc: null, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .where('primary_question_original_enc', 'is not', null)
        .executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },

    /** Erases the encrypted originals of the session's messages up to `until` (the ticket's transcript). */
    eraseMessageOriginals(tenantId: string, sessionId: string, until: Date, trx: Db) {
      return trx
        .updateTable('chat_messages')
        .set({ content_original_enc: null })
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('created_at', '<=', until)
        .where('content_original_enc', 'is not', null)
        .returning(['id', 'pii_counts'])
        .execute()
    },

    tenantPrivacy(tenantId: string) {
      return db.selectFrom('tenants').select(['pii_optional_types', 'escalation_language']).where('id', '=', tenantId).executeTakeFirst()
    },
  }
}

export type EscalationsRepo = ReturnType<typeof createEscalationsRepo>
export type TicketView = NonNullable<Awaited<ReturnType<EscalationsRepo['find']>>>
