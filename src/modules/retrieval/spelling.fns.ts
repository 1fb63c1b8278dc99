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

// Three rows of the distance table, reused by every call (grown when a longer word comes): the dictionary scan
// runs this for thousands of lexemes a question, and fresh arrays per call made it a tenth of a turn's CPU.
let rowA = new Int32Array(64)
let rowB = new Int32Array(64)
let rowC = new Int32Array(64)

/** Optimal-string-alignment distance (Damerau-Levenshtein without repeated edits), stopping past `max`. */
export function slipDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1
  const n = b.length
  if (rowA.length <= n) {
    rowA = new Int32Array(n + 1)
    rowB = new Int32Array(n + 1)
    rowC = new Int32Array(n + 1)
  }
  let prev2 = rowA
  let prev = rowB
  let cur = rowC
  for (let j = 0; j <= n; j++) prev[j] = j
  for (let i = 1; i <= a.length; i++) {
    const ai = a.charCodeAt(i - 1)
    const ai1 = i > 1 ? a.charCodeAt(i - 2) : -1
    cur[0] = i
    let rowMin = i
    for (let j = 1; j <= n; j++) {
      const bj = b.charCodeAt(j - 1)
      const cost = ai === bj ? 0 : 1
      let d = prev[j]! + 1
      const ins = cur[j - 1]! + 1
      if (ins < d) d = ins
      const sub = prev[j - 1]! + cost
      if (sub < d) d = sub
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && ai1 === bj) {
        const tr = prev2[j - 2]! + 1
        if (tr < d) d = tr
      }
      cur[j] = d
      if (d < rowMin) rowMin = d
    }
    if (rowMin > max) return max + 1
    const t = prev2
    prev2 = prev
    prev = cur
    cur = t
  }
  return prev[n]!
}

/**
 * The knowledge's vocabulary as the correction reads it: lexemes held by a chunk, function words left out ("whhats"
 * is not "what": the few chunks indexed as `simple` keep it), grouped by length, since a word only matches lexemes
 * within `slipsFor` letters of its own length. Built once per corpus version (retrieval.service.ts keeps it beside
 * the postings), not per question. Each lexeme has its letter mask beside it (see `letterMask`).
 */
export interface SlipDictionary {
  byLength: Map<number, { terms: string[]; dfs: number[]; masks: number[] }>
}

/**
 * The letters a word holds, each as one of 32 bits (its UTF-16 code unit modulo 32: a-z are 26 different bits). One
 * slip changes the set of letters a word holds by at most two (a changed letter: one gone, one new; a dropped or
 * added one: one; a swap: none), and two letters sharing a bit only hide differences, so two words `d` slips apart
 * differ in at most 2d bits. A lexeme whose mask differs from the word's in more bits than that is no candidate:
 * the dictionary scan skips it without computing the distance (most of a bucket, for a word of a question).
 */
export function letterMask(w: string): number {
  let m = 0
  for (let i = 0; i < w.length; i++) m |= 1 << (w.charCodeAt(i) & 31)
  return m
}

function bitCount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555)
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333)
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}

export function slipDictionary(vocabulary: Iterable<[string, number]>): SlipDictionary {
  const byLength = new Map<number, { terms: string[]; dfs: number[]; masks: number[] }>()
  for (const [term, df] of vocabulary) {
    if (df <= 0 || isFunctionWord(term)) continue
    let b = byLength.get(term.length)
    if (!b) byLength.set(term.length, (b = { terms: [], dfs: [], masks: [] }))
    b.terms.push(term)
    b.dfs.push(df)
    b.masks.push(letterMask(term))
  }
  return { byLength }
}

const sortedLetters = (w: string) => [...w].sort().join('')

/**
 * The corrections for `unknown` among `vocabulary` (lexeme -> chunks holding it, or a dictionary built from it):
 * for each unknown lexeme the closest known one (fewest slips, then most chunks, then alphabetical), as extra
 * query terms.
 */
export function corrections(unknown: string[], vocabulary: Iterable<[string, number]> | SlipDictionary): TermStat[] {
  const dict = 'byLength' in vocabulary ? vocabulary : slipDictionary(vocabulary)
  const out: TermStat[] = []
  const seen = new Set<string>()
  for (const u of unknown) {
    const c = closest(u, dict)
    if (c && !seen.has(c.term)) {
      seen.add(c.term)
      out.push({ term: c.term, df: c.df, corrects: u })
    }
  }
  return out
}

/** The known lexeme closest to `u` within its slips, or null. */
export function closest(u: string, dict: SlipDictionary): { term: string; df: number } | null {
  const max = slipsFor(u.length)
  let best: { term: string; df: number; d: number } | null = null
  const letters = u.length < ANY_SLIP_LENGTH ? sortedLetters(u) : null
  const mask = letterMask(u)
  const maxBits = 2 * max
  for (let len = u.length - max; len <= u.length + max; len++) {
    const bucket = dict.byLength.get(len)
    if (!bucket) continue
    const { terms, dfs, masks } = bucket
    for (let i = 0; i < terms.length; i++) {
      if (bitCount(mask ^ masks[i]!) > maxBits) continue
      const term = terms[i]!
      if (term === u) continue
      const d = slipDistance(u, term, max)
      if (d > max) continue
      if (letters !== null && !(term.length === u.length + 1 || sortedLetters(term) === letters)) continue
      const df = dfs[i]!
      if (!best || d < best.d || (d === best.d && (df > best.df || (df === best.df && term < best.term)))) best = { term, df, d }
    }
  }
  return best ? { term: best.term, df: best.df } : null
}
