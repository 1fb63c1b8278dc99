import { sql } from 'kysely'
import { deleteInBatches } from '../../db/batches.js'
import type { Db } from '../../db/client.js'
import type { SessionOwner } from '../../db/schema/chat.js'
import { writeOperatorMessage } from '../escalations/escalations.repo.js'
import { scopeIds, type BotScope } from '../shared/bot-scope.js'
import { visibleMemberName } from '../shared/member-name.js'

export interface NewLiveEvent {
  sessionId: string | null
  botId: string | null
  type: 'message' | 'owner' | 'typing' | 'read' | 'availability'
  internal?: boolean
  data: Record<string, unknown>
  at: Date
}

export interface LiveEventRow {
  seq: string
  session_id: string | null
  session_seq: string | null
  bot_id: string | null
  type: string
  data: Record<string, unknown>
}

/**
 * A session's columns when its owner changes (setOwner, or the live log's statement writing the change's event):
 * chat_ended is the stored form of closed; a session back with the bot or closed waits for nothing after a hand-off.
 */
export function ownerPatch(owner: SessionOwner, at: Date) {
  return { owner, at, chatEnded: owner === 'closed', clearAwaiting: owner === 'bot' || owner === 'closed' }
}
export type OwnerPatch = ReturnType<typeof ownerPatch>

/**
 * The live conversation's storage: the session's owner, the event log both streams read (sequence numbers
 * taken under row locks held to commit, see 1000_live), operator messages and internal notes, presence.
 */
