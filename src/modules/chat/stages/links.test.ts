import { describe, expect, it } from 'vitest'
import { cleanAnswer, createStreamCleaner, isAllowedUrl, linkPolicy, normalizeUrl, safeEnd } from './links.js'

const policy = linkPolicy(
  [
    { url: 'https://docs.example.com/billing/', text: 'See https://status.example.com/incidents for outages.' },
    { url: null, text: 'no links here' },
  ],
  ['example.org'],
)

describe('links', () => {
  it('normalises URLs', () => {
    expect(normalizeUrl('HTTPS://Docs.Example.com/billing/#top')).toBe('docs.example.com/billing')
    expect(normalizeUrl('www.x.com/a')).toBe('www.x.com/a')
    expect(normalizeUrl('javascript:alert(1)')).toBeNull()
  })

  it('allows source URLs, URLs written in sources and allowed domains only', () => {
    expect(isAllowedUrl('https://docs.example.com/billing', policy)).toBe(true)
    expect(isAllowedUrl('https://status.example.com/incidents', policy)).toBe(true)
    expect(isAllowedUrl('https://help.example.org/x', policy)).toBe(true)
    expect(isAllowedUrl('https://docs.example.com/other', policy)).toBe(false)
    expect(isAllowedUrl('https://evil.test/phish', policy)).toBe(false)
    expect(isAllowedUrl('javascript:alert(1)', policy)).toBe(false)
  })

  it('removes invented links, keeps labels, allowed links and prose', () => {
    const r = cleanAnswer(
      'Pay [here](https://evil.test/pay) or visit https://evil.test/x. Docs: [billing](https://docs.example.com/billing) and <https://evil.test/y> ![img](https://evil.test/i.png) (https://evil.test/z) ok',
      policy,
    )
    expect(r.text).toBe('Pay here or visit. Docs: [billing](https://docs.example.com/billing) and ok')
    expect(r.removed).toEqual(['https://evil.test/pay', 'https://evil.test/i.png', 'https://evil.test/x', 'https://evil.test/y', 'https://evil.test/z'])
  })

  it('takes citation markers out and reports them', () => {
    const r = cleanAnswer('Refunds take 5 days [1]. Shipping is free [2, 3][4].', policy)
    expect(r.text).toBe('Refunds take 5 days. Shipping is free.')
    expect(r.cited).toEqual([1, 2, 3, 4])
    expect(cleanAnswer('an array [a] stays', policy).text).toBe('an array [a] stays')
    expect(cleanAnswer('call init() now', policy).text).toBe('call init() now')
  })

  it('holds back only what could still become a link or marker', () => {
    expect(safeEnd('Hello wor')).toBe(9)
    expect(safeEnd('Hello ')).toBe(5)
    expect(safeEnd('see [docs](https://x')).toBe(3)
    expect(safeEnd('see https://evil.te')).toBe(3)
    expect(safeEnd('go htt')).toBe(2)
    expect(safeEnd('done [1')).toBe(4)
    expect(safeEnd('a [b] c')).toBe(7)
  })

  it('streams the same text as cleaning the whole answer, however it is split', () => {
    const texts = [
      'Pay [here](https://evil.test/pay) or visit https://evil.test/x. Docs: [billing](https://docs.example.com/billing) [1].',
      'Refunds take 5 days [1]. See https://status.example.com/incidents and www.evil.test/a, then [2, 3]!',
      'Plain text with [brackets] and (parens) and http words like httpx and www stays.',
    ]
    let seed = 7
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    for (const text of texts) {
      const whole = cleanAnswer(text, policy)
      for (let trial = 0; trial < 200; trial++) {
        const c = createStreamCleaner(policy)
        let out = ''
        let i = 0
        while (i < text.length) {
          const n = 1 + Math.floor(rnd() * 8)
          out += c.push(text.slice(i, i + n))
          i += n
        }
        out += c.end()
        expect(out).toBe(whole.text)
        expect(c.result.text).toBe(whole.text)
        expect(c.result.cited).toEqual(whole.cited)
      }
    }
  })

  it('emits text as it arrives when nothing is pending', () => {
    const c = createStreamCleaner(policy)
    expect(c.push('Hello')).toBe('Hello')
    expect(c.push(' there')).toBe(' there')
    expect(c.push(' [')).toBe('')
    expect(c.push('1]')).toBe('')
    expect(c.push('.')).toBe('.')
  })
})
