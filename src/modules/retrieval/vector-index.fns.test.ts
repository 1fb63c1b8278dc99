import { describe, expect, it } from 'vitest'
import { efSearchFor, indexPays, vectorIndexSpec, vectorSearchMode } from './vector-index.fns.js'

describe('vectorIndexSpec', () => {
  it('names one halfvec index per model and width, within PostgreSQL identifiers', () => {
    const a = vectorIndexSpec('text-embedding-3-small', 1536)!
    expect(a).toMatchObject({ model: 'text-embedding-3-small', dims: 1536, type: 'halfvec' })
    expect(a.name).toMatch(/^chunks_halfvec_[0-9a-f]{12}_1536$/)
    expect(vectorIndexSpec('text-embedding-3-small', 1536, 'vector')).toMatchObject({ type: 'vector', name: a.name.replace('halfvec', 'vector') })
    expect(vectorIndexSpec('m', 3072, 'vector')!.type).toBe('halfvec')
    expect(vectorIndexSpec('text-embedding-3-small', 1536)!.name).toBe(a.name)
    expect(vectorIndexSpec('text-embedding-3-small', 512)!.name).not.toBe(a.name)
    expect(vectorIndexSpec('o\'brien/"model"'.repeat(20), 4000)!.name.length).toBeLessThanOrEqual(63)
  })

  it('has no index past halfvec width or for a width that is not one', () => {
    expect(vectorIndexSpec('m', 4001)).toBeNull()
    expect(vectorIndexSpec('m', 0)).toBeNull()
    expect(vectorIndexSpec('m', 1.5)).toBeNull()
    expect(vectorIndexSpec('', 1536)).toBeNull()
  })
})

describe('indexPays and efSearchFor', () => {
  it('switches at the size and asks the graph for at least k', () => {
    expect(indexPays(19_999, 20_000)).toBe(false)
    expect(indexPays(20_000, 20_000)).toBe(true)
    expect(efSearchFor(30, 100)).toBe(100)
    expect(efSearchFor(300, 100)).toBe(300)
    expect(efSearchFor(5000, 100)).toBe(1000)
  })
})

describe('vectorSearchMode', () => {
  const base = {
    pgvector: false,
    embedded: 20_000,
    dims: 1536,
    cacheNeeds: 200 * 1024 * 1024,
    cacheBytes: 80 * 1024 * 1024,
    minChunks: 20_000,
    indexValid: false,
  }
  it('says when vectors only re-rank, why, and what to change', () => {
    const r = vectorSearchMode(base)
    expect(r.mode).toBe('rerank_only')
    expect(r.detail).toContain('20,000 embedded chunks of 1536 dimensions need 200 MB')
    expect(r.detail).toContain('RETRIEVAL_VECTOR_CACHE_MB (80 MB)')
    expect(r.detail).toContain('pgvector')
  })
  it('names the other modes', () => {
    expect(vectorSearchMode({ ...base, cacheNeeds: 1 }).mode).toBe('in_process')
    expect(vectorSearchMode({ ...base, embedded: 0 }).mode).toBe('none')
    expect(vectorSearchMode({ ...base, pgvector: true, embedded: 100 })).toEqual({ mode: 'pgvector_exact', detail: null })
    expect(vectorSearchMode({ ...base, pgvector: true }).detail).toContain('being built')
    expect(vectorSearchMode({ ...base, pgvector: true, indexValid: true })).toEqual({ mode: 'pgvector_index', detail: null })
  })
})
