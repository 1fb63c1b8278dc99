import { sql, type RawBuilder } from 'kysely'
import { searchedEmail, ticketSearch } from '../escalations/ticket-search.fns.js'

/** The conversation list's search (#39), as the ticket search reads it: a ticket number, an e-mail, or words. */
export interface SessionSearch {
  number: string | null
  tsquery: string | null
  /** Cipher.emailHash of the address the query is, else null. */
  emailHash: string | null
}

export function sessionSearch(q: string, emailHash: (address: string) => string): SessionSearch {
  const email = searchedEmail(q)
  const s = ticketSearch(q)
  // an address is found exactly, never by its parts in other conversations' words
  return { number: s.number, tsquery: email ? null : s.tsquery, emailHash: email ? emailHash(email) : null }
}

/**
 * The condition over `chat_sessions as s`: the session's ticket has the number; the session or its ticket has
 * the address; or one of its messages has the words (full-text through 1665_email_search's expression index,
 * the same to_tsvector text: keep them identical). One `IN` over a union of the three lookups, each by its own
 * index, rather than an OR of EXISTS, which PostgreSQL can only answer by probing every session of the tenant.
 */
export function sessionSearchWhere(tenantId: string, f: SessionSearch): RawBuilder<boolean> {
  const parts: RawBuilder<unknown>[] = []
  if (f.number) parts.push(sql`SELECT nt.session_id FROM escalation_tickets nt WHERE nt.tenant_id = ${tenantId} AND nt.ticket_number = ${f.number}`)
  if (f.emailHash) {
    parts.push(sql`SELECT es.id FROM chat_sessions es WHERE es.tenant_id = ${tenantId} AND es.visitor_email_hash = ${f.emailHash}`)
    parts.push(sql`SELECT et.session_id FROM escalation_tickets et WHERE et.tenant_id = ${tenantId} AND et.user_email_hash = ${f.emailHash}`)
  }
  if (f.tsquery)
    parts.push(sql`SELECT sm.session_id FROM chat_messages sm WHERE sm.tenant_id = ${tenantId}
      AND to_tsvector('simple'::regconfig, sm.content) @@ to_tsquery('simple'::regconfig, ${f.tsquery})`)
  if (parts.length === 0) return sql<boolean>`false`
  // OFFSET 0 keeps the set a hashed subplan computed once: pulled up into a semi-join, the planner walks the
  // sessions newest first and re-reads each one's messages for the words (5 s at 400,000 messages, 12 ms so)
  return sql<boolean>`s.id IN (${sql.join(parts, sql` UNION `)} OFFSET 0)`
}
