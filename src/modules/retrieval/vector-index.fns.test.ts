import { describe, expect, it } from 'vitest'
import { efSearchFor, indexPays, vectorIndexSpec } from './vector-index.fns.js'

describe('vectorIndexSpec', () => {
  it('names one halfvec index per model and width, within PostgreSQL identifiers', () => {
    const a = vectorIndexSpec('text-embedding-3-small', 1536)!
    expect(a).toMatchObject({ model: 'text-embedding-3-small', dims: 1536, type: 'halfvec' })
    expect(a.name).toMatch(/^chunks_hnsw_[0-9a-f]{12}_1536$/)
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
