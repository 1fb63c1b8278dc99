import { codeSpans, linkLabels, markdownLinkLabels, sentencesOf, withoutBlanksBeforeNewline, withoutTemplateTags } from '../../lib/markup-scan.fns.js'
import type { TermStat } from './bm25.fns.js'
import { capPerDocument } from './fusion.fns.js'
import { foldText, lexemeMatcher, termWeight, type LexemeMatcher } from './relevance.fns.js'

/**
 * The sources a turn hands to the answer model, chosen under a token budget instead of a fixed count. A fixed six
 * whole chunks left the answering passage out of the prompt for a third of the visitor questions, though it was
 * often among the next few hits (bench:grounding, BENCH_RETRIEVAL=1). Chunks are given without what the model
 * cannot use (link targets, HTML tags, template markup: a tenth of a help centre's characters), so more of them
 * fit; the first hits whole, then whole while they fit, and the last one that does not fit as its best window.
 */
export interface PackOptions {
  /** Tokens (about four characters each) for all passages together, titles included. */
  budgetTokens: number
  /** At most this many passages. */
  maxPassages: number
  /** A hit that no longer fits whole is cut to a window of at most this many tokens (0: never cut). */
  windowTokens: number
  /** The tenant's chunk count (for the terms' idf). */
  corpusChunks: number
}

/** Passage text marks where a window was cut out of its chunk. */
export const CUT = '…'

const tokensOf = (text: string) => Math.ceil(text.length / 4)

/**
 * A chunk's text as the model reads it: a link's text without its target, no HTML tags, no template markup
 * ({{ site.baseurl }}), no runs of blank lines. Citations name the document, never an inline link. Code (fenced
 * blocks and `inline` spans) is kept as written: an embed snippet or a config example is often the answer
 * ("Add `<script src=...>` before the closing body tag" lost its tag, and the bot handed the question off).
 */
