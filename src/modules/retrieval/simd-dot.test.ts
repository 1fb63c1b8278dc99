import { describe, expect, it } from 'vitest'
import { DotMatrix, simdAvailable } from './simd-dot.js'
import { normalize, topK } from './vector-cache.js'

const random = (n: number, seed: number) => {
  let x = seed
  return Float32Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2147483648
    return x / 2147483648 - 0.5
  })
}

describe('DotMatrix (WebAssembly SIMD)', () => {
  it('is available on Node 20', () => {
    expect(simdAvailable()).toBe(true)
  })

  it('gives the dot products of the scalar loop for any width, including ones that are not a multiple of 8', () => {
    for (const dims of [1, 3, 8, 13, 64, 1536]) {
      const rows = 37
      const data = random(rows * dims, dims)
      const q = random(dims, dims + 1)
      const scores = DotMatrix.from(data, dims)!.scores(q)
      expect(scores).toHaveLength(rows)
      for (let r = 0; r < rows; r++) {
        let expected = 0
        for (let d = 0; d < dims; d++) expected += data[r * dims + d]! * q[d]!
        expect(scores[r]).toBeCloseTo(expected, 4)
      }
    }
  })

  it('picks the same top k through topK as the JavaScript loop', () => {
    const dims = 96
    const rows = 500
    const data = random(rows * dims, 7)
    for (let r = 0; r < rows; r++) data.set(normalize(data.subarray(r * dims, (r + 1) * dims)), r * dims)
    const ids = Array.from({ length: rows }, (_, i) => `c${i}`)
    const q = normalize(random(dims, 8))
    const plain = topK({ data, dims, ids }, q, 10)
    const simd = topK({ data: new Float32Array(0), dims, ids, matrix: DotMatrix.from(data, dims) }, q, 10)
    expect(simd.map((x) => x.index)).toEqual(plain.map((x) => x.index))
    simd.forEach((x, i) => expect(x.score).toBeCloseTo(plain[i]!.score, 5))
  })

  it('scans 8-bit rows within half its margin of the exact dot products, and scores any row exactly against the same query', () => {
    for (const dims of [5, 16, 100, 1536]) {
      const rows = 300
      const data = random(rows * dims, dims + 3)
      for (let r = 0; r < rows; r++) data.set(normalize(data.subarray(r * dims, (r + 1) * dims)), r * dims)
      const q = normalize(random(dims, dims + 4))
      const m = DotMatrix.from(data, dims)!
      const exact = m.scores(q).slice()
      const approx = m.approx(q)
      expect(m.margin()).toBeLessThan(dims >= 1536 ? 3e-3 : 0.05)
      // half the margin: six standard deviations of the rounding error
      for (let r = 0; r < rows; r++) expect(Math.abs(approx[r]! - exact[r]!)).toBeLessThan(m.margin() / 2)
      for (const r of [0, 7, rows - 1]) expect(m.exact(r)).toBeCloseTo(exact[r]!, 6)
    }
  })

  it('finds the exact top k among rows closer to each other than the 8-bit error (all within the margin are rescored)', () => {
    const dims = 384
    const rows = 2000
    const base = normalize(random(dims, 11))
    const noise = random(rows * dims, 12)
    const data = new Float32Array(rows * dims)
    for (let r = 0; r < rows; r++) {
      // 300 near copies of one direction (cosines to each other within about 1e-3), the rest unrelated
      const row = Float32Array.from({ length: dims }, (_, d) => (r < 300 ? base[d]! + 0.002 * noise[r * dims + d]! : noise[r * dims + d]!))
      data.set(normalize(row), r * dims)
    }
    const ids = Array.from({ length: rows }, (_, i) => `c${i}`)
    const q = base
    for (const k of [1, 6, 40]) {
      const plain = topK({ data, dims, ids }, q, k)
      const simd = topK({ data: new Float32Array(0), dims, ids, matrix: DotMatrix.from(data, dims) }, q, k)
      expect(simd).toHaveLength(k)
      // rank by rank the same similarity (two rows may swap on a tie in the last float bit)
      simd.forEach((x, i) => expect(x.score).toBeCloseTo(plain[i]!.score, 6))
      expect(new Set(simd.map((x) => x.index)).size).toBe(k)
    }
  })
})
