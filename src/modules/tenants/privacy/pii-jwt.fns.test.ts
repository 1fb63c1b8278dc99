import { describe, expect, it } from 'vitest'
import { linearAgainstBaseline, ofLength } from '../../../../test/helpers/linear-time.js'
import { jwtSpans } from './pii-jwt.fns.js'
import { redact } from './pii.fns.js'

describe('JWTs by a scan (issue 50: an unknown verdict that was quadratic)', () => {
  it('jwtSpans finds what the JWT pattern found', () => {
    let seed = 50
    const pick = (xs: string[]) => xs[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % xs.length]!
    const alphabet = ['eyJ', 'eyJ', '.', '.eyJ', '-', '_', 'a', '0', 'x', ' ', 'é', 'abcdefgh']
    for (let i = 0; i < 60_000; i++) {
      const s = Array.from({ length: seed % 14 }, () => pick(alphabet)).join('')
      const want = Array.from(s.matchAll(/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g), (m) => [m.index, m.index + m[0].length])
      expect(jwtSpans(s), JSON.stringify(s)).toEqual(want)
    }
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'
    expect(redact(`token: ${jwt} ok`).text).not.toContain('eyJzdWIi')
  })
  it('reads a run of eyJ in linear time', () => {
    // the longest text redacted on the event loop: an attachment's text (maxTextChars, 50,000)
    const n = 50_000
    const ordinary = ofLength('Hello, my order 12345 did not arrive; the token eyJhbGciOiJI.eyJzdWIiOiIx.sig was sent. ', n)
    linearAgainstBaseline(jwtSpans, ofLength('eyJ0000000-', n), ordinary)
    linearAgainstBaseline(jwtSpans, ofLength('eyJ00000000.eyJ0000000-', n), ordinary)
  })
})
