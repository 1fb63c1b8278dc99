import { describe, expect, it } from 'vitest'
import { equivalence, linearAgainstBaseline, ofLength } from '../../test/helpers/linear-time.js'
import {
  atxOf,
  codeSpans,
  fenceOf,
  headingOf,
  linkLabels,
  markdownLinkLabels,
  sentencesOf,
  sourceHeadingOf,
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
const { rand, text, same } = equivalence()
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

describe('headings, links and sentences of chunks (issue 50: the unknown verdicts)', () => {
  it('sourceHeadingOf gives what its pattern captured', () => {
    same(60_000, ['#', ' ', 'a', ...WS, '\u2029'], 12, sourceHeadingOf, (s) => /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(s)?.[1] ?? null)
    expect(sourceHeadingOf('  ## Billing and refunds ##  ')).toBe('Billing and refunds')
  })
  it('markdownLinkLabels and sentencesOf give what their patterns gave', () => {
    same(80_000, ['[', ']', '(', ')', '"', 'a', ' ', '\n', '\t'], 16, markdownLinkLabels, (s) =>
      s.replace(/\[([^\]]+)\]\((?:[^()\s]|\([^)]*\))*(?:\s+"[^"]*")?\)/g, '$1'),
    )
    same(60_000, ['.', '!', '?', 'a', ' ', '\t', '\n', '\u2028'], 14, sentencesOf, (s) => s.match(/[^.!?]+(?:[.!?]+(?=\s|$)|$)\s*/g))
    expect(markdownLinkLabels('See [the guide](https://x.test/a_(b) "Guide") and [b](c d)')).toBe('See the guide and [b](c d)')
    expect(sentencesOf('Version 1.2 is out! Update now.  Thanks')).toEqual(['2 is out! ', 'Update now.  ', 'Thanks'])
  })
  it('reads the shapes that made them super-linear in linear time', () => {
    // a line of a chunk (CHUNK_TARGET_TOKENS at most 4,000: 16,000 characters)
    const chunk = 16_000
    const prose = ofLength('Refunds take [five days](https://x.test/refunds "Refunds"). See the guide! Or ask us? ', chunk)
    const heading = `## ${ofLength('Billing, refunds and invoices ', chunk - 6)} ##`
    linearAgainstBaseline(sourceHeadingOf, `#\t${'\t'.repeat(chunk / 2 - 3)}\u0000${'\t'.repeat(chunk / 2 - 2)}\r\u0000`, heading)
    linearAgainstBaseline(sourceHeadingOf, `# ${ofLength('a\r', chunk - 4)} #`, heading)
    linearAgainstBaseline(markdownLinkLabels, ofLength('[(', chunk), prose)
    linearAgainstBaseline(markdownLinkLabels, `${ofLength('[a](b(', chunk - 1)})`, prose)
    linearAgainstBaseline(markdownLinkLabels, ofLength('[a](x "', chunk), prose)
    linearAgainstBaseline(sentencesOf, `\t${ofLength('\t\u0000', 5332)}${'!'.repeat(5332)}\u0000${'\t'.repeat(5334)}`, prose)
    linearAgainstBaseline(sentencesOf, ofLength('a!b', chunk), prose)
  })
})
