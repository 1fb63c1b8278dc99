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
})
