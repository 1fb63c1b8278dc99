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
 * the same to_tsvector text: keep them identical).
 */
export function sessionSearchWhere(f: SessionSearch): RawBuilder<boolean> {
  const byNumber = f.number
    ? sql<boolean>`EXISTS (SELECT 1 FROM escalation_tickets nt WHERE nt.tenant_id = s.tenant_id AND nt.session_id = s.id AND nt.ticket_number = ${f.number})`
    : sql<boolean>`false`
  const byEmail = f.emailHash
    ? sql<boolean>`(s.visitor_email_hash = ${f.emailHash} OR EXISTS (SELECT 1 FROM escalation_tickets et
        WHERE et.tenant_id = s.tenant_id AND et.session_id = s.id AND et.user_email_hash = ${f.emailHash}))`
    : sql<boolean>`false`
  const byWords = f.tsquery
    ? sql<boolean>`EXISTS (SELECT 1 FROM chat_messages sm WHERE sm.tenant_id = s.tenant_id AND sm.session_id = s.id
        AND to_tsvector('simple'::regconfig, sm.content) @@ to_tsquery('simple'::regconfig, ${f.tsquery}))`
    : sql<boolean>`false`
  return sql<boolean>`(${byNumber} OR ${byEmail} OR ${byWords})`
}
