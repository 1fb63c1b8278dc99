import { describe, expect, it } from 'vitest'
import { planQuery } from './bm25.fns.js'
import { ALT_WEIGHT, uiAlternates } from './ui-words.fns.js'

describe('other wordings of interface actions', () => {
  it('gives the rest of a group for the phrase a question uses, as whole words only', () => {
    expect(uiAlternates('How do I turn on dark mode?')).toBe('switch on enable activate')
    expect(uiAlternates('how to get rid of   saved passwords')).toBe('remove delete erase')
    expect(uiAlternates('Sign in on my phone and change the theme')).toBe('log in login signin log on edit modify update')
    expect(uiAlternates('Where is the turnover report?')).toBe('')
    expect(uiAlternates('')).toBe('')
  })

  it('weighs them below the question words, and leaves them out of its coverage', () => {
    const plan = planQuery(
      [
        { term: 'turn', df: 10 },
        { term: 'dark', df: 5 },
        { term: 'enabl', df: 10, alt: true },
        { term: 'activ', df: 0, alt: true },
      ],
      { n: 100, totalLen: 10000 },
      1000,
    )
    const turn = plan.terms.find((t) => t.term === 'turn')!
    const enable = plan.terms.find((t) => t.term === 'enabl')!
    expect(enable.idf).toBeCloseTo(turn.idf * ALT_WEIGHT)
    expect(plan.idfMass).toBeCloseTo(turn.idf + plan.terms.find((t) => t.term === 'dark')!.idf)
  })
})
