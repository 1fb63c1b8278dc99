/**
 * Okapi BM25 over PostgreSQL text-search lexemes. The database keeps, per tenant, how many chunks contain
 * each lexeme (document frequency) and the corpus size and total length (see migration 0201); these
 * functions turn that into idf weights, choose which terms drive candidate generation (MaxScore, so the
 * top-k stays exact while only the rarer terms' posting lists are read), and normalise a score into a
 * 0..1 confidence the answer decision can use.
 */
import { isFunctionWord } from './relevance.fns.js'
import { ALT_WEIGHT } from './ui-words.fns.js'

export interface Bm25Params {
  k1: number
  b: number
  /**
   * An occurrence in the document title or a heading (the lexemes the indexer weights A) counts this many
   * times in the term frequency (a BM25F-style field weight; 1 treats titles as body text).
   */
  titleWeight?: number
}

/**
 * Tuned on BEIR SciFact's train split (bench/retrieval-eval.ts): Lucene's k1 1.2 and b 0.75 stay best; a
 * title weight of 3 adds about half a point of nDCG@10 over 1. Checked again with hyphenated compounds left
 * out of the query (0.711): k1 1.0-1.4 with b 0.75 and a title weight of 2-3 are within 0.001 of it, so unchanged.
 */
export const DEFAULT_BM25: Bm25Params = { k1: 1.2, b: 0.75, titleWeight: 3 }

export interface TermStat {
  term: string
  /** Chunks of the tenant containing the term. */
  df: number
  /** A spelling correction (spelling.fns.ts): the unknown query lexeme this known one stands for. */
  corrects?: string
  /** Another wording of an interface action the question names (ui-words.fns.ts): weighs ALT_WEIGHT, not in coverage. */
  alt?: boolean
  /**
   * Made only by question phrasing ("way", "possible", "need"; relevance.fns.ts): weighs PHRASING_WEIGHT, not in
   * coverage. Visitor questions' dev split, answering page among six (lexical): 74.4 -> 75.6 %; held-out and
   * SciFact train unchanged.
   */
  phrasing?: boolean
  /** A function word's lexeme ("what" of "whats", "own" of "owns"): weighs FUNCTION_WEIGHT, not in coverage. */
  functionWord?: boolean
}

/** A phrasing lexeme's weight against a subject word's. */
export const PHRASING_WEIGHT = 0.5
/** A function word's lexeme's weight against a subject word's. */
export const FUNCTION_WEIGHT = 0.25

/** A query lexeme under one of the text-search configurations the tenant's chunks use. */
export interface ConfigTermStat extends TermStat {
  cfg: string
}

/**
 * Which configuration's lexemes make the query. A tenant whose chunks use several configurations (an
 * English corpus with one chunk detected as Portuguese) used to get the union, so every English question
 * also carried unstemmed and foreign-stemmed variants of its words: extra terms that match other chunks and
 * dilute the ranking (on SciFact the union costs 3.7 points of nDCG@10). The question's own language wins
 * when it is clear and the tenant has chunks in it; otherwise the configuration whose lexemes the corpus
 * knows best (most terms present, then the most postings), so a short or ambiguous question still follows
 * the knowledge's language.
 */
