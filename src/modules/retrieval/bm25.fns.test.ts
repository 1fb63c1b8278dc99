import { describe, expect, it } from 'vitest'
import { chooseQueryTerms, idf, isExact, lexicalConfidence, orQuery, planQuery, termScore, withoutCompounds } from './bm25.fns.js'

describe('bm25', () => {
  it('gives rare terms more weight and never a negative idf', () => {
    expect(idf(1, 1000)).toBeGreaterThan(idf(100, 1000))
    expect(idf(1000, 1000)).toBeGreaterThan(0)
  })

  it('saturates term frequency and prefers shorter chunks', () => {
    const w = idf(5, 100)
    expect(termScore(2, 100, 100, w)).toBeGreaterThan(termScore(1, 100, 100, w))
    expect(termScore(20, 100, 100, w)).toBeLessThan(w * 2.2)
    expect(termScore(1, 50, 100, w)).toBeGreaterThan(termScore(1, 200, 100, w))
    expect(termScore(0, 100, 100, w)).toBe(0)
  })

  it('plans the rarest terms as essential within the budget and bounds the rest', () => {
    const plan = planQuery(
      [
        { term: 'common', df: 900 },
        { term: 'rare', df: 3 },
        { term: 'mid', df: 50 },
        { term: 'missing', df: 0 },
      ],
      { n: 1000, totalLen: 100_000 },
      100,
    )
    expect(plan.terms.map((t) => t.term)).toEqual(['rare', 'mid', 'common'])
    expect(plan.essential.map((t) => t.term)).toEqual(['rare', 'mid'])
    expect(plan.nonEssentialBound).toBeCloseTo(idf(900, 1000) * 2.2)
    expect(plan.avgdl).toBe(100)
    // a chunk-level top-k whose k-th score beats the bound is exact; one below is not
    expect(isExact(plan, plan.nonEssentialBound + 0.1, 10, 40)).toBe(true)
    expect(isExact(plan, plan.nonEssentialBound - 0.1, 10, 40)).toBe(false)
    expect(isExact(plan, undefined, 10, 3)).toBe(false)
  })

  it('always keeps at least one essential term, however common', () => {
    const plan = planQuery([{ term: 'a', df: 5000 }], { n: 6000, totalLen: 6000 }, 100)
    expect(plan.essential).toHaveLength(1)
    expect(isExact(plan, undefined, 10, 0)).toBe(true)
  })

  it('turns a score into a 0..1 confidence that drops with unknown words (capped)', () => {
    const stats = { n: 1000, totalLen: 100_000 }
    const known = planQuery(
      [
        { term: 'reset', df: 10 },
        { term: 'password', df: 20 },
      ],
      stats,
      1000,
    )
    const full = known.terms.reduce((a, t) => a + termScore(1, 100, 100, t.idf), 0)
    expect(lexicalConfidence(full, known)).toBeCloseTo(1)
    const withUnknown = planQuery(
      [
        { term: 'reset', df: 10 },
        { term: 'password', df: 20 },
        { term: 'kubernetes', df: 0 },
      ],
      stats,
      1000,
    )
    const c = lexicalConfidence(full, withUnknown)
    expect(c).toBeGreaterThan(0.5)
    expect(c).toBeLessThan(0.8)
    expect(lexicalConfidence(1, { idfMass: 0 })).toBe(0)
  })

  it('leaves out a hyphenated compound whose parts are query terms too (to_tsvector indexes both)', () => {
    const t = (...terms: string[]) => withoutCompounds(terms.map((term) => ({ term, df: 3 }))).map((s) => s.term)
    // to_tsvector('english', 'inflammation-related fibrosis'): the whole and its stemmed parts
    expect(t('inflammation-rel', 'inflamm', 'relat', 'fibrosi')).toEqual(['inflamm', 'relat', 'fibrosi'])
    expect(t('state-of-the-art', 'state', 'art')).toEqual(['state', 'art'])
    expect(t('x-ray', 'x', 'ray')).toEqual(['x', 'ray'])
    // a host or e-mail lexeme has no parts indexed; a signed number is no compound
    expect(t('my-app.example.com', 'deploy')).toEqual(['my-app.example.com', 'deploy'])
    expect(t('-6', 'il')).toEqual(['-6', 'il'])
    // a compound alone (its parts were stop words or are unknown) still counts
    expect(t('wi-fi')).toEqual(['wi-fi'])
    const plan = planQuery(
      [
        { term: 'x-ray', df: 2 },
        { term: 'x', df: 40 },
        { term: 'ray', df: 30 },
      ],
      { n: 1000, totalLen: 100_000 },
      1000,
    )
    expect(plan.terms.map((s) => s.term)).toEqual(['ray', 'x'])
    expect(plan.idfMass).toBeCloseTo(idf(30, 1000) + idf(40, 1000))
  })

  it('quotes lexemes for a tsquery', () => {
    expect(orQuery(["it's", 'a\\b', 'x'])).toBe("'it''s' | 'a\\\\b' | 'x'")
  })

  it("takes one configuration's lexemes: the question's language when clear, else the one the corpus knows best", () => {
    const stats = [
      { cfg: 'english', term: 'biomateri', df: 4 },
      { cfg: 'english', term: 'properti', df: 90 },
      { cfg: 'portuguese', term: 'biomaterials', df: 0 },
      { cfg: 'portuguese', term: 'properti', df: 90 },
    ]
    const terms = (cfg: string | null) => chooseQueryTerms(stats, cfg).map((t) => t.term)
    expect(terms('english')).toEqual(['biomateri', 'properti'])
    expect(terms('portuguese')).toEqual(['biomaterials', 'properti'])
    // unclear (or a language the tenant has no chunks in): the configuration with more terms found
    expect(terms(null)).toEqual(['biomateri', 'properti'])
    expect(terms('simple')).toEqual(['biomateri', 'properti'])
    expect(terms('german')).toEqual(['biomateri', 'properti'])
    // function words `simple` keeps do not win it the question: "what's new in search" over English chunks and a few `simple` ones
    const short = [
      { cfg: 'english', term: 'new', df: 34 },
      { cfg: 'english', term: 'search', df: 225 },
      { cfg: 'simple', term: 'what', df: 5 },
      { cfg: 'simple', term: 's', df: 3 },
      { cfg: 'simple', term: 'new', df: 34 },
      { cfg: 'simple', term: 'in', df: 2 },
      { cfg: 'simple', term: 'search', df: 225 },
    ]
    expect(chooseQueryTerms(short, null).map((t) => t.term)).toEqual(['new', 'search'])
    // one configuration: as is
    expect(chooseQueryTerms([{ cfg: 'simple', term: 'npm', df: 2 }], 'english')).toEqual([{ term: 'npm', df: 2 }])
    expect(chooseQueryTerms([], null)).toEqual([])
  })
})
