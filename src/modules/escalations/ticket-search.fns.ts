/**
 * The ticket search box (#39): a query becomes a prefix full-text query over the ticket's words, and a
 * ticket number is matched exactly. Only letters and digits reach to_tsquery (its operators cannot be
 * injected), at most 8 terms of at most 64 characters.
 */
const MAX_TERMS = 8

export interface TicketSearch {
  /** A ticket number the query names exactly (upper-cased), else null. */
  number: string | null
  /** A to_tsquery('simple', ...) text ("refund:* & late:*"), or null when no word is left. */
  tsquery: string | null
}

export function ticketSearch(q: string): TicketSearch {
  const trimmed = q.trim()
  const number = /^[A-Za-z]{1,10}-\d{1,12}$/.test(trimmed) ? trimmed.toUpperCase() : null
  const terms = [
    ...new Set(
      trimmed
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter((w) => w.length > 0)
        .map((w) => w.slice(0, 64)),
    ),
  ].slice(0, MAX_TERMS)
  return { number, tsquery: terms.length > 0 ? terms.map((w) => `${w}:*`).join(' & ') : null }
}

/** A query that is one e-mail address (found exactly, by its keyed hash: addresses are stored encrypted). */
export const searchedEmail = (q: string): string | null => {
  const trimmed = q.trim()
  return /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{1,63}$/.test(trimmed) ? trimmed : null
}
