import { describe, expect, it } from 'vitest'
import { CUT, bestWindow, packPassages, plainText, weightedTerms } from './passages.fns.js'

describe('plainText', () => {
  it("keeps a link's text without its target, drops HTML tags and template markup", () => {
    expect(plainText('See [the guide](https://x.test/a_(b)?q=1 "t") or <a href="{{ site.baseurl }}/y/">this page</a>.')).toBe('See the guide or this page.')
    expect(plainText('![logo](/img/a.png) Hello\n\n\n\nWorld')).toBe('logo Hello\n\nWorld')
  })

  it('keeps code as written: an inline span and a fenced block keep their tags, links and template markup', () => {
    expect(plainText('Add `<script src="/embed.js" data-bot-id="ch_1"></script>` before the closing <b>body</b> tag.')).toBe(
      'Add `<script src="/embed.js" data-bot-id="ch_1"></script>` before the closing body tag.',
    )
    const fenced = 'Config:\n\n```html\n<div id="chat">{{ bot.id }}</div>\n[x](y)\n```\n\nThen <i>save</i>.'
    expect(plainText(fenced)).toBe('Config:\n\n```html\n<div id="chat">{{ bot.id }}</div>\n[x](y)\n```\n\nThen save.')
    // a lone backtick opens nothing: the rest is prose
    expect(plainText('It costs 5` <em>only</em>.\n\nSee `<br>`.')).toBe('It costs 5` only.\n\nSee `<br>`.')
  })
})

describe('packPassages', () => {
  const hit = (title: string, words: number) => ({ title, text: Array.from({ length: words }, (_, i) => `word${i}`).join(' ') })

  it('gives whole hits while they fit the budget, then the next as a window, and stops', () => {
    const hits = [hit('a', 100), hit('b', 100), hit('c', 100), hit('d', 100)]
    // about 175 tokens each (7 characters a word)
    const packed = packPassages(hits, [], { budgetTokens: 450, maxPassages: 10, windowTokens: 60, corpusChunks: 100 })
    expect(packed.map((p) => p.title)).toEqual(['a', 'b', 'c'])
    expect(packed[2]!.text.length).toBeLessThanOrEqual(60 * 4 + 4)
    expect(packed.reduce((s, p) => s + p.text.length, 0) / 4).toBeLessThan(450)
  })

  it('never gives more than maxPassages', () => {
    const hits = Array.from({ length: 20 }, (_, i) => hit(`h${i}`, 5))
    expect(packPassages(hits, [], { budgetTokens: 10_000, maxPassages: 8, windowTokens: 60, corpusChunks: 100 })).toHaveLength(8)
  })
})

describe('bestWindow', () => {
  it("cuts to the part of the text holding the question's terms, marking the cuts", () => {
    const text = [
      ...Array.from({ length: 30 }, (_, i) => `Line ${i} about other things entirely.`),
      'To change the brightness, open Display.',
      'Then drag the slider.',
    ]
      .concat(Array.from({ length: 10 }, (_, i) => `Tail ${i} says nothing much.`))
      .join('\n')
    const w = bestWindow(text, weightedTerms([{ term: 'bright', df: 2 }], 100), 30)
    expect(w.startsWith(CUT)).toBe(true)
    expect(w).toContain('To change the brightness, open Display.')
    expect(w).toContain('Then drag the slider.')
  })
})
