import { describe, expect, it } from 'vitest'
import { capPerDocument, cosine, jaccard, type MmrItem, mmr, overlapMatrix, rrf, similarity, wordHashes } from './fusion.fns.js'
import { normalize, topK } from './vector-cache.js'

describe('fusion', () => {
  it('RRF rewards items ranked well by several lists', () => {
    const s = rrf([{ items: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] }, { items: [{ id: 'b' }, { id: 'd' }] }])
    const order = [...s.entries()].sort((x, y) => y[1] - x[1]).map(([id]) => id)
    expect(order[0]).toBe('b')
    expect(s.get('a')).toBeCloseTo(1 / 61)
    expect(s.get('b')).toBeCloseTo(1 / 62 + 1 / 61)
  })

  it('cosine and jaccard', () => {
    expect(cosine([1, 0], [1, 0])).toBeCloseTo(1)
    expect(cosine([1, 0], [0, 1])).toBeCloseTo(0)
    expect(cosine([0, 0], [1, 1])).toBe(0)
    expect(jaccard(wordHashes('ab bc'), wordHashes('bc cd'))).toBeCloseTo(1 / 3)
    expect(jaccard(wordHashes(''), wordHashes(''))).toBe(0)
    expect(wordHashes('Hello, hello World! a')).toEqual(wordHashes('world HELLO'))
    expect(wordHashes('Hello, hello World! a')).toHaveLength(2)
    expect(jaccard(wordHashes('Grüße aus Köln 2024'), wordHashes('köln GRÜSSE 2024'))).toBeCloseTo(2 / 5)
  })

  it('MMR drops near duplicates and prefers diverse evidence', () => {
    const items = [
      { id: 'a', relevance: 1, terms: wordHashes('reset your password from the login page') },
      { id: 'a2', relevance: 0.99, terms: wordHashes('reset your password from the login page') },
      { id: 'b', relevance: 0.9, terms: wordHashes('reset your password login page link expires') },
      { id: 'c', relevance: 0.8, terms: wordHashes('two factor authentication codes are sent by sms') },
    ]
    const picked = mmr(items, 3).map((i) => i.id)
    expect(picked[0]).toBe('a')
    expect(picked).not.toContain('a2')
    expect(picked).toContain('c')
    expect(mmr([], 3)).toEqual([])
  })

  it('finds the nearest vectors exactly', () => {
    const vecs = [
      [1, 0, 0],
      [0.9, 0.1, 0],
      [0, 1, 0],
      [0, 0, 1],
    ].map(normalize)
    const data = new Float32Array(12)
    vecs.forEach((v, i) => data.set(v, i * 3))
    const res = topK({ data, dims: 3, ids: ['a', 'b', 'c', 'd'] }, normalize([1, 0.05, 0]), 2)
    expect(res.map((r) => r.index)).toEqual([0, 1])
    expect(res[0]!.score).toBeGreaterThan(res[1]!.score)
  })
})

describe('capPerDocument', () => {
  const hit = (id: string, documentId: string | null) => ({ id, documentId })
  it('keeps at most `cap` chunks of one document while others remain, then fills with the rest', () => {
    const hits = [hit('a1', 'a'), hit('a2', 'a'), hit('a3', 'a'), hit('a4', 'a'), hit('b1', 'b'), hit('f1', null), hit('c1', 'c')]
    expect(capPerDocument(hits, 5, 3).map((h) => h.id)).toEqual(['a1', 'a2', 'a3', 'b1', 'f1'])
    expect(capPerDocument(hits, 6, 2).map((h) => h.id)).toEqual(['a1', 'a2', 'b1', 'f1', 'c1', 'a3'])
    expect(capPerDocument(hits.slice(0, 4), 4, 3).map((h) => h.id)).toEqual(['a1', 'a2', 'a3', 'a4'])
  })
})

describe('overlapMatrix and mmr on it', () => {
  // a small seeded generator: the same pools every run
  let seed = 42
  const rand = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    return seed / 2 ** 32
  }
  const text = (n: number, vocabulary: number) => Array.from({ length: n }, () => `w${Math.floor(rand() * vocabulary)}`).join(' ')

  /** MMR as it was written before overlapMatrix: pairwise merges, the reference for the order. */
  function reference<T extends MmrItem>(items: T[], k: number, lambda: number, dup = 0.95): T[] {
    const max = Math.max(...items.map((i) => i.relevance))
    const picked: T[] = []
    const maxSim = new Map<string, number>()
    let rest = [...items]
    while (picked.length < k && rest.length > 0) {
      let best: T | null = null
      let bestScore = -Infinity
      for (const it of rest) {
        const s = lambda * (max > 0 ? it.relevance / max : 0) - (1 - lambda) * (maxSim.get(it.id) ?? 0)
        if (s > bestScore) {
          bestScore = s
          best = it
        }
      }
      picked.push(best!)
      rest = rest.filter((it) => it !== best)
      const next: T[] = []
      for (const it of rest) {
        const sim = similarity(it, best!)
        if (sim >= dup) continue
        maxSim.set(it.id, Math.max(maxSim.get(it.id) ?? 0, sim))
        next.push(it)
      }
      rest = next
    }
    return picked
  }

  it('gives every pair the same overlap as jaccard, empty and identical sets included', () => {
    const terms = [wordHashes(''), ...Array.from({ length: 18 }, (_, i) => wordHashes(text(20 + i * 15, 200))), wordHashes('')]
    terms.push(terms[3]!.slice())
    const overlap = overlapMatrix(terms)
    for (let i = 0; i < terms.length; i++) for (let j = 0; j < terms.length; j++) if (i !== j) expect(overlap(i, j)).toBe(jaccard(terms[i]!, terms[j]!))
  })

  it('orders pools as the pairwise MMR did, near duplicates and embeddings included', () => {
    for (let round = 0; round < 30; round++) {
      const items: MmrItem[] = Array.from({ length: 20 }, (_, i) => ({
        id: `c${i}`,
        relevance: Math.round(rand() * 20) / 20,
        terms: wordHashes(text(30 + Math.floor(rand() * 200), 120)),
      }))
      items[5] = { ...items[4]!, id: 'dup' } // a near duplicate is dropped, as before
      if (round % 3 === 0) for (const it of items.slice(0, 8)) it.embedding = Array.from({ length: 4 }, () => rand() - 0.5)
      for (const lambda of [0.5, 0.9])
        expect(mmr(items, items.length, lambda).map((i) => i.id)).toEqual(reference(items, items.length, lambda).map((i) => i.id))
      expect(mmr(items, 6, 0.9).map((i) => i.id)).toEqual(reference(items, 6, 0.9).map((i) => i.id))
    }
  })
})
