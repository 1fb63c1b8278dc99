/**
 * Okapi BM25 over PostgreSQL text-search lexemes. The database keeps, per tenant, how many chunks contain
 * each lexeme (document frequency) and the corpus size and total length (see migration 0201); these
 * functions turn that into idf weights, choose which terms drive candidate generation (MaxScore, so the
 * top-k stays exact while only the rarer terms' posting lists are read), and normalise a score into a
 * 0..1 confidence the answer decision can use.
 */

export interface Bm25Params {
  k1: number
  b: number
}

/** Tuned on BEIR SciFact (see bench/retrieval-eval.ts); Lucene's defaults are k1 1.2, b 0.75. */
export const DEFAULT_BM25: Bm25Params = { k1: 1.2, b: 0.75 }

export interface TermStat {
  term: string
  /** Chunks of the tenant containing the term. */
  df: number
}

export interface CorpusStats {
  /** Chunks of the tenant. */
  n: number
  /** Sum of the chunks' lengths (same unit as a chunk's length in scoring). */
  totalLen: number
}

/** Lucene's BM25 idf: never negative, so a very common term still counts a little. */
export function idf(df: number, n: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5))
}

/** One term's contribution for a chunk with term frequency `tf` and length `len`. */
export function termScore(tf: number, len: number, avgdl: number, termIdf: number, p: Bm25Params = DEFAULT_BM25): number {
  if (tf <= 0) return 0
  const norm = 1 - p.b + p.b * (len / (avgdl > 0 ? avgdl : 1))
  return (termIdf * (tf * (p.k1 + 1))) / (tf + p.k1 * norm)
}

export interface WeightedTerm {
  term: string
  df: number
  idf: number
  /** The most one chunk can get from this term (tf -> infinity). */
  upperBound: number
}

export interface QueryPlan {
  /** Terms present in the corpus, rarest first. */
  terms: WeightedTerm[]
  /** Terms whose posting lists produce candidates. */
  essential: WeightedTerm[]
  /** Sum of the upper bounds of the other terms: a chunk with none of the essential terms scores at most this. */
  nonEssentialBound: number
  /** Sum of idf over the query terms, absent ones capped at the largest present idf (for the confidence). */
  idfMass: number
  avgdl: number
}

/**
 * MaxScore planning: the rarest terms are "essential" until their posting lists would exceed `budget`
 * rows; a chunk that has none of them cannot beat the bound of the rest. The caller scores the candidates
 * on every term and checks `isExact` against its k-th score; when that fails it widens the budget.
 */
export function planQuery(stats: TermStat[], corpus: CorpusStats, budget: number, p: Bm25Params = DEFAULT_BM25): QueryPlan {
  const n = Math.max(corpus.n, 1)
  const avgdl = corpus.n > 0 ? corpus.totalLen / corpus.n : 1
  const terms: WeightedTerm[] = []
  const absent: number[] = []
  const seen = new Set<string>()
  for (const s of stats) {
    if (seen.has(s.term)) continue
    seen.add(s.term)
    const w = idf(Math.min(s.df, n), n)
    if (s.df > 0) terms.push({ term: s.term, df: s.df, idf: w, upperBound: w * (p.k1 + 1) })
    else absent.push(w)
  }
  // A word the knowledge never uses counts against coverage, but no more than the rarest word it does use
  // (in a small corpus every unknown word would otherwise outweigh everything found).
  const cap = terms.length ? Math.max(...terms.map((t) => t.idf)) : Infinity
  let idfMass = terms.reduce((a, t) => a + t.idf, 0)
  for (const w of absent) idfMass += Math.min(w, cap)
  terms.sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : 1))
  const essential: WeightedTerm[] = []
  let rows = 0
  let i = 0
  for (; i < terms.length; i++) {
    if (essential.length > 0 && rows + terms[i]!.df > budget) break
    essential.push(terms[i]!)
    rows += terms[i]!.df
  }
  let nonEssentialBound = 0
  for (; i < terms.length; i++) nonEssentialBound += terms[i]!.upperBound
  return { terms, essential, nonEssentialBound, idfMass, avgdl }
}

/** True when no chunk outside the candidates can enter a top-k whose k-th score is `kthScore`. */
export function isExact(plan: QueryPlan, kthScore: number | undefined, k: number, candidates: number): boolean {
  if (plan.essential.length === plan.terms.length) return true
  // fewer candidates than k: a non-candidate could still fill a slot
  if (candidates < k || kthScore === undefined) return plan.nonEssentialBound === 0
  return kthScore >= plan.nonEssentialBound
}

/**
 * 0..1: the share of the query's information (idf mass) a chunk covers, tf-saturated. A chunk holding
 * every query term once at average length scores ~1; one sharing only a common word scores near 0.
 */
export function lexicalConfidence(score: number, plan: Pick<QueryPlan, 'idfMass'>): number {
  if (plan.idfMass <= 0) return 0
  return Math.min(1, score / plan.idfMass)
}

/**
 * A tsquery literal OR-ing the given lexemes, each quoted so punctuation and operator words stay
 * literal. Lexemes come from to_tsvector, so they are already normalised.
 */
export function orQuery(terms: string[]): string {
  return terms.map((t) => `'${t.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(' | ')
}