export function createLiveRepo(db: Db) {
  return {
    /** The session's owner, locked for the rest of the transaction. */
    lockSession(tenantId: string, sessionId: string, trx: Db) {
      return trx
        .selectFrom('chat_sessions')
        .select(['id', 'bot_id', 'owner', 'awaiting'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .forUpdate()
        .executeTakeFirst()
    },

    async setOwner(tenantId: string, sessionId: string, owner: SessionOwner, at: Date, trx: Db): Promise<void> {
      const p = ownerPatch(owner, at)
      await trx
        .updateTable('chat_sessions')
        .set({ owner: p.owner, owner_since: p.at, chat_ended: p.chatEnded, ...(p.clearAwaiting ? { awaiting: null } : {}) })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .execute()
    },

    /** The team's stream after `after`: every event of the member's bots (and workspace-wide ones), in order. */
    async teamEvents(tenantId: string, after: string, scope: BotScope, limit: number): Promise<LiveEventRow[]> {
      const rows = await db
        .selectFrom('live_events')
        .select([sql<string>`seq::text`.as('seq'), 'session_id', sql<string | null>`session_seq::text`.as('session_seq'), 'bot_id', 'type', 'data'])
        .where('tenant_id', '=', tenantId)
        .where('seq', '>', after)
        .$if(scope !== null, (q) => q.where((w) => w.or([w('bot_id', 'in', scopeIds(scope!)), w('bot_id', 'is', null)])))
        .orderBy(sql`live_events.seq`)
        .limit(limit)
        .execute()
      return rows as LiveEventRow[]
    },

    /** The visitor's stream after `after`: this session's events, never an internal one. */
    async sessionEvents(tenantId: string, sessionId: string, after: string, limit: number): Promise<LiveEventRow[]> {
      const rows = await db
        .selectFrom('live_events')
        .select([sql<string>`seq::text`.as('seq'), 'session_id', sql<string | null>`session_seq::text`.as('session_seq'), 'bot_id', 'type', 'data'])
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('session_seq', '>', after)
        .where('internal', '=', false)
        .orderBy(sql`live_events.session_seq`)
        .limit(limit)
        .execute()
      return rows as LiveEventRow[]
    },

    /**
     * Retention: events created before `before` go, every workspace at once (a daily job). The counters stay,
     * so sequence numbers never repeat; a stream asking to resume from a swept seq gets what is left.
     */
    sweepEvents(before: Date, batch = 5000): Promise<number> {
      return deleteInBatches(batch, async (limit) => {
        const r = await sql<{ n: number }>`
          WITH gone AS (
            DELETE FROM live_events WHERE ctid IN (SELECT ctid FROM live_events WHERE created_at < ${before}::timestamptz LIMIT ${limit})
            RETURNING 1
          )
          SELECT count(*)::int AS n FROM gone`.execute(db)
        return r.rows[0]?.n ?? 0
      })
    },

    async lastTeamSeq(tenantId: string): Promise<string> {
      const r = await db.selectFrom('live_counters').select(sql<string>`last::text`.as('last')).where('tenant_id', '=', tenantId).executeTakeFirst()
      return r?.last ?? '0'
    },

    async lastSessionSeq(tenantId: string, sessionId: string): Promise<string> {
      const r = await db
        .selectFrom('chat_sessions')
        .select(sql<string>`live_seq::text`.as('s'))
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .executeTakeFirst()
      return r?.s ?? '0'
    },

    /** The workspace's optional PII types (an operator's text goes into webhook payloads redacted). */
    async optionalPiiTypes(tenantId: string, trx: Db = db): Promise<string[]> {
      const t = await trx.selectFrom('tenants').select('pii_optional_types').where('id', '=', tenantId).executeTakeFirst()
      return (t?.pii_optional_types as string[] | null) ?? []
    },

    /** A member as visitors of `botId` see them (shared/member-name.ts); null for no such member. */
    async memberName(tenantId: string, userId: string, botId: string | null, trx: Db = db): Promise<string | null> {
      const r = await trx
        .selectFrom('users as u')
        .select((eb) => [
          'u.display_name',
          eb
            .selectFrom('bots as b')
            .select('b.name')
            .where('b.tenant_id', '=', tenantId)
            .where('b.id', '=', botId ?? '00000000-0000-0000-0000-000000000000')
            .as('bot_name'),
        ])
        .where('u.tenant_id', '=', tenantId)
        .where('u.id', '=', userId)
        .executeTakeFirst()
      return r ? visibleMemberName(r.display_name, r.bot_name) : null
    },

    member(tenantId: string, userId: string, trx: Db = db) {
      return trx
        .selectFrom('users')
        .select(['id', 'email', 'display_name', 'role', 'bot_ids', 'live_status', 'last_active_at', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', userId)
        .executeTakeFirst()
    },

    /** The ticket's session (unlocked), within the caller's bots. */
    findTicket(tenantId: string, ticketId: string, scope: BotScope, trx: Db = db) {
      return trx
        .selectFrom('escalation_tickets')
        .select(['id', 'session_id'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .$if(scope !== null, (q) => q.where('bot_id', 'in', scopeIds(scope!)))
        .executeTakeFirst()
    },

    /** Auto-assignment: the session's waiting ticket goes to `userId`. */
    async assignOpenTicket(tenantId: string, sessionId: string, userId: string, now: Date, trx: Db): Promise<void> {
      await trx
        .updateTable('escalation_tickets')
        .set({ assignee_user_id: userId, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('status', 'in', ['open', 'in_progress'])
        .where('assignee_user_id', 'is', null)
        .execute()
    },

    /** The ticket a live route acts on, locked, with its session's owner; undefined outside the caller's bots. */
    lockTicket(tenantId: string, ticketId: string, scope: BotScope, trx: Db) {
      return trx
        .selectFrom('escalation_tickets as t')
        .select(['t.id', 't.ticket_number', 't.session_id', 't.bot_id', 't.status', 't.assignee_user_id'])
        .where('t.tenant_id', '=', tenantId)
        .where('t.id', '=', ticketId)
        .$if(scope !== null, (q) => q.where('t.bot_id', 'in', scopeIds(scope!)))
        .forUpdate()
        .executeTakeFirst()
    },

    /** The newest ticket of a session still waiting for a person (its assignee decides who has the conversation). */
    openTicketOf(tenantId: string, sessionId: string, trx: Db = db) {
      return trx
        .selectFrom('escalation_tickets')
        .select(['id', 'assignee_user_id', 'status', 'bot_id'])
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('status', 'in', ['open', 'in_progress'])
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst()
    },

    /** The first operator message takes the ticket: its author becomes the assignee when it had none, and it is being worked on. */
    async takeTicket(tenantId: string, ticketId: string, userId: string | null, now: Date, trx: Db): Promise<void> {
      await trx
        .updateTable('escalation_tickets')
        .set((eb) => ({
          assignee_user_id: eb.fn.coalesce('assignee_user_id', sql<string | null>`${userId}::uuid`),
          status: sql<'in_progress'>`CASE WHEN status = 'open' THEN 'in_progress' ELSE status END`,
          first_response_at: eb.fn.coalesce('first_response_at', sql<Date>`${now}::timestamptz`),
          updated_at: now,
        }))
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .execute()
    },

    insertOperatorMessage(
      tenantId: string,
      m: { id: string; sessionId: string; content: string; authorUserId: string | null; now: Date },
      trx: Db,
    ): Promise<void> {
      return writeOperatorMessage(tenantId, { ...m, debug: { operator_message: true } }, trx)
    },

    async insertNote(
      tenantId: string,
      n: { id: string; sessionId: string; ticketId: string; content: string; authorUserId: string | null; now: Date },
      trx: Db,
    ): Promise<void> {
      await trx
        .insertInto('conversation_notes')
        .values({
          id: n.id,
          tenant_id: tenantId,
          session_id: n.sessionId,
          ticket_id: n.ticketId,
          author_user_id: n.authorUserId,
          content: n.content,
          created_at: n.now,
        })
        .execute()
    },
  }
}

export type LiveRepo = ReturnType<typeof createLiveRepo>
