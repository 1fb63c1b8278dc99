import type { Logger } from 'pino'
import type { LlmClient } from '../llm/llm.js'
import type { Bm25Params, TermStat } from './bm25.fns.js'
import type { CorpusRow, RetrievalRepo } from './retrieval.repo.js'
import type { VectorIndexes } from './vector-index.js'

/** The retrieval service's shapes (retrieval.service.ts re-exports them). */

/** An approved FAQ entry matching a query; `score` is a 0..1 confidence. Provided by the knowledge module. */
export interface FaqHit {
  id: string
  question: string
  answer: string
  score: number
}
export type FaqSearch = (tenantId: string, query: string, opts: { limit: number }) => Promise<FaqHit[]>

export interface RetrievalHit {
  /** Chunk id, or `faq:<id>` for an FAQ entry. */
  id: string
  kind: 'chunk' | 'faq'
  documentId: string | null
  title: string
  /** The page a crawled chunk came from; null for uploaded files and FAQs. */
  url: string | null
  text: string
  /** Fused rank score (RRF), for ordering only. */
  score: number
  /** 0..1: the best of the lexical confidence, the cosine similarity and the FAQ score. */
  confidence: number
  bm25: number | null
  lexical: number | null
  vector: number | null
}

export interface RetrievalResult {
  hits: RetrievalHit[]
  /** Chunks the tenant has (0: nothing indexed at all). */
  corpusChunks: number
  /** Highest confidence among the hits, 0 when none. */
  bestScore: number
  /** Tokens of the query embedding. */
  tokens: number
  timings: Record<string, number>
  vectorUsed: boolean
  /** How the vector side was searched, when it was (VectorPath). */
  vectorPath?: VectorPath
  /** The query's lexemes and how many chunks hold each (0: unknown to the knowledge), for the relevance floor. */
  queryTerms: TermStat[]
  /** The query searched (the floor reads its words). */
  query: string
  /** Lexical and FAQ evidence only, given while the query embedding is still in flight (SearchOptions.onLexical). */
  preliminary?: boolean
  /** The tenant's corpus searched (absent: nothing indexed). */
  corpus?: CorpusRow
  /** The floor cosine measured for this knowledge (probeFloor), set by the turn when the words alone do not pass. */
  floorCosine?: number | null
}

/**
 * index: pgvector's shared HNSW index (a workspace past RETRIEVAL_VECTOR_INDEX_MIN_CHUNKS); exact: pgvector's scan of
 * the workspace's rows; cache: the in-process exact scan (no pgvector); rerank: no pgvector and the workspace's vectors
 * too large for the cache, so they only re-ranked the lexical candidates (a question sharing no word finds nothing).
 */
export type VectorPath = 'index' | 'exact' | 'cache' | 'rerank'

/** A caller's count of time spent waiting on the model (the chat turn's meter, model-meter.ts): begin() returns the end. */
export interface ModelWait {
  begin(): () => void
}

export interface SearchOptions {
  /** The tenant's provider key; without it only lexical (and FAQ) retrieval runs. */
  apiKey?: string | null
  k?: number
  /** The passages' token budget: up to k hits packed within it (passages.fns.ts); absent or 0, k whole chunks. */
  budgetTokens?: number
  signal?: AbortSignal
  /** Time allowed to the query embedding; on failure retrieval goes on lexically. */
  embedTimeoutMs?: number
  /**
   * Called once with the lexical (and FAQ) evidence when it is ready before the query embedding: a result marked
   * `preliminary`, so a caller can start on it (the chat turn's early answer) while the vectors come. Not called
   * when the vectors are in first or not used.
   */
  onLexical?: (preliminary: RetrievalResult) => void
  /** How long the embedding may still take before onLexical is called (a fast embedder makes it unnecessary). */
  lexicalGraceMs?: number
  /** Told while the query embedding is awaited (a cached one returns at once, so it adds nothing). */
  modelWait?: ModelWait
}

export interface RetrievalDeps {
  repo: RetrievalRepo
  llm: Pick<LlmClient, 'embed'>
  features: { vector: boolean }
  log?: Pick<Logger, 'warn'>
  embeddingModel: string
  /** Sent with the query embedding when set, as the indexer sends it with the chunks'. */
  embeddingDimensions?: number
  lexicalBudget: number
  /** BM25 rounds (each widens the budget fourfold) when the top-k is not proven exact; default 1. */
  lexicalRounds?: number
  vectorCacheBytes: number
  /** Memory for in-process BM25 postings (0: always the SQL statement). */
  lexicalCacheBytes?: number
  /** memory for chunk texts and document fields kept per corpus version (detail-cache.ts); 0 or absent: none */
  detailCacheBytes?: number
  /** A tenant whose corpus keeps changing has its postings reloaded at most this often (default 1000 ms). */
  lexicalReloadMs?: number
  faqSearch?: FaqSearch
  bm25?: Bm25Params
  /** With pgvector: which workspaces search through the shared HNSW index (vector-index.ts); absent, all exactly. */
  vectorIndexes?: Pick<VectorIndexes, 'forSearch' | 'valid' | 'minChunks'>
}
