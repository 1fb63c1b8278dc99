import { describe, expect, it } from 'vitest'
import { closest, corrections, slipDictionary, slipDistance, unknownTerms } from './spelling.fns.js'

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

  it('agrees with the full distance table, for words longer than the reused rows too', () => {
    // the textbook table, allocated per call: the reference the reused-row version must match
    const reference = (a: string, b: string) => {
      const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
      for (let i = 1; i <= a.length; i++)
        for (let j = 1; j <= b.length; j++) {
          d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
          if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
        }
      return d[a.length]![b.length]!
    }
    const words = ['password', 'pasword', 'passowrd', 'wireguard', 'wieguard', 'ab', 'ba', 'abc', 'x'.repeat(90), `${'x'.repeat(89)}y`]
    for (const a of words)
      for (const b of words) {
        const want = reference(a, b)
        expect(slipDistance(a, b, 2)).toBe(want > 2 ? 3 : want)
      }
  })

  it('reads a dictionary built once as it reads the vocabulary itself', () => {
    const vocab: [string, number][] = [
      ['password', 12],
      ['passwort', 1],
      ['sync', 9],
      ['block', 5],
      ['what', 50],
      ['unused', 0],
    ]
    const words = ['pasword', 'snyc', 'blck', 'whhat', 'unusde']
    expect(corrections(words, slipDictionary(vocab))).toEqual(corrections(words, vocab))
    expect(corrections(words, vocab).map((c) => c.term)).toEqual(['password', 'sync', 'block'])
  })
})

describe('the letter masks that skip most of the dictionary', () => {
  it('finds what a scan of every lexeme finds, for slips of every kind and words of any script', () => {
    // a vocabulary of random words, and words a slip or two from them (and from nothing)
    let seed = 7
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    const alphabet = 'abcdefghijklmnopqrstuvwxyzäöüéçñ'
    const word = (len: number) => Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join('')
    const vocab: [string, number][] = Array.from({ length: 3000 }, () => [word(4 + rand(9)), 1 + rand(20)])
    const slip = (w: string) => {
      const i = rand(w.length)
      switch (rand(4)) {
        case 0:
          return w.slice(0, i) + alphabet[rand(alphabet.length)] + w.slice(i + 1)
        case 1:
          return w.slice(0, i) + w.slice(i + 1)
        case 2:
          return w.slice(0, i) + alphabet[rand(alphabet.length)] + w.slice(i)
        default:
          return i + 1 < w.length ? w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2) : w
      }
    }
    const words = [
      ...vocab.slice(0, 300).map(([w]) => slip(w)),
      ...vocab.slice(300, 500).map(([w]) => slip(slip(w))),
      ...Array.from({ length: 100 }, () => word(4 + rand(9))),
      'пароль',
      'парол',
      'パスワード',
    ]
    vocab.push(['пароль', 3], ['パスワード', 2])
    const dict = slipDictionary(vocab)
    const brute = (w: string) => {
      const max = w.length >= 8 ? 2 : 1
      let best: { term: string; df: number; d: number } | null = null
      for (const [term, df] of vocab) {
        if (df <= 0 || term === w || Math.abs(term.length - w.length) > max) continue
        const d = slipDistance(w, term, max)
        if (d > max) continue
        if (w.length < 5 && !(term.length === w.length + 1 || [...term].sort().join('') === [...w].sort().join(''))) continue
        if (!best || d < best.d || (d === best.d && (df > best.df || (df === best.df && term < best.term)))) best = { term, df, d }
      }
      return best ? { term: best.term, df: best.df } : null
    }
    let found = 0
    for (const w of words) {
      const c = closest(w, dict)
      expect({ w, c }).toEqual({ w, c: brute(w) })
      if (c) found++
    }
    expect(found).toBeGreaterThan(400)
  })
})
