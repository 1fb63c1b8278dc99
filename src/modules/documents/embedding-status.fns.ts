import type { EmbeddingFailureReason, EmbeddingFailureScope, HealthStatus } from '../../db/schema/ingestion.js'
import type { LlmFailureKind, VectorProblem } from '../llm/llm.js'

/**
 * Whether a document's chunks have their vectors, and if not why: the honest half of "ready". A document
 * is searchable by keywords as soon as it is indexed; its vectors (for the embedding model in use) come
 * after, from the provider. When the provider fails, the reason is kept per tenant (`embedding_failures`)
 * and shown on every document that still misses vectors, as a field and as a health warning.
 */

export interface EmbeddingFailure {
  model: string
  reason: EmbeddingFailureReason
  scope: EmbeddingFailureScope
  attempts: number
  failed_at: Date
}

export type VectorsStatus = 'ready' | 'pending' | 'failed'

export interface DocumentEmbeddings {
  /** `ready`: every chunk has its vector; `pending`: being embedded; `failed`: the last try failed (see `reason`). */
  status: VectorsStatus
  model: string
  done: number
  total: number
  reason: EmbeddingFailureReason | null
  message: string | null
  failed_at: string | null
}

/** What to tell the operator; never the provider's own words (they may echo input or carry secrets). */
const REASON_TEXT: Record<EmbeddingFailureReason, string> = {
  unreachable: 'provider unreachable',
  timeout: 'provider timed out',
  provider_error: 'provider error',
  rate_limited: 'provider rate limit reached',
  model_not_found: 'embedding model not found at the provider',
  malformed: 'provider sent an unreadable reply',
  wrong_width: 'provider sent vectors of another width than the index (check EMBEDDING_MODEL and EMBEDDING_DIMENSIONS)',
  not_finite: 'provider sent vectors with values that are not numbers (check the embedding server and EMBEDDING_MODEL)',
  zero_norm: 'provider sent all-zero vectors (check the embedding server and EMBEDDING_MODEL)',
  key_refused: 'the model key was refused',
  rejected: 'the provider refused the request',
  no_key: 'no model key is set',
}

/**
 * A failed embedding call in two words and a scope: `provider` failures (the address, the service, the
 * model) end when the provider answers again, whichever tenant's call proves it; `tenant` failures (its
 * key) end when the tenant changes its key. An abort (shutdown) is no failure.
 */
export function classifyEmbeddingFailure(e: {
  kind: LlmFailureKind
  status?: number
  problem?: VectorProblem
}): { reason: EmbeddingFailureReason; scope: EmbeddingFailureScope } | null {
  if (e.kind === 'aborted') return null
  if (e.problem === 'wrong_width' || e.problem === 'not_finite' || e.problem === 'zero_norm') return { reason: e.problem, scope: 'provider' }
  if (e.kind === 'network') return { reason: 'unreachable', scope: 'provider' }
  if (e.kind === 'timeout') return { reason: 'timeout', scope: 'provider' }
  if (e.kind === 'malformed') return { reason: 'malformed', scope: 'provider' }
  const s = e.status ?? 0
  if (s === 401 || s === 403) return { reason: 'key_refused', scope: 'tenant' }
  if (s === 404) return { reason: 'model_not_found', scope: 'provider' }
  if (s === 429) return { reason: 'rate_limited', scope: 'provider' }
  if (s >= 400 && s < 500) return { reason: 'rejected', scope: 'tenant' }
  return { reason: 'provider_error', scope: 'provider' }
}

function retryHint(f: Pick<EmbeddingFailure, 'reason' | 'scope'>): string {
  if (f.reason === 'no_key') return 'add a model key to create them'
  if (f.reason === 'key_refused') return 'set a working model key to retry now'
  if (f.scope === 'provider') return 'they are created as soon as the provider answers again'
  return 'they are retried automatically'
}

export function failureMessage(f: Pick<EmbeddingFailure, 'reason' | 'scope'>): string {
  return `Embeddings failed: ${REASON_TEXT[f.reason]}. The document is searchable by keywords only until its vectors exist; ${retryHint(f)}.`
}

/**
 * A document's embedding state from its status, its chunk count, the chunks still missing a vector of
 * `model`, and the tenant's last failure (which counts only when it is about the same model).
 */
export function documentEmbeddings(
  doc: { status: string; chunk_count: number },
  missing: number,
  failure: EmbeddingFailure | null,
  model: string,
): DocumentEmbeddings {
  const total = doc.status === 'ready' ? doc.chunk_count : 0
  const left = Math.min(Math.max(0, missing), total)
  const base = { model, done: total - left, total, reason: null, message: null, failed_at: null }
  if (doc.status === 'processing') return { ...base, status: 'pending' }
  if (left === 0) return { ...base, status: 'ready' }
  if (failure && failure.model === model) {
    return { ...base, status: 'failed', reason: failure.reason, message: failureMessage(failure), failed_at: failure.failed_at.toISOString() }
  }
  return { ...base, status: 'pending' }
}

export const EMBEDDINGS_WARNING = 'embeddings_missing'
const PENALTY = { medium: 15, low: 5 } as const

/**
 * The stored health plus a warning while the document's vectors failed, so "ready, 100" is never shown
 * for a document that only keyword search can find. Computed when read: it clears once the vectors exist.
 */
export function withEmbeddingsWarning(health: HealthStatus, e: DocumentEmbeddings): HealthStatus {
  const warnings = health.warnings.filter((w) => w.type !== EMBEDDINGS_WARNING)
  if (e.status !== 'failed' || !e.message) return warnings.length === health.warnings.length ? health : { ...health, warnings }
  const severity = e.reason === 'no_key' ? 'low' : 'medium'
  return {
    ...health,
    score: health.score === null ? null : Math.max(0, health.score - PENALTY[severity]),
    warnings: [...warnings, { type: EMBEDDINGS_WARNING, severity, message: e.message }],
  }
}

/** Provider failures are probed again soon, then less often: 5 s doubling, at most every 30 s. */
export const probeDelaySeconds = (attempt: number): number => Math.min(30, 5 * 2 ** Math.max(0, attempt - 1))
