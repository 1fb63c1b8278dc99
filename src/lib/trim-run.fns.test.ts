import { describe, expect, it } from 'vitest'
import { isSpace, trimBothOf, trimEndOf, trimEndWhere, trimLineEnds } from './trim-run.fns.js'

describe('trims of a run at an end, by a scan', () => {
  it('behaves as the regular expressions they replace', () => {
    const cases = ['', '...', 'a.', 'a.!.!', 'a.b.', '!a!', 'ab', '.a', 'x\u2028.']
    for (const s of cases) {
      expect(trimEndOf(s, '.!')).toBe(s.replace(/[.!]+$/, ''))
      expect(trimBothOf(s, '.!')).toBe(s.replace(/^[.!]+|[.!]+$/g, ''))
      expect(trimEndWhere(s, (c) => isSpace(c) || c === '.')).toBe(s.replace(/[\s.]+$/, ''))
    }
  })

  it('isSpace is exactly \\s', () => {
    const differ: number[] = []
    for (let c = 0; c < 0x10000; c++) if (isSpace(String.fromCharCode(c)) !== /\s/.test(String.fromCharCode(c))) differ.push(c)
    expect(differ).toEqual([])
  })

  it('is linear on a long run that does not end the string', () => {
    const s = `${'.'.repeat(200_000)}a`
    const t0 = performance.now()
    expect(trimEndOf(s, '.')).toBe(s)
    expect(trimBothOf(s, '.')).toBe('a')
    expect(performance.now() - t0).toBeLessThan(1_000)
  })
})

describe('trimLineEnds', () => {
  it('is /[ \\t]+$/gm, in linear time', () => {
    const cases = ['', ' ', 'a \t', 'a \nb\t\t\r\nc \u2028d  \u2029 e', ' \t \n \n', 'x y']
    for (const s of cases) expect(trimLineEnds(s)).toBe(s.replace(/[ \t]+$/gm, ''))
    const long = `${' '.repeat(200_000)}a`
    const t0 = performance.now()
    expect(trimLineEnds(long)).toBe(long)
    expect(performance.now() - t0).toBeLessThan(1_000)
  })
})
