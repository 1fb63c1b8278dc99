import { describe, expect, it } from 'vitest'
import { cleanDisplayName, sameName } from './display-name.fns.js'

describe('display names', () => {
  it('drops bidi overrides, zero-width and control characters and collapses spaces', () => {
    expect(cleanDisplayName('  Kim\u202E  Lee ')).toBe('Kim Lee')
    expect(cleanDisplayName('A\u200Bd\u200Cm\u200Di\u2060n\uFEFF')).toBe('Admin')
    expect(cleanDisplayName('x\u0007y\u001Bz\u2066\u2069\u200E\u200F\u061C')).toBe('xyz')
    expect(cleanDisplayName('a\tb\nc\u2028d')).toBe('a b c d')
    expect(cleanDisplayName('\u202E\u200B')).toBe('')
    expect(cleanDisplayName('Zoë Ødegård 李')).toBe('Zoë Ødegård 李')
  })
  it('takes names differing only in case, width or hidden characters for one', () => {
    expect(sameName('Support Bot', 'support\u200B bot')).toBe(true)
    expect(sameName('ＳＵＰＰＯＲＴ', 'support')).toBe(true)
    expect(sameName('Kim', 'Kim Lee')).toBe(false)
  })
})
