import { describe, expect, it } from 'vitest'
import {
  atxOf,
  codeSpans,
  fenceOf,
  headingOf,
  linkLabels,
  withoutBlanksBeforeNewline,
  withoutTags,
  withoutTemplateTags,
  withoutTrailingAttributes,
} from './markup-scan.fns.js'

/**
 * Each scan gives exactly what the pattern it replaced gives (the patterns are kept here as the reference): random
 * texts over the characters those patterns care about, many thousands of them, compared one by one. Then each scan
 * on the input that made its pattern quadratic, timed in CPU.
 */
let seed = 50
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed % n
}
const text = (alphabet: string[], max: number) => Array.from({ length: rand(max) }, () => alphabet[rand(alphabet.length)]).join('')
const same = <T>(n: number, alphabet: string[], max: number, scan: (s: string) => T, pattern: (s: string) => T) => {
  for (let i = 0; i < n; i++) {
    const s = text(alphabet, max)
    expect(scan(s), JSON.stringify(s)).toEqual(pattern(s))
  }
}
const cpuMs = (f: () => void) => {
  const t0 = process.cpuUsage()
  f()
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / 1000
}
const WS = [' ', '\t', '\n', '\r', '\u2028', '\u00a0']

describe('markup scans give what their patterns gave', () => {
  it('links and images', () => {
    const a = ['!', '[', ']', '(', ')', 'a', ' ', '\n']
    same(
      20_000,
      a,
      16,
      (s) => linkLabels(s, true),
      (s) => s.replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1'),
    )
    same(
      20_000,
      a,
      16,
      (s) => linkLabels(s, false),
      (s) => s.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'),
    )
  })
  it('tags, attribute blocks, template markup, blanks before a line break', () => {
    same(20_000, ['<', '>', 'a', ' '], 12, withoutTags, (s) => s.replace(/<[^>]+>/g, ''))
    same(30_000, ['{', '}', ':', '#', '.', 'a', ...WS], 12, withoutTrailingAttributes, (s) => s.replace(/\s*\{:?\s*[#.][^{}]*\}\s*$/, ''))
    same(30_000, ['{', '}', '%', 'a'], 14, withoutTemplateTags, (s) => s.replace(/\{\{[^}]*\}\}|\{%[^%]*%\}/g, ''))
    same(20_000, [' ', '\t', '\n', 'a', '\r'], 14, withoutBlanksBeforeNewline, (s) => s.replace(/[ \t]+\n/g, '\n'))
  })
  it('fences and headings', () => {
    const ref = (m: RegExpExecArray | null) => (m ? ([m[1]!, m[2]] as [string, string | undefined]) : null)
    same(30_000, [' ', '`', '~', 'a', '\u2028'], 9, fenceOf, (s) => ref(/^ {0,3}(`{3,}|~{3,})(.*)$/.exec(s)))
    same(60_000, [' ', '\t', '#', 'a', '\r'], 12, atxOf, (s) => ref(/^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(s)))
    same(60_000, ['#', 'a', ...WS], 11, headingOf, (s) => ref(/^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(s)) as [string, string] | null)
  })
  it('code spans', () => {
    const ref = (s: string) => [...s.matchAll(/(`+)(?!`)(?:(?!\n[ \t]*\n)[\s\S])*?(?<!`)\1(?!`)/g)].map((m) => [m.index, m.index + m[0].length])
    same(60_000, ['`', 'a', '\n', ' '], 16, codeSpans, ref)
  })
  it('reads the inputs that made the patterns quadratic in linear time', () => {
    const n = 200_000
    const cases: [string, () => unknown][] = [
      ['![]( repeated', () => linkLabels('![]('.repeat(n / 4), true)],
      ['[ repeated', () => linkLabels('['.repeat(n), false)],
      ['< repeated', () => withoutTags('<\u0000'.repeat(n / 2))],
      ['blanks before no {', () => withoutTrailingAttributes(`${'\t'.repeat(n)}{{#}`)],
      ['{{ repeated', () => withoutTemplateTags(`${'{{'.repeat(n / 2)}{%%}`)],
      ['blanks before no newline', () => withoutBlanksBeforeNewline(`${'\t'.repeat(n)}\u0000\t\n`)],
      ['a long fence line', () => fenceOf(`~~~${'~'.repeat(n)}\u2028`)],
      ['a heading of blanks', () => atxOf(`#\t${' '.repeat(n)}\u2028`)],
      ['a heading of spaces', () => headingOf(`#\n${'\t'.repeat(n)}\u0000`)],
      ['backticks', () => codeSpans(`\`\t${'`'.repeat(n)}\n`)],
    ]
    for (const [name, f] of cases) expect(cpuMs(f), name).toBeLessThan(250)
  })
})

describe('markdown comments', () => {
  it('withoutComments gives what /<!--[\\s\\S]*?-->/g gave, and reads a line of openers once', async () => {
    const { withoutComments } = await import('../modules/documents/parsers/markdown.js')
    same(30_000, ['<', '!', '-', '>', 'a', '\n'], 16, withoutComments, (s) => s.replace(/<!--[\s\S]*?-->/g, ''))
    expect(cpuMs(() => withoutComments('<!--'.repeat(50_000)))).toBeLessThan(250)
  })
})
