import { describe, expect, it } from 'vitest'
import { corrections, slipDistance, unknownTerms } from './spelling.fns.js'

describe('typing slips', () => {
  it('counts one change, drop, addition or swap of neighbours as one slip', () => {
    expect(slipDistance('pasword', 'password', 2)).toBe(1)
    expect(slipDistance('duckducgko', 'duckduckgo', 2)).toBe(1)
    expect(slipDistance('wieguard', 'wireguard', 2)).toBe(1)
    expect(slipDistance('nuber', 'number', 2)).toBe(1)
    expect(slipDistance('refund', 'return', 1)).toBe(2)
  })

  it('corrects only unknown words of five letters or more, to the most used close lexeme of the knowledge', () => {
    const terms = [
      { term: 'pasword', df: 0 },
      { term: 'vpn', df: 40 },
      { term: 'xyz', df: 0 },
      { term: 'zzzzzzzz', df: 0 },
    ]
    expect(unknownTerms(terms)).toEqual(['pasword', 'zzzzzzzz'])
    const vocab: [string, number][] = [
      ['password', 12],
      ['passwort', 1],
      ['vpn', 40],
      ['sword', 3],
    ]
    expect(corrections(unknownTerms(terms), vocab)).toEqual([{ term: 'password', df: 12, corrects: 'pasword' }])
  })

  it('leaves a word with no close lexeme alone', () => {
    expect(corrections(['telemetri'], [['refund', 4]])).toEqual([])
  })

  it('corrects a four-letter word only for a swap or a dropped letter, never a changed one', () => {
    const vocab: [string, number][] = [
      ['sync', 9],
      ['block', 5],
      ['boat', 7],
      ['info', 4],
    ]
    expect(corrections(['snyc', 'blck', 'inof'], vocab).map((c) => [c.corrects, c.term])).toEqual([
      ['snyc', 'sync'],
      ['blck', 'block'],
      ['inof', 'info'],
    ])
    // 'bolt' is one changed letter from 'boat', and a word in its own right
    expect(corrections(['bolt'], vocab)).toEqual([])
  })
})
