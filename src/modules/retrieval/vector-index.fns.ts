import { createHash } from 'node:crypto'

/**
 * pgvector's HNSW index over chunks, one per embedding model and width (issue 51). The `embedding` column has no
 * fixed width (the model can change), so it is indexed as an expression with a cast to a fixed width, partial on
 * the model and the width: every query that is to use it repeats the same cast and predicate, with the model and the
 * width as literals (a parameter there would let a generic plan ignore the index). One index shared by every
 * workspace of that model, never one per workspace: every index of a table is locked when a query on it is planned,
 * which broke published designs at a few thousand workspaces.
 */
export interface VectorIndexSpec {
  name: string
  model: string
  dims: number
  /** halfvec (2 bytes a dimension, indexable up to 4,000) where the width allows, else vector (up to 2,000). */
  type: 'halfvec' | 'vector'
}

/** pgvector's limits on the width an HNSW index takes, by type. */
const HALFVEC_MAX_DIMS = 4000
const VECTOR_MAX_DIMS = 2000

/**
 * The index for a model and width; null when pgvector cannot index that width (the exact scan stays). `prefer`:
 * halfvec on PostgreSQL (half the index's size, the same recall in published figures, built faster); vector on the
 * embedded database, whose WebAssembly build converts half floats in software: 2,000 x 1,536 took 187 s in halfvec
 * and 24 s in vector here (docs/performance.md). A width only halfvec takes gets halfvec either way.
 */
export function vectorIndexSpec(model: string, dims: number, prefer: 'halfvec' | 'vector' = 'halfvec'): VectorIndexSpec | null {
  if (!Number.isInteger(dims) || dims < 1 || dims > HALFVEC_MAX_DIMS || model.length === 0) return null
  const type = prefer === 'vector' && dims <= VECTOR_MAX_DIMS ? 'vector' : 'halfvec'
  // the model's name may hold any character and be long: the index's name carries a hash of it (63-byte identifiers)
  const hash = createHash('sha1').update(model).digest('hex').slice(0, 12)
  return { name: `chunks_${type}_${hash}_${dims}`, model, dims, type }
}

/** The index type to prefer on a database kind (vectorIndexSpec). */
export const preferredIndexType = (kind: 'pglite' | 'postgres'): 'halfvec' | 'vector' => (kind === 'pglite' ? 'vector' : 'halfvec')

/**
 * Whether a workspace's vector search goes through the index: only past a size, below which the exact scan of its own
 * rows is cheap and exact (published designs switch at 10,000-50,000 rows; ours is measured in docs/performance.md).
 */
export const indexPays = (embeddedChunks: number, minChunks: number): boolean => embeddedChunks >= minChunks

/**
 * `hnsw.ef_search` for a query of k results: at least k (the graph search returns no more than ef_search candidates
 * before an iterative scan goes on), and the configured floor for recall (40 -> 96.8 %, 200 -> 99.6 % on 1M x 1,536
 * in published figures). pgvector accepts 1-1000.
 */
export const efSearchFor = (k: number, floor: number): number => Math.min(1000, Math.max(k, floor, 1))

/**
 * How a workspace's vectors are searched, for GET /llm/status: none (no vectors yet), pgvector_index / pgvector_exact,
 * in_process (no pgvector; the exact scan of the in-process cache), rerank_only (no pgvector and the workspace's vectors
 * larger than the cache: they only re-rank what its words found, so a question sharing no word with its answer finds
 * nothing; said, never silent).
 */
export type VectorSearchMode = 'none' | 'pgvector_index' | 'pgvector_exact' | 'in_process' | 'rerank_only'

export function vectorSearchMode(s: {
  pgvector: boolean
  embedded: number
  dims: number | null
  /** bytes the in-process cache would need for the workspace's vectors, and its budget */
  cacheNeeds: number
  cacheBytes: number
  minChunks: number
  indexValid: boolean
}): { mode: VectorSearchMode; detail: string | null } {
  const n = s.embedded.toLocaleString('en-US')
  if (s.embedded === 0 || s.dims === null) return { mode: 'none', detail: null }
  if (s.pgvector) {
    if (!indexPays(s.embedded, s.minChunks)) return { mode: 'pgvector_exact', detail: null }
    if (s.indexValid) return { mode: 'pgvector_index', detail: null }
    return {
      mode: 'pgvector_exact',
      detail: `${n} embedded chunks, past RETRIEVAL_VECTOR_INDEX_MIN_CHUNKS (${s.minChunks}): their vector index is being built; until then each question scans them all.`,
    }
  }
  if (s.cacheNeeds <= s.cacheBytes) return { mode: 'in_process', detail: null }
  const mb = (b: number) => `${Math.ceil(b / (1024 * 1024))} MB`
  return {
    mode: 'rerank_only',
    detail:
      `${n} embedded chunks of ${s.dims} dimensions need ${mb(s.cacheNeeds)} of vector cache, over RETRIEVAL_VECTOR_CACHE_MB (${mb(s.cacheBytes)}). ` +
      'Without pgvector their vectors only re-rank the passages found by words, so a question that shares no word with its answer finds nothing. ' +
      'Install pgvector in PostgreSQL (docs/operations.md), or raise RETRIEVAL_VECTOR_CACHE_MB (memory of every process).',
  }
}
