import { sql, type SelectQueryBuilder } from 'kysely'
import type { TicketStatus } from '../../db/schema/chat.js'
import type { Database } from '../../db/schema.js'
import { scopeIds, type BotScope } from '../shared/bot-scope.js'
import { ticketSearch } from './ticket-search.fns.js'

/** A ticket list's assignee filter: a user id, null for unassigned tickets, undefined for all. */
export type AssigneeFilter = string | null | undefined

export interface TicketFilter {
  status?: TicketStatus
  assignee?: AssigneeFilter
  scope: BotScope
  /**
   * The inbox's default view (#39): every ticket that needs a person: open, or in progress with nobody on it
   * (returned to the bot, unassigned), and not in a closed conversation. Gone visitors sort last.
   */
  needsPerson?: boolean
  /** Only tickets whose visitor left (true) or is still there (false). */
  visitorGone?: boolean
  /** The search box: a ticket number or a visitor's e-mail exactly, or the words of the question, the note and the transcript. */
  q?: string
  /** With `q` an e-mail address: its keyed hash (Cipher.emailHash), matched on the ticket and on its session. */
  emailHash?: string
}

/**
 * The words a ticket is found by, as migration 1640_inbox indexes them (GIN expression index): keep the
 * two texts identical, or the planner scans every ticket.
 */
const TICKET_TSV = sql`to_tsvector('simple'::regconfig, coalesce(t.primary_question, '') || ' ' || coalesce(t.user_note, '') || ' '
  || coalesce(jsonb_path_query_array(t.transcript, '$[*].content')::text, ''))`

/** Applies a list filter to a query over `escalation_tickets as t`: the same for the page and its total. */
// biome-ignore lint/suspicious/noExplicitAny: the selection differs between the list and the count
export function applyTicketFilter<Q extends SelectQueryBuilder<Database & { t: Database['escalation_tickets'] }, 't' | any, any>>(
  query: Q,
  f: TicketFilter,
): Q {
  let q = query
  if (f.scope !== null) q = q.where('t.bot_id', 'in', scopeIds(f.scope)) as Q
  if (f.status) q = q.where('t.status', '=', f.status) as Q
  if (f.assignee === null) q = q.where('t.assignee_user_id', 'is', null) as Q
  else if (f.assignee !== undefined) q = q.where('t.assignee_user_id', '=', f.assignee) as Q
  if (f.needsPerson) {
    q = q.where(
      sql<boolean>`(t.status = 'open' OR (t.status = 'in_progress' AND t.assignee_user_id IS NULL))
        AND NOT EXISTS (SELECT 1 FROM chat_sessions cs WHERE cs.tenant_id = t.tenant_id AND cs.id = t.session_id AND cs.owner = 'closed')`,
    ) as Q
  }
  if (f.visitorGone !== undefined) q = q.where('t.visitor_gone', '=', f.visitorGone) as Q
  if (f.q !== undefined) {
    const s = ticketSearch(f.q)
    const byNumber = s.number ? sql<boolean>`t.ticket_number = ${s.number}` : sql<boolean>`false`
    // an address is found exactly, never by its parts ("someone", "example", "com") in other tickets' words
    // the whole conversation (#52): the copy taken at the hand-off, and every message of the session since (what the
    // visitor wrote to the team), through the messages' own full-text index (1665_email_search)
    const byWords =
      s.tsquery && !f.emailHash
        ? sql<boolean>`(${TICKET_TSV} @@ to_tsquery('simple'::regconfig, ${s.tsquery}) OR EXISTS (SELECT 1 FROM chat_messages sm
            WHERE sm.tenant_id = t.tenant_id AND sm.session_id = t.session_id
              AND to_tsvector('simple'::regconfig, sm.content) @@ to_tsquery('simple'::regconfig, ${s.tsquery})))`
        : sql<boolean>`false`
    const byEmail = f.emailHash
      ? sql<boolean>`(t.user_email_hash = ${f.emailHash} OR EXISTS (SELECT 1 FROM chat_sessions es
          WHERE es.tenant_id = t.tenant_id AND es.id = t.session_id AND es.visitor_email_hash = ${f.emailHash}))`
      : sql<boolean>`false`
    q = q.where(sql<boolean>`(${byNumber} OR ${byWords} OR ${byEmail})`) as Q
  }
  return q
}
