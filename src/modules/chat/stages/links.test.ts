import { describe, expect, it } from 'vitest'
import { linearAgainstBaseline, ofLength } from '../../../../test/helpers/linear-time.js'
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

describe('the scans give what the patterns they replaced gave (issue 50)', () => {
  let seed = 50
  const pick = (xs: string[]) => xs[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % xs.length]!
  const texts = (alphabet: string[], n: number, max: number) =>
    Array.from({ length: n }, () => Array.from({ length: seed % max }, () => pick(alphabet)).join(''))
  it('safeEnd', async () => {
    const { openLinkAt, openUrlAt, linkBeforeUrlAt } = await import('./links.js')
    for (const s of texts(['[', ']', '(', ')', '!', 'a', '\n', ' ', '<'], 40_000, 12)) {
      expect(openLinkAt(s), JSON.stringify(s)).toBe(/!?\[[^\]\n]{0,500}(?:\](?:\([^)\n]*)?)?$/.exec(s)?.index ?? -1)
      expect(linkBeforeUrlAt(s), JSON.stringify(s)).toBe(/!?\[[^\]\n]{0,500}\](?:\(\s*<?)?$/.exec(s)?.index ?? -1)
    }
    const url = /(?:\(?<?\b(?:https?:\/\/|www\.)[^\s<>"'`]*|(?:^|[\s(<])(?:h(?:t(?:t(?:p(?:s?(?::(?:\/\/?)?)?)?)?)?)?|w(?:w(?:w)?)?))$/i
    for (const s of texts(['http://', 'https:', 'H', 't', 'p', 's', ':', '/', 'www.', 'w', '(', '<', ' ', 'a', '_', '"'], 40_000, 8)) {
      expect(openUrlAt(s), JSON.stringify(s)).toBe(url.exec(s)?.index ?? -1)
    }
  })
  it('cleanAnswer', async () => {
    const { cleanAnswer } = await import('./links.js')
    const policy = { sourceUrls: new Set(['a.test/x']), allowedDomains: [] }
    // the patterns as they were, the callbacks as they are
    const before = (text: string) => {
      const removed: string[] = []
      const cited: number[] = []
      const links: string[] = []
      let out = text.replace(
        /([ \t]*)(!?)\[([^\]\n]{0,500})\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+"[^"\n]*")?\s*\)/g,
        (whole, space, bang, label, url) => {
          if (url === 'https://a.test/x' || url === '/rel') {
            links.push(whole.slice(space.length))
            return `${space}\u0000${links.length - 1}\u0000`
          }
          removed.push(url)
          return bang ? '' : space + label
        },
      )
      out = out.replace(/[ \t]*\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g, (_m, nums: string) => {
        for (const n of nums.split(',')) cited.push(Number(n.trim()))
        return ''
      })
      out = out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => links[Number(i)]!)
      return { text: out, removed, cited }
    }
    const alphabet = ['[', ']', '(', ')', '!', 'a', ' ', '\t', '\n', '"', '<', '>', '1', ',', 'https://a.test/x', '/rel']
    for (const s of texts(alphabet, 30_000, 14)) {
      const got = cleanAnswer(s, policy)
      expect(got, JSON.stringify(s)).toEqual(before(s))
    }
  })
  it('reads a long run once', async () => {
    const { cleanAnswer, safeEnd } = await import('./links.js')
    const policy = { sourceUrls: new Set<string>(), allowedDomains: [] }
    const n = 100_000
    for (const s of [
      `${'\t'.repeat(n)}\u0000[0]`,
      `${'[\t'.repeat(n / 2)}`,
      `[](${' '.repeat(n)}x`,
      `S${':WWW.a'.repeat(n / 6)}\tH`,
      `${'\t'.repeat(n)}\nWWW.0`,
    ]) {
      const t0 = performance.now()
      cleanAnswer(s, policy)
      safeEnd(s)
      expect(performance.now() - t0, JSON.stringify(s.slice(0, 20))).toBeLessThan(1500)
    }
  })
})

describe('markdown links by a scan (issue 50: an unknown verdict that was super-linear)', () => {
  const MD_LINK = /(!?)\[([^\]\n]{0,500})\]\((?:\s*(?!\s)<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+"[^"\n]*")?\s*\)|\s+"[^"\n]*"\s*\))/g
  it('mdLinks finds what MD_LINK found', async () => {
    const { mdLinks } = await import('./links.js')
    let seed = 97
    const pick = (xs: string[]) => xs[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % xs.length]!
    const alphabet = ['[', ']', '(', ')', '!', 'a', ' ', '\t', '\n', '"', '<', '>', '[a](', 'x)', 'a'.repeat(250)]
    for (let i = 0; i < 60_000; i++) {
      const s = Array.from({ length: seed % 14 }, () => pick(alphabet)).join('')
      const want = Array.from(s.matchAll(MD_LINK), (m) => ({ index: m.index, parts: [...m] }))
      expect(mdLinks(s), JSON.stringify(s)).toEqual(want)
    }
  })
  it('reads an answer of brackets in linear time', async () => {
    const { mdLinks } = await import('./links.js')
    // an answer of CHAT_MAX_ANSWER_TOKENS (8,000 at most): about 32,000 characters
    const n = 32_000
    const ordinary = ofLength('See [the billing page](https://x.test/billing "Billing") and [1]. ', n)
    linearAgainstBaseline(mdLinks, ofLength('[\t', n), ordinary)
    linearAgainstBaseline(mdLinks, `${ofLength('[', n - 3)}](x`, ordinary)
    linearAgainstBaseline(mdLinks, ofLength(`[${'a'.repeat(499)}`, n), ordinary)
  })
})
