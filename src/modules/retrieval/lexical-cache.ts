import { termScore, type Bm25Params, type QueryPlan } from './bm25.fns.js'
import { BudgetLru } from './budget-lru.js'
import type { ScoredChunk } from './retrieval.repo.js'
import { setBounded } from '../../lib/bounded.js'

/**
 * BM25 in process: a tenant's postings (lexeme -> chunks and term frequencies, read from the chunks'
 * tsvectors, so stemming stays PostgreSQL's) are loaded once per corpus version and the top-k is scored
 * exactly over every chunk holding a query term. For the many small and medium tenants this replaces the
 * BM25 statement, which costs the database milliseconds per question; a tenant over the memory budget keeps
 * the SQL path. Same formula and tie-break as the SQL (score desc, id asc).
 */
export interface TermVectorRow {
  id: string
  document_id: string
  len: number
  lexemes: string[]
  tfs: number[]
}

export interface LexicalEntry {
  version: number
  ids: string[]
  docIds: string[]
  lens: Float32Array
  postings: Map<string, { rows: Int32Array; tfs: Float32Array }>
  bytes: number
}

/** A tenant's lexemes with the chunks holding each, from its postings (the spelling correction's dictionary). */
export function* vocabularyOf(entry: LexicalEntry): Iterable<[string, number]> {
  for (const [term, p] of entry.postings) yield [term, p.rows.length]
}

export type TermVectorLoader = () => AsyncIterable<TermVectorRow[]>

/** Rough bytes of a tenant's postings: one (row, tf) pair per token at most, plus per-chunk overhead. */
export const estimateLexicalBytes = (chunks: number, totalTokens: number) => totalTokens * 8 + chunks * 160

export class LexicalCache {
  private entries: BudgetLru<LexicalEntry>
  private loading = new Map<string, Promise<LexicalEntry | null>>()
  private lastLoaded = new Map<string, number>()

  constructor(
    private readonly maxBytes: number,
    /** A tenant whose corpus keeps changing (a crawl) is reloaded at most this often; the SQL path serves meanwhile. */
    private readonly minReloadMs = 1000,
  ) {
    this.entries = new BudgetLru(maxBytes)
  }

  /**
   * The tenant's postings at `version`: loaded (once, shared by concurrent callers) when missing; when stale,
   * reloaded unless the last load was under `minReloadMs` ago. Null: use the SQL path (over budget, a load
   * failed, or a reload is being held back).
   */
  async get(tenantId: string, version: number, chunks: number, totalTokens: number, load: TermVectorLoader): Promise<LexicalEntry | null> {
    const cur = this.entries.get(tenantId)
    if (cur && cur.version === version) return cur
    if (chunks <= 0 || estimateLexicalBytes(chunks, totalTokens) > this.maxBytes) return null
    const key = `${tenantId}:${version}`
    let p = this.loading.get(key)
    if (!p) {
      if (cur && performance.now() - (this.lastLoaded.get(tenantId) ?? 0) < this.minReloadMs) return null
      p = this.load(tenantId, version, load)
        .catch(() => null)
        .finally(() => {
          this.loading.delete(key)
          setBounded(this.lastLoaded, tenantId, performance.now(), 10_000)
        })
      this.loading.set(key, p)
    }
    return p
  }

  private async load(tenantId: string, version: number, load: TermVectorLoader): Promise<LexicalEntry | null> {
    const ids: string[] = []
    const docIds: string[] = []
    const lens: number[] = []
    const lists = new Map<string, { rows: number[]; tfs: number[] }>()
    let pairs = 0
    for await (const page of load()) {
      for (const row of page) {
        const r = ids.length
        ids.push(row.id)
        docIds.push(row.document_id)
        lens.push(Math.max(1, row.len))
        for (let i = 0; i < row.lexemes.length; i++) {
          const term = row.lexemes[i]!
          let list = lists.get(term)
          if (!list) lists.set(term, (list = { rows: [], tfs: [] }))
          list.rows.push(r)
          list.tfs.push(row.tfs[i] ?? 1)
        }
        pairs += row.lexemes.length
        if (pairs * 8 + ids.length * 160 > this.maxBytes) return null
      }
    }
    if (ids.length === 0) return null
    const postings = new Map<string, { rows: Int32Array; tfs: Float32Array }>()
    for (const [term, l] of lists) postings.set(term, { rows: Int32Array.from(l.rows), tfs: Float32Array.from(l.tfs) })
    const entry: LexicalEntry = { version, ids, docIds, lens: Float32Array.from(lens), postings, bytes: estimateLexicalBytes(ids.length, pairs) }
    this.entries.set(tenantId, entry)
    return entry
  }
}

/** Exact BM25 top-k of the plan's terms over the entry. */
export function scoreBm25(entry: LexicalEntry, plan: Pick<QueryPlan, 'terms' | 'avgdl'>, k: number, p: Bm25Params): ScoredChunk[] {
  const scores = new Float64Array(entry.ids.length)
  const touched: number[] = []
  for (const t of plan.terms) {
    const list = entry.postings.get(t.term)
    if (!list) continue
    for (let i = 0; i < list.rows.length; i++) {
      const r = list.rows[i]!
      if (scores[r] === 0) touched.push(r)
      scores[r] += termScore(list.tfs[i]!, entry.lens[r]!, plan.avgdl, t.idf, p)
    }
  }
  // as byScoreThenId, without an object per comparison
  touched.sort((a, b) => {
    const d = scores[b]! - scores[a]!
    if (d > 1e-9 || d < -1e-9) return d
    return entry.ids[a]! < entry.ids[b]! ? -1 : entry.ids[a]! > entry.ids[b]! ? 1 : 0
  })
  return touched.slice(0, k).map((r) => ({ id: entry.ids[r]!, document_id: entry.docIds[r]!, score: scores[r]! }))
}
