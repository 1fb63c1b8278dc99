import { sql, type RawBuilder, type Selectable } from 'kysely'
import type { Db } from '../../db/client.js'
import { PREPARED, tenantChecked } from '../../db/prepared.js'
import type { EscalationTicketsTable, SessionOwner, TicketPriority, TicketTrigger, TranscriptEntry } from '../../db/schema/chat.js'

export type TicketRow = Selectable<EscalationTicketsTable>

export interface NewTicket {
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

/** A session's tickets and messages as a hand-off reads them (handOffState). */
export interface HandOffState {
  /**
   * The session's ticket waiting for an operator; with its number, priority, assignee and row version (xmin) for a
   * write planned before the lock (a turn's hand-off in its own statement: it writes only while the row is this version).
   */
  open: { id: string; user_email_enc: string | null; ticket_number: string; priority: TicketPriority; assignee_user_id: string | null; version: string } | null
  newest: { id: string; status: TicketRow['status']; resolved_at: Date | null; user_email_enc: string | null } | null
  messages: Array<{ role: 'user' | 'assistant'; content: string; created_at: Date; from_operator: boolean }>
  emailCandidates: string[]
}

/** What a hand-off adds to a ticket it opens, reopens or adds to. */
export interface TicketPatch {
  transcript: TranscriptEntry[]
  /** Replaces the ticket's note when given (empty: kept). */
  userNote: string | null
  now: Date
}

/**
 * Written by the ticket's own statement when a hand-off follows up (handoff.ts): an e-mail the visitor already
 * wrote, for a ticket without one (the session keeps it too), and what the session waits for next.
 */
export interface FollowUpWrite {
  sessionId: string
  email: { enc: string; hash: string } | null
  awaiting: 'email' | null
  /** The session's side is written by the caller's own statement on the session row (a turn's write), not here. */
  sessionByCaller?: boolean
}

const patchSet = (p: TicketPatch, f: FollowUpWrite | undefined) => sql`
  transcript = ${JSON.stringify(p.transcript)}::jsonb, user_note = coalesce(${p.userNote || null}::text, user_note), updated_at = ${p.now},
  user_email_enc = coalesce(${f?.email?.enc ?? null}::text, user_email_enc), user_email_hash = coalesce(${f?.email?.hash ?? null}::text, user_email_hash)`

/** The session's side of a follow-up, as a data-modifying CTE after the ticket's (`t`): only when a ticket was written. */
const followUpSession = (tenantId: string, f: FollowUpWrite | undefined) =>
  f && !f.sessionByCaller
    ? sql`, s AS (
          UPDATE chat_sessions SET awaiting = ${f.awaiting}::text,
            visitor_email_enc = coalesce(${f.email?.enc ?? null}::text, visitor_email_enc), visitor_email_hash = coalesce(${f.email?.hash ?? null}::text, visitor_email_hash)
          WHERE tenant_id = ${tenantId} AND id = ${f.sessionId} AND EXISTS (SELECT 1 FROM t)
        )`
    : sql``

/** More written by a new ticket's statement, reading its CTE `t` (the notification job: JobQueue.enqueueSql). */
export interface AlsoWritten {
  ctes: RawBuilder<unknown>
  /** Evaluated by the final SELECT (always true). */
  sent: RawBuilder<boolean>
}

type StateRow = { k: string; id: string; a: string | null; b: string | null; at: Date | null; op: boolean | null; n: number }

/** What a hand-off reads of the session (handOffState): one UNION ALL, rows tagged by `k`. */
const handOffRead = (tenantId: string, sessionId: string, opts: { messages: number; emails: boolean }) => sql`
        (SELECT 'open' AS k, id, user_email_enc AS a,
            jsonb_build_object('number', ticket_number, 'priority', priority, 'assignee', assignee_user_id, 'v', xmin::text)::text AS b,
            NULL::timestamptz AS at, NULL::boolean AS op, 0 AS n
          FROM escalation_tickets WHERE session_id = ${sessionId} AND ${tenantChecked(tenantId)} AND status IN ('open', 'in_progress')
          ORDER BY created_at DESC LIMIT 1)
        UNION ALL
        (SELECT 'newest', id, status, user_email_enc, resolved_at, NULL, 0
          FROM escalation_tickets WHERE session_id = ${sessionId} AND ${tenantChecked(tenantId)}
          ORDER BY created_at DESC LIMIT 1)
        UNION ALL
        (SELECT 'message', id, role, content, created_at, from_operator, (row_number() OVER (ORDER BY created_at DESC, id DESC))::int
          FROM chat_messages WHERE session_id = ${sessionId} AND ${tenantChecked(tenantId)}
          ORDER BY created_at DESC, id DESC LIMIT ${opts.messages})
        UNION ALL
        (SELECT 'email', id, NULL, content_original_enc, created_at, NULL, (row_number() OVER (ORDER BY created_at DESC))::int
          FROM chat_messages
          WHERE ${opts.emails}::boolean AND session_id = ${sessionId} AND ${tenantChecked(tenantId)} AND role = 'user' AND content_original_enc IS NOT NULL
          ORDER BY created_at DESC LIMIT 20)`

function stateOf(rows: StateRow[]): HandOffState {
  const of = (k: string) => rows.filter((r) => r.k === k).sort((x, y) => x.n - y.n)
  const open = of('open')[0]
  const newest = of('newest')[0]
  const o = open ? (JSON.parse(open.b!) as { number: string; priority: TicketPriority; assignee: string | null; v: string }) : null
  return {
    open: open && o ? { id: open.id, user_email_enc: open.a, ticket_number: o.number, priority: o.priority, assignee_user_id: o.assignee, version: o.v } : null,
    newest: newest ? { id: newest.id, status: newest.a as TicketRow['status'], resolved_at: newest.at, user_email_enc: newest.b } : null,
    // oldest first, as the transcript keeps them
    messages: of('message')
      .reverse()
      .map((m) => ({ role: m.a as 'user' | 'assistant', content: m.b ?? '', created_at: m.at!, from_operator: m.op ?? false })),
    emailCandidates: of('email').map((e) => e.b!),
  }
}

/**
 * A new ticket under the tenant's next number, as CTEs of a statement (`t`: the ticket, RETURNING *): the counter (one
 * row per tenant, incremented in place, so concurrent escalations never share a number) and the insert, only when
 * `when` holds. The number is formatTicketNumber's (tickets.fns.ts) written in SQL: ESC- and the sequence,
 * zero-padded to four digits at least. `t.id`: the ticket's id when the caller chose it.
 */
export const insertCtes = (
  tenantId: string,
  t: NewTicket & { id?: string },
  follow?: FollowUpWrite,
  also?: AlsoWritten,
  when: RawBuilder<boolean> = sql`true`,
) => sql`
        c AS (
          INSERT INTO ticket_counters (tenant_id, last) SELECT ${tenantId}::uuid, 1 WHERE ${when}
          ON CONFLICT (tenant_id) DO UPDATE SET last = ticket_counters.last + 1
          RETURNING last
        ), t AS (
          INSERT INTO escalation_tickets (id, tenant_id, ticket_number, seq, session_id, bot_id, priority, trigger, primary_question,
            primary_question_original_enc, transcript, user_note, user_email_enc, user_email_hash, user_name, user_id, evidence, created_at, updated_at)
          SELECT coalesce(${t.id ?? null}::uuid, gen_random_uuid()), ${tenantId}, 'ESC-' || repeat('0', greatest(0, 4 - length(c.last::text))) || c.last::text, c.last,
            ${t.sessionId}, ${t.botId}, ${t.priority}, ${t.trigger}, ${t.primaryQuestion}, ${t.primaryQuestionOriginalEnc}, ${JSON.stringify(t.transcript)}::jsonb, ${t.userNote},
            coalesce(${follow?.email?.enc ?? null}::text, ${t.userEmailEnc}::text), coalesce(${follow?.email?.hash ?? null}::text, ${t.userEmailHash}::text),
            ${t.userName}, ${t.userId}, ${JSON.stringify(t.evidence)}::jsonb, ${t.now}, ${t.now}
          FROM c
          RETURNING *
        )${followUpSession(tenantId, follow)}${also?.ctes ?? sql``}`

/**
 * The hand-off added to the session's open ticket, as CTEs of a statement (`t`: the ticket, RETURNING *); with
 * `version`, only while the ticket's row is that version (HandOffState.open.version) and still waits for an operator.
 */
export const appendCtes = (
  tenantId: string,
  ticketId: string,
  patch: TicketPatch,
  follow?: FollowUpWrite,
  guard?: { when: RawBuilder<boolean>; version: string },
) => sql`
        t AS (
          UPDATE escalation_tickets SET ${patchSet(patch, follow)}
          WHERE tenant_id = ${tenantId} AND id = ${ticketId}${guard ? sql` AND ${guard.when} AND xmin::text = ${guard.version} AND status IN ('open', 'in_progress')` : sql``}
          RETURNING *
        )${followUpSession(tenantId, follow)}`

/** A session row with handOffRead's rows aggregated as JSON. */
type SessionWithState = { owner: SessionOwner; bot_id: string; state: Array<Omit<StateRow, 'at'> & { at: string | null }> }

const aggregatedState = (rows: SessionWithState['state']) => stateOf(rows.map((x) => ({ ...x, at: x.at === null ? null : new Date(x.at) })))

export function createTicketsRepo(db: Db) {
  return {
    /**
     * A new ticket under the tenant's next number, in one statement (insertCtes), with what `follow` and `also` add.
     */
    async insertNumbered(tenantId: string, t: NewTicket, trx: Db, follow?: FollowUpWrite, also?: AlsoWritten): Promise<TicketRow> {
      const { rows } = await sql<TicketRow>`
        WITH ${insertCtes(tenantId, t, follow, also)}
        SELECT * FROM t WHERE ${also?.sent ?? sql`true`}`.execute(trx)
      return rows[0]!
    },

    /**
     * What opening a ticket for the session needs, read in one statement (inside the transaction that holds the
     * session's row lock): its ticket still waiting for an operator (open or in progress) and its newest ticket
     * (a resolved one may reopen), each with its e-mail; with `messages`, its last messages (the ticket's transcript); with `emails`,
     * the encrypted originals of its last 20 visitor messages, newest first (an e-mail the visitor already wrote).
     */
    async handOffState(tenantId: string, sessionId: string, opts: { messages: number; emails: boolean }, trx: Db): Promise<HandOffState> {
      const { rows } = await sql<StateRow>`${handOffRead(tenantId, sessionId, opts)}`.execute(trx)
      return stateOf(rows)
    },

    /**
     * The session's row locked (its owner and bot) and, in the same statement, what handOffState reads: one round
     * trip for a turn's hand-off instead of two. The read sees the statement's snapshot, taken before the lock was
     * granted: when the row changed while the lock was awaited (the locked version is not the snapshot's), `state`
     * is null and the caller reads it again under the lock.
     */
    async lockWithHandOffState(
      tenantId: string,
      sessionId: string,
      opts: { messages: number; emails: boolean },
      trx: Db,
    ): Promise<{ locked: { owner: SessionOwner; bot_id: string } | undefined; state: HandOffState | null }> {
      const { rows } = await sql<SessionWithState & { fresh: boolean }>`${PREPARED}
        WITH st AS (${handOffRead(tenantId, sessionId, opts)})
        SELECT cs.owner, cs.bot_id,
          cs.xmin::text = (SELECT v.xmin::text FROM chat_sessions v WHERE v.id = ${sessionId} AND ${tenantChecked(tenantId, 'v.tenant_id')}) AS fresh,
          (SELECT coalesce(jsonb_agg(st), '[]'::jsonb) FROM st) AS state
        FROM chat_sessions cs WHERE cs.id = ${sessionId} AND ${tenantChecked(tenantId, 'cs.tenant_id')}
        FOR UPDATE OF cs`.execute(trx)
      const r = rows[0]
      if (!r) return { locked: undefined, state: null }
      return { locked: { owner: r.owner, bot_id: r.bot_id }, state: r.fresh ? aggregatedState(r.state) : null }
    },

    /**
     * What handOffState reads, with the session's owner, bot and row version (xmin), in one statement of its own and
     * without a lock: a write planned from it must check that the row is still that version when it locks it.
     */
    async handOffSnapshot(
      tenantId: string,
      sessionId: string,
      opts: { messages: number; emails: boolean },
    ): Promise<{ session: { owner: SessionOwner; bot_id: string; version: string }; state: HandOffState } | undefined> {
      const { rows } = await sql<SessionWithState & { version: string }>`${PREPARED}
        WITH st AS (${handOffRead(tenantId, sessionId, opts)})
        SELECT cs.owner, cs.bot_id, cs.xmin::text AS version, (SELECT coalesce(jsonb_agg(st), '[]'::jsonb) FROM st) AS state
        FROM chat_sessions cs WHERE cs.id = ${sessionId} AND ${tenantChecked(tenantId, 'cs.tenant_id')}`.execute(db)
      const r = rows[0]
      return r ? { session: { owner: r.owner, bot_id: r.bot_id, version: r.version }, state: aggregatedState(r.state) } : undefined
    },

    /** Open again, with the conversation since: the resolution stays on record, the assignee keeps it. */
    async reopen(tenantId: string, ticketId: string, patch: TicketPatch, trx: Db, follow?: FollowUpWrite): Promise<TicketRow | undefined> {
      const { rows } = await sql<TicketRow>`
        WITH t AS (
          UPDATE escalation_tickets SET status = 'open', resolved_at = NULL, ${patchSet(patch, follow)}
          WHERE tenant_id = ${tenantId} AND id = ${ticketId} AND status = 'resolved'
          RETURNING *
        )${followUpSession(tenantId, follow)}
        SELECT * FROM t`.execute(trx)
      return rows[0]
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
    async appendToTicket(tenantId: string, ticketId: string, patch: TicketPatch, trx: Db, follow?: FollowUpWrite): Promise<TicketRow> {
      const { rows } = await sql<TicketRow>`
        WITH ${appendCtes(tenantId, ticketId, patch, follow)}
        SELECT * FROM t`.execute(trx)
      if (!rows[0]) throw new Error('ticket to append to not found')
      return rows[0]
    },
  }
}

export type TicketsRepo = ReturnType<typeof createTicketsRepo>
