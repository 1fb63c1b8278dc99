import { sql, type Selectable } from 'kysely'
import type { Db } from '../../db/client.js'
import type { EscalationTicketsTable, TicketPriority, TicketTrigger, TranscriptEntry } from '../../db/schema/chat.js'

export type TicketRow = Selectable<EscalationTicketsTable>

export interface NewTicket {
  ticketNumber: string
  seq: number
  sessionId: string | null
  botId: string | null
  priority: TicketPriority
  trigger: TicketTrigger
  primaryQuestion: string
  primaryQuestionOriginalEnc: string | null
  transcript: TranscriptEntry[]
  userNote: string | null
  userEmailEnc: string | null
  /** Cipher.emailHash of the address, for an exact search. */
  userEmailHash: string | null
  userName: string | null
  userId: string | null
  evidence: unknown[]
  now: Date
}

export function createTicketsRepo(db: Db) {
  return {
    /** The tenant's next ticket number: one row per tenant, incremented in place, so concurrent escalations never share one. */
    async nextSeq(tenantId: string, trx: Db): Promise<number> {
      const { rows } = await sql<{ last: number }>`
        INSERT INTO ticket_counters (tenant_id, last) VALUES (${tenantId}, 1)
        ON CONFLICT (tenant_id) DO UPDATE SET last = ticket_counters.last + 1
        RETURNING last
      `.execute(trx)
      return Number(rows[0]!.last)
    },

    insert(tenantId: string, t: NewTicket, trx: Db = db) {
      return trx
        .insertInto('escalation_tickets')
        .values({
          tenant_id: tenantId,
          ticket_number: t.ticketNumber,
          seq: t.seq,
          session_id: t.sessionId,
          bot_id: t.botId,
          priority: t.priority,
          trigger: t.trigger,
          primary_question: t.primaryQuestion,
          primary_question_original_enc: t.primaryQuestionOriginalEnc,
          transcript: JSON.stringify(t.transcript),
          user_note: t.userNote,
          user_email_enc: t.userEmailEnc,
          user_email_hash: t.userEmailHash,
          user_name: t.userName,
          user_id: t.userId,
          evidence: JSON.stringify(t.evidence),
          created_at: t.now,
          updated_at: t.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
    },

    /** The session's ticket still waiting for an operator (open or in progress), newest first. */
    findOpenForSession(tenantId: string, sessionId: string, trx: Db = db) {
      return trx
        .selectFrom('escalation_tickets')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('status', 'in', ['open', 'in_progress'])
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst()
    },

    /** The session's newest ticket when it was resolved at or after `since` (a candidate to reopen). */
    resolvedSinceForSession(tenantId: string, sessionId: string, since: Date, trx: Db = db) {
      return trx
        .selectFrom('escalation_tickets')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst()
        .then((t) => (t && t.status === 'resolved' && t.resolved_at && t.resolved_at >= since ? t : undefined))
    },

    /** Open again, with the conversation since: the resolution stays on record, the assignee keeps it. */
    reopen(tenantId: string, ticketId: string, patch: { transcript: TranscriptEntry[]; userNote: string | null; now: Date }, trx: Db = db) {
      return trx
        .updateTable('escalation_tickets')
        .set({
          status: 'open',
          resolved_at: null,
          transcript: JSON.stringify(patch.transcript),
          ...(patch.userNote ? { user_note: patch.userNote } : {}),
          updated_at: patch.now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .where('status', '=', 'resolved')
        .returningAll()
        .executeTakeFirst()
    },

    latestNumberForSession(tenantId: string, sessionId: string, trx: Db = db) {
      return trx
        .selectFrom('escalation_tickets')
        .select('ticket_number')
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst()
        .then((r) => r?.ticket_number ?? null)
    },

    /** A later escalation of the same session adds to the open ticket instead of opening another. */
    appendToTicket(tenantId: string, ticketId: string, patch: { transcript: TranscriptEntry[]; userNote: string | null; now: Date }, trx: Db = db) {
      return trx
        .updateTable('escalation_tickets')
        .set({
          transcript: JSON.stringify(patch.transcript),
          ...(patch.userNote ? { user_note: patch.userNote } : {}),
          updated_at: patch.now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .returningAll()
        .executeTakeFirstOrThrow()
    },
  }
}

export type TicketsRepo = ReturnType<typeof createTicketsRepo>
