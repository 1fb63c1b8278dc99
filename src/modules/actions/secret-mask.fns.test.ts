import { describe, expect, it } from 'vitest'
import { maskSecret } from './actions.fns.js'
import { createStreamMasker, maskAll } from './secret-mask.fns.js'

const SECRET = 'sk/live+Secr3t==9876'
const M = maskSecret(SECRET)

describe('secret masking', () => {
  it('masks the raw, percent-encoded (either case, mixed, form), JSON-escaped and twice-escaped forms', () => {
    const forms = [
      SECRET,
      encodeURIComponent(SECRET),
      encodeURIComponent(SECRET).toLowerCase().replace('secr3t', 'Secr3t'),
      new URLSearchParams({ k: 'a b' + SECRET }).toString().slice(2),
      'sk%2Flive+Secr3t%3D=9876',
      JSON.stringify(SECRET).slice(1, -1).replace(/\//g, '\\/'),
      JSON.stringify(JSON.stringify({ k: SECRET }).replace(/\//g, '\\/')),
      `"\\u0073k/live+Secr3t==9876"`,
      JSON.stringify(encodeURIComponent(SECRET)).replace(/\//g, '\\/'),
    ]
    for (const f of forms) {
      const out = maskAll(`before ${f} after`, { k: SECRET })
      expect(out, f).not.toMatch(/secr3t/i)
      expect(out, f).toContain(M)
      expect(out, f).toMatch(/^before .*after$/)
    }
  })

  it('masks a non-ASCII secret percent-encoded as UTF-8 and escaped as \\uXXXX pairs', () => {
    const s = 'pässwörd-😀-key'
    const units = s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`)
    expect(units).toContain('\\uD83D\\uDE00')
    for (const f of [
      encodeURIComponent(s),
      encodeURIComponent(s).toLowerCase().replace('-key', '-key'),
      JSON.stringify(s).slice(1, -1),
      units,
      units.toLowerCase(),
    ]) {
      expect(maskAll(`x ${f} y`, [s]), f).toBe(`x ${maskSecret(s)} y`)
    }
  })

  it('leaves other text alone and masks the longest secret first', () => {
    expect(maskAll('nothing here %zz \\q', { k: SECRET })).toBe('nothing here %zz \\q')
    expect(maskAll('abcdefgh-more', ['abcdefgh', 'abcdefgh-more'])).toBe(maskSecret('abcdefgh-more'))
  })

  it('masks prefixes of 8 characters or more only when asked (answers)', () => {
    const text = 'the key starts sk/live+Sec and that is all; sk/live is short'
    expect(maskAll(text, [SECRET])).toBe(text)
    const out = maskAll(text, [SECRET], { minPrefix: 8 })
    expect(out).toBe(`the key starts ${M} and that is all; sk/live is short`)
  })

  it('is linear: a secret of backslashes against an answer of backslashes (issue 50, finding 3)', () => {
    // the regular expression this replaced took 17 s on 27 against 54, times 1.7 for each backslash more
    const small = performance.now()
    // 54 backslashes are the 27 JSON-escaped: one mask
    expect(maskAll('\\'.repeat(54), ['\\'.repeat(27)])).toBe(maskSecret('\\'.repeat(27)))
    expect(maskAll(`${'\\'.repeat(81)}x`, ['\\'.repeat(40)], { minPrefix: 8 })).toContain('••••')
    expect(performance.now() - small).toBeLessThan(50)
    // the largest secret (4,096 characters) against the largest response (256 KB): 15 to 60 ms measured, bounded
    // generously for a loaded machine (the old pattern would not end in a lifetime)
    for (const [secret, text] of [
      ['\\'.repeat(4096), '\\'.repeat(256 * 1024)],
      [`${'\\'.repeat(4095)}x`, '\\'.repeat(256 * 1024)],
      [`${'%'.repeat(2000)}a`, '%25'.repeat(80_000)],
    ] as const) {
      const start = performance.now()
      maskAll(text, [secret], { minPrefix: 8 })
      expect(performance.now() - start, `${secret.length} against ${text.length}`).toBeLessThan(5000)
    }
  })

  it('streams: the pieces add up to the masked whole, and no prefix of a secret is shown before it is decided', () => {
    const text = `Your key is ${SECRET} and again ${encodeURIComponent(SECRET)}; also "${JSON.stringify(JSON.stringify(SECRET))}", done sk/live+ end.`
    for (const size of [1, 3, 7, 50]) {
      const m = createStreamMasker([SECRET], { minPrefix: 8 })
      let shown = ''
      for (let i = 0; i < text.length; i += size) {
        shown += m.push(text.slice(i, i + size))
        expect(shown).not.toMatch(/sk\/live\+S|secr3t/i)
      }
      shown += m.end()
      expect(shown, String(size)).toBe(maskAll(text, [SECRET], { minPrefix: 8 }))
      expect(shown).not.toMatch(/secr3t/i)
    }
  })
})
