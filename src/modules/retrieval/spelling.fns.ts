import type { TermStat } from './bm25.fns.js'
import { isFunctionWord } from './relevance.fns.js'

/**
 * Typing slips in a question ("pasword", "duckducgko", "wieguard"): a query lexeme the tenant's chunks never use,
 * five letters or more, that is one slip away from a lexeme they do use (one letter changed, dropped, added, or
 * two neighbours swapped; two slips from eight letters on) gets that lexeme beside it; a four-letter one only for
 * the two slips that leave its letters telling ("snyc" for sync, "blck" for block: neighbours swapped, or a letter
 * dropped), since one changed letter turns most short words into another word, the most frequent one when
 * several are that close. The knowledge's own vocabulary is the dictionary, so product names are spelt as the
 * pages spell them and no language's word list is needed. Only unknown words are looked at: a question spelt
 * right costs nothing.
 */

export const MIN_SLIP_LENGTH = 4
/** From this length any single slip counts; shorter words only a swap or a dropped letter. */
export const ANY_SLIP_LENGTH = 5

/** Query lexemes worth correcting: unknown to the knowledge, long enough to tell a slip from another word. */
export function unknownTerms(terms: TermStat[]): string[] {
  return terms
    .filter((t) => t.df === 0 && !t.alt && !t.phrasing && !t.functionWord && [...t.term].length >= MIN_SLIP_LENGTH && !/\d/.test(t.term))
    .map((t) => t.term)
}

/** Slips allowed for a word of this length. */
export const slipsFor = (length: number) => (length >= 8 ? 2 : 1)

/** Optimal-string-alignment distance (Damerau-Levenshtein without repeated edits), stopping past `max`. */
export function slipDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1
  let prev2: number[] = []
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    let rowMin = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1)
      cur.push(d)
      rowMin = Math.min(rowMin, d)
    }
    if (rowMin > max) return max + 1
    prev2 = prev
    prev = cur
  }
  return prev[b.length]!
}

/**
 * The corrections for `unknown` among `vocabulary` (lexeme -> chunks holding it): for each unknown lexeme the
 * closest known one (fewest slips, then most chunks, then alphabetical), as extra query terms.
 */
export function corrections(unknown: string[], vocabulary: Iterable<[string, number]>): TermStat[] {
  const best = new Map<string, { term: string; df: number; d: number }>()
  const wanted = unknown.map((u) => ({ u, max: slipsFor(u.length) }))
  for (const [term, df] of vocabulary) {
    // a function word is no correction ("whhats" is not "what": the few chunks indexed as `simple` keep it)
    if (df <= 0 || isFunctionWord(term)) continue
    for (const { u, max } of wanted) {
      if (Math.abs(term.length - u.length) > max || term === u) continue
      const d = slipDistance(u, term, max)
      if (d > max) continue
      if (u.length < ANY_SLIP_LENGTH && !(term.length === u.length + 1 || [...term].sort().join('') === [...u].sort().join(''))) continue
      const cur = best.get(u)
      if (!cur || d < cur.d || (d === cur.d && (df > cur.df || (df === cur.df && term < cur.term)))) best.set(u, { term, df, d })
    }
  }
  const out: TermStat[] = []
  const seen = new Set<string>()
  for (const u of unknown) {
    const c = best.get(u)
    if (c && !seen.has(c.term)) {
      seen.add(c.term)
      out.push({ term: c.term, df: c.df, corrects: u })
    }
  }
  return out
}
