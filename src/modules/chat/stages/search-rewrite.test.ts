import { describe, expect, it } from 'vitest'
import type { RetrievalHit, RetrievalResult } from '../../retrieval/retrieval.service.js'
import { cleanQuery, fuseRetrievals, rewriteForSearch } from './05-search-rewrite.js'

const hit = (id: string, confidence: number, documentId = id): RetrievalHit => ({
  id,
  kind: 'chunk',
  documentId,
  title: `Page ${id}`,
  url: null,
  text: `Text of ${id}.`,
  score: 0,
  confidence,
  bm25: null,
  lexical: confidence,
  vector: null,
})
const result = (query: string, hits: RetrievalHit[], terms: string[]): RetrievalResult => ({
  hits,
  corpusChunks: 10,
  bestScore: Math.max(0, ...hits.map((h) => h.confidence)),
  tokens: 3,
  timings: {},
  vectorUsed: false,
  queryTerms: terms.map((term) => ({ term, df: 1 })),
  query,
})

describe('search query rewrite', () => {
  it('keeps the first line of the reply as a query, without quotes or a label, at most 16 words', () => {
    expect(cleanQuery('Query: "deactivate account"\nbecause...')).toBe('deactivate account')
    expect(cleanQuery('  \n  “change default search engine”  ')).toBe('change default search engine')
    expect(cleanQuery(Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ')).split(' ')).toHaveLength(16)
    expect(cleanQuery('')).toBe('')
    expect(cleanQuery('«"`reset password`"»')).toBe('reset password')
    expect(cleanQuery('""""')).toBe('')
  })

  it('trims quotes in linear time (issue 50: the regular expression was quadratic on a run of them)', () => {
    const t0 = performance.now()
    expect(cleanQuery(`a${'"'.repeat(100_000)}b`)).toBe(`a${'"'.repeat(100_000)}b`.slice(0, 300))
    expect(performance.now() - t0).toBeLessThan(1_000)
  })

  it('fuses both rankings, a hit both found keeping its better confidence, and the floor reads both queries', () => {
    const a = result('kill my profile', [hit('x', 0.1), hit('y', 0.05)], ['kill', 'profil'])
    const b = result('deactivate account', [hit('y', 0.9), hit('z', 0.4)], ['deactiv', 'account'])
    const f = fuseRetrievals(a, b, { k: 10 })
    expect(f.hits.map((h) => h.id)).toEqual(['y', 'x', 'z'])
    expect(f.hits[0]!.confidence).toBe(0.9)
    expect(f.bestScore).toBe(0.9)
    expect(f.query).toBe('kill my profile deactivate account')
    expect(f.queryTerms.map((t) => t.term)).toEqual(['kill', 'profil', 'deactiv', 'account'])
    expect(f.tokens).toBe(6)
  })

  it('weighs the second ranking when asked (the translated question, #40): its hits lead', () => {
    // as asked (German words, few in the English pages) and as translated
    const asked = result('konto deaktivieren', [hit('a', 0.2), hit('b', 0.1), hit('c', 0.05)], ['konto'])
    const translated = result('deactivate account', [hit('c', 0.9), hit('d', 0.6), hit('a', 0.3)], ['deactiv', 'account'])
    expect(fuseRetrievals(asked, translated, { k: 10 }).hits.map((h) => h.id)).toEqual(['a', 'c', 'b', 'd'])
    const weighed = fuseRetrievals(asked, translated, { k: 10, weightB: 2 })
    expect(weighed.hits.map((h) => h.id)).toEqual(['c', 'a', 'd', 'b'])
    // the floor still reads both questions' terms
    expect(weighed.queryTerms.map((t) => t.term)).toEqual(['konto', 'deactiv', 'account'])
  })

  it('never throws: a failed call, an empty or unchanged reply give no query', async () => {
    const o = { apiKey: 'k', model: 'm', question: 'How do I kill my profile?', timeoutMs: 100 }
    const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }
    const fail = await rewriteForSearch({ chat: () => Promise.reject(Object.assign(new Error('x'), { kind: 'timeout' })) }, o)
    expect(fail).toMatchObject({ query: null, tokens: 0, error: 'timeout' })
    const same = await rewriteForSearch({ chat: async () => ({ text: 'how do I kill my profile', usage }) }, o)
    expect(same).toMatchObject({ query: null, tokens: 7, error: 'unchanged' })
    const ok = await rewriteForSearch({ chat: async () => ({ text: 'deactivate account', usage }) }, o)
    expect(ok).toMatchObject({ query: 'deactivate account', tokens: 7 })
  })
})