export function plainText(text: string): string {
  // images, links, template markup, blanks before a line break and code spans by scans (lib/markup-scan.fns.ts): their
  // patterns were quadratic on a long run (issue 50)
  return withoutBlanksBeforeNewline(
    outsideCode(text, (prose) => withoutTemplateTags(markdownLinkLabels(linkLabels(prose, true))).replace(/<\/?[a-zA-Z][^<>]*>/g, '')),
  )
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

const FENCE_LINE = /^ {0,3}(?:```|~~~)/

/** `f` applied to the text outside fenced code blocks and inline code spans; the code is kept as it is. */
function outsideCode(text: string, f: (prose: string) => string): string {
  const out: string[] = []
  let prose: string[] = []
  let inFence = false
  const flush = () => {
    if (!prose.length) return
    const block = prose.join('\n')
    let last = 0
    let done = ''
    // a code span ends at the same run of backticks, within its paragraph
    for (const [start, end] of codeSpans(block)) {
      done += f(block.slice(last, start)) + block.slice(start, end)
      last = end
    }
    out.push(done + f(block.slice(last)))
    prose = []
  }
  for (const line of text.split('\n')) {
    if (FENCE_LINE.test(line)) {
      if (!inFence) flush()
      inFence = !inFence
      out.push(line)
    } else if (inFence) out.push(line)
    else prose.push(line)
  }
  flush()
  return out.join('\n')
}

interface WeightedTerm {
  re: LexemeMatcher
  w: number
}

/** The question's terms with their weights: idf, a function word's and a phrasing word's lowered as BM25 lowers them. */
export function weightedTerms(terms: TermStat[], corpusChunks: number): WeightedTerm[] {
  return terms
    .filter((t) => t.df > 0)
    .map((t) => ({
      re: lexemeMatcher(t.term),
      w: termWeight(t.df, corpusChunks) * (t.functionWord ? 0.25 : t.phrasing || t.alt ? 0.5 : 1),
    }))
}

/** A chunk's text in units: lines, and the sentences of a line longer than a third of a window. */
export function units(text: string, windowTokens: number): string[] {
  const out: string[] = []
  for (const line of text.split('\n')) {
    if (tokensOf(line) <= windowTokens / 3) {
      out.push(line)
      continue
    }
    out.push(...(sentencesOf(line) ?? [line]))
  }
  return out
}

/**
 * The window of about `windowTokens` that covers the most weight of distinct question terms (ties: the earliest).
 * A text with no term in it (the title matched) gives its start. Cut ends are marked with CUT.
 */
export function bestWindow(text: string, terms: WeightedTerm[], windowTokens: number): string {
  if (tokensOf(text) <= windowTokens) return text
  const us = units(text, windowTokens)
  const hits = us.map((u) => {
    const f = foldText(u)
    return terms.flatMap((t, i) => (t.re.test(f) ? [i] : []))
  })
  let best = { from: 0, to: 0, score: -1 }
  for (let from = 0; from < us.length; from++) {
    if (hits[from]!.length === 0 && from > 0) continue
    const seen = new Set<number>()
    let size = 0
    let score = 0
    let to = from
    for (; to < us.length; to++) {
      const s = tokensOf(us[to]!)
      if (size > 0 && size + s > windowTokens) break
      size += s
      for (const i of hits[to]!) if (!seen.has(i)) seen.add(i), (score += terms[i]!.w)
    }
    if (score > best.score) best = { from, to, score }
  }
  const window = us
    .slice(best.from, best.to)
    .join('\n')
    .trim()
    .slice(0, windowTokens * 4)
  return `${best.from > 0 ? `${CUT} ` : ''}${window}${best.to < us.length ? ` ${CUT}` : ''}`
}

/** The passages for the prompt, in the hits' order, within the budget and the count. */
export function packPassages<T extends { title: string; text: string }>(hits: T[], queryTerms: TermStat[], o: PackOptions): T[] {
  const terms = weightedTerms(queryTerms, o.corpusChunks)
  const out: T[] = []
  let left = o.budgetTokens
  for (const h of hits) {
    if (out.length >= o.maxPassages) break
    const head = tokensOf(h.title) + 2
    const plain = plainText(h.text)
    if (tokensOf(plain) + head <= left) {
      left -= tokensOf(plain) + head
      out.push(plain === h.text ? h : { ...h, text: plain })
      continue
    }
    // the first hit is always given (cut to the budget); a later one that does not fit, as a window, then stop
    const room = out.length === 0 ? left - head : Math.min(o.windowTokens, left - head)
    if (room >= 40) out.push({ ...h, text: bestWindow(plain, terms, room) })
    break
  }
  return out
}

/**
 * At most this many of the k hits from one document while other documents' candidates remain: a long section
 * cut into four chunks filled four of six sources ("whats the catch with duckduckgo" got four chunks of one page
 * on data brokers). Three keeps a multi-chunk answer whole. Visitor dev, answering page among six, hybrid 74.4 ->
 * 75.0 % (two per page: 75.6 %), lexical and held-out unchanged; SciFact train unchanged (0.7113).
 */
const PER_DOCUMENT = 3

/**
 * A hit that no longer fits the budget whole is given as its best window of this many tokens. Visitor dev,
 * answering passage among the sources (hybrid, 1,500 tokens): 74.3 % with or without it, 67.3 % for six whole chunks.
 */
const WINDOW_TOKENS = 150

/**
 * The sources a turn gives the model from its ranked hits: at most PER_DOCUMENT from one document, then, with a
 * budget, packed under it (a hit that no longer fits given as its best window); without one, the first k.
 */
export function chooseSources<T extends { documentId: string | null; title: string; text: string }>(
  ranked: T[],
  queryTerms: TermStat[],
  o: { k: number; budgetTokens?: number; corpusChunks: number },
): T[] {
  const capped = capPerDocument(ranked, o.k, PER_DOCUMENT)
  return o.budgetTokens
    ? packPassages(capped, queryTerms, { budgetTokens: o.budgetTokens, maxPassages: o.k, windowTokens: WINDOW_TOKENS, corpusChunks: o.corpusChunks })
    : capped
}