export function chooseQueryTerms(stats: ConfigTermStat[], detected: string | null): TermStat[] {
  const byCfg = new Map<string, TermStat[]>()
  for (const s of stats) {
    let list = byCfg.get(s.cfg)
    if (!list) byCfg.set(s.cfg, (list = []))
    // A lexeme that is a function word weighs little (FUNCTION_WEIGHT). `simple` keeps function words, and a
    // language configuration makes one of another word ("whats" -> "what"): it then has the tiny document
    // frequency of the few chunks indexed as `simple` and outweighed every subject word ("whats the catch with
    // duckduckgo" ranked pages for "what"). Not dropped: "owns" -> "own" is the subject of "who owns duckduckgo".
    if (isFunctionWord(s.term)) {
      if (!s.alt) list.push({ term: s.term, df: s.df, functionWord: true })
      continue
    }
    list.push(s.alt ? { term: s.term, df: s.df, alt: true } : { term: s.term, df: s.df })
  }
  if (byCfg.size <= 1) return [...byCfg.values()][0] ?? []
  if (detected && detected !== 'simple' && byCfg.has(detected)) return byCfg.get(detected)!
  let best: TermStat[] = []
  let bestKey: [number, number, number, string] = [-1, -1, -1, '']
  for (const [cfg, list] of byCfg) {
    // (function words are out already: a short English question once went to `simple` on the "what" and "in"
    // it keeps, the DuckDuckGo help centre's "what's new in search" ranking a page for its "what"); a tie goes
    // to a language's configuration
    const subject = list.filter((t) => t.df > 0 && !t.functionWord)
    const key: [number, number, number, string] = [subject.length, subject.reduce((a, t) => a + t.df, 0), cfg === 'simple' ? 0 : 1, cfg]
    const better =
      key[0] !== bestKey[0]
        ? key[0] > bestKey[0]
        : key[1] !== bestKey[1]
          ? key[1] > bestKey[1]
          : key[2] !== bestKey[2]
            ? key[2] > bestKey[2]
            : key[3] < bestKey[3]
    if (better) {
      best = list
      bestKey = key
    }
  }
  return best
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
  /** Ranks but is not part of the question's coverage (TermStat.alt, .phrasing or .functionWord). */
  alt?: boolean
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

/** A hyphenated word's lexeme ("inflammation-rel"): letters and digits joined by hyphens, nothing else. */
const COMPOUND = /^[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)+$/u

/** A part of a compound as it stands in the compound ("inflammation") and one of its lexemes ("inflamm"). */
const samePart = (piece: string, lexeme: string) => piece.startsWith(lexeme) || lexeme.startsWith(piece)

/**
 * The query's lexemes without the hyphenated compounds whose parts are also among them. PostgreSQL's parser
 * indexes "inflammation-related" three times: the whole ("inflammation-rel") and each part ("inflamm",
 * "relat"). In a question the whole is a near-phrase that few chunks hold verbatim, so its high idf ranks
 * that spelling above chunks that say the same in other words (BM25 counted the same evidence twice); its
 * parts carry the words. On BEIR SciFact train (261 of 809 questions have one) dropping it adds 0.4 point of
 * nDCG@10 (31 questions better, 13 worse), the same as Lucene's tokenizer, which never keeps the whole.
 * A host, path or e-mail lexeme ("my-app.example.com"), whose parts are not indexed, stays.
 */
export function withoutCompounds<T extends TermStat>(stats: T[]): T[] {
  const lexemes = stats.map((s) => s.term)
  return stats.filter(
    (s) => !(COMPOUND.test(s.term) && s.term.split('-').some((piece) => lexemes.some((l) => l !== s.term && !l.includes('-') && samePart(piece, l)))),
  )
}

/**
 * MaxScore planning: the rarest terms are "essential" until their posting lists would exceed `budget`
 * rows; a chunk that has none of them cannot beat the bound of the rest. Hyphenated compounds are left out
 * (withoutCompounds), on both scoring paths alike. The caller scores the candidates
 * on every term and checks `isExact` against its k-th score; when that fails it widens the budget.
 */
export function planQuery(stats: TermStat[], corpus: CorpusStats, budget: number, p: Bm25Params = DEFAULT_BM25): QueryPlan {
  const n = Math.max(corpus.n, 1)
  const avgdl = corpus.n > 0 ? corpus.totalLen / corpus.n : 1
  const terms: WeightedTerm[] = []
  const absent: number[] = []
  const seen = new Set<string>()
  for (const s of withoutCompounds(stats)) {
    if (seen.has(s.term)) continue
    seen.add(s.term)
    const aside = s.alt || s.phrasing || s.functionWord
    const w = idf(Math.min(s.df, n), n) * (s.alt ? ALT_WEIGHT : s.phrasing ? PHRASING_WEIGHT : s.functionWord ? FUNCTION_WEIGHT : 1)
    if (s.df > 0) terms.push({ term: s.term, df: s.df, idf: w, upperBound: w * (p.k1 + 1), ...(aside ? { alt: true } : {}) })
    else if (!aside) absent.push(w)
  }
  // A word the knowledge never uses counts against coverage, but no more than the rarest word it does use
  // (in a small corpus every unknown word would otherwise outweigh everything found). Other wordings
  // (ui-words.fns.ts) rank but are not part of what the question asked, so not of its coverage either.
  const asked = terms.filter((t) => !t.alt)
  const cap = asked.length ? Math.max(...asked.map((t) => t.idf)) : Infinity
  let idfMass = asked.reduce((a, t) => a + t.idf, 0)
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

/**
 * Higher score first, then the lower id. Scores within 1e-9 count as equal: a sum's last bit depends on the
 * order its terms were added (SQL and in process add them differently), and equal chunks must tie by id on
 * both paths (the SQL orders on the score rounded to 9 decimals).
 */
export function byScoreThenId(a: { id: string; score: number }, b: { id: string; score: number }): number {
  const d = b.score - a.score
  if (Math.abs(d) > 1e-9) return d
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
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
 * literal (with `weight`, each matches only occurrences of that weight). Lexemes come from to_tsvector, so
 * they are already normalised.
 */
export function orQuery(terms: string[], weight?: 'A'): string {
  const suffix = weight ? `:${weight}` : ''
  return terms.map((t) => `'${t.replace(/\\/g, '\\\\').replace(/'/g, "''")}'${suffix}`).join(' | ')
}
