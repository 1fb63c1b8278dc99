import { describe, expect, it } from 'vitest'
import { classifyEmbeddingFailure, documentEmbeddings, probeDelaySeconds, withEmbeddingsWarning, type EmbeddingFailure } from './embedding-status.fns.js'

const health = { score: 100, checked_at: '2025-01-01T00:00:00.000Z', warnings: [], error: null }
const failure = (over: Partial<EmbeddingFailure> = {}): EmbeddingFailure => ({
  model: 'm1',
  reason: 'unreachable',
  scope: 'provider',
  attempts: 1,
  failed_at: new Date('2025-01-02T00:00:00Z'),
  ...over,
})

describe('embedding status', () => {
  it('classifies failures by who can end them', () => {
    expect(classifyEmbeddingFailure({ kind: 'network' })).toEqual({ reason: 'unreachable', scope: 'provider' })
    expect(classifyEmbeddingFailure({ kind: 'timeout' })).toEqual({ reason: 'timeout', scope: 'provider' })
    expect(classifyEmbeddingFailure({ kind: 'http', status: 503 })).toEqual({ reason: 'provider_error', scope: 'provider' })
    expect(classifyEmbeddingFailure({ kind: 'http', status: 404 })).toEqual({ reason: 'model_not_found', scope: 'provider' })
    expect(classifyEmbeddingFailure({ kind: 'http', status: 401 })).toEqual({ reason: 'key_refused', scope: 'tenant' })
    expect(classifyEmbeddingFailure({ kind: 'http', status: 400 })).toEqual({ reason: 'rejected', scope: 'tenant' })
    expect(classifyEmbeddingFailure({ kind: 'aborted' })).toBeNull()
  })

  it('is ready, pending or failed from the missing chunks and a failure of the same model', () => {
    const doc = { status: 'ready', chunk_count: 4 }
    expect(documentEmbeddings(doc, 0, failure(), 'm1')).toMatchObject({ status: 'ready', done: 4, total: 4, reason: null })
    expect(documentEmbeddings(doc, 3, null, 'm1')).toMatchObject({ status: 'pending', done: 1, total: 4 })
    expect(documentEmbeddings(doc, 3, failure({ model: 'old' }), 'm1').status).toBe('pending')
    const failed = documentEmbeddings(doc, 4, failure(), 'm1')
    expect(failed).toMatchObject({ status: 'failed', reason: 'unreachable', failed_at: '2025-01-02T00:00:00.000Z' })
    expect(failed.message).toBe(
      'Embeddings failed: provider unreachable. The document is searchable by keywords only until its vectors exist; they are created as soon as the provider answers again.',
    )
    expect(documentEmbeddings({ status: 'processing', chunk_count: 9 }, 9, failure(), 'm1')).toMatchObject({ status: 'pending', total: 0 })
  })

  it('adds one health warning while vectors failed, and none otherwise', () => {
    const failed = documentEmbeddings({ status: 'ready', chunk_count: 2 }, 2, failure({ reason: 'key_refused', scope: 'tenant' }), 'm1')
    const h = withEmbeddingsWarning(health, failed)
    expect(h.score).toBe(85)
    expect(h.warnings).toEqual([{ type: 'embeddings_missing', severity: 'medium', message: failed.message }])
    expect(withEmbeddingsWarning(h, failed).warnings).toHaveLength(1)
    const noKey = documentEmbeddings({ status: 'ready', chunk_count: 2 }, 2, failure({ reason: 'no_key', scope: 'tenant' }), 'm1')
    expect(withEmbeddingsWarning(health, noKey)).toMatchObject({ score: 95, warnings: [{ severity: 'low' }] })
    expect(withEmbeddingsWarning(health, documentEmbeddings({ status: 'ready', chunk_count: 2 }, 0, null, 'm1'))).toBe(health)
  })

  it('probes soon, then at most every 30 s', () => {
    expect([1, 2, 3, 4, 10].map(probeDelaySeconds)).toEqual([5, 10, 20, 30, 30])
  })
})
