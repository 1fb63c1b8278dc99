import { describe, expect, it } from 'vitest'
import { linearAgainstBaseline, ofLength } from '../../test/helpers/linear-time.js'
import {
  atxOf,
  codeSpans,
  fenceOf,
  firstH1Of,
  headingOf,
  htmlTokens,
  linkLabels,
  markdownLinkLabels,
  sentencesOf,
  sourceHeadingOf,
  tomlTitleOf,
  withoutBlanksBeforeNewline,
  withoutJsxTags,
  withoutMdxComments,
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

describe('markdown front matter and MDX lines (issue 50: the parse worker)', () => {
  it('tomlTitleOf gives what /^title\\s*=\\s*["\']?(.*?)["\']?\\s*$/m captured', () => {
    const ref = (s: string) => /^title\s*=\s*["']?(.*?)["']?\s*$/m.exec(s)?.[1] ?? null
    same(60_000, ['title', '=', 'a', 't', '"', "'", ...WS, '\u2029', '\ufeff'], 12, tomlTitleOf, ref)
    expect(tomlTitleOf('draft = true\ntitle = "Getting started"  \nweight = 3')).toBe('Getting started')
    expect(tomlTitleOf("title='It''s'")).toBe("It''s")
    expect(tomlTitleOf('subtitle = "x"')).toBeNull()
  })
  it('withoutJsxTags and withoutMdxComments give what their patterns gave', () => {
    same(60_000, ['<', '/', '>', 'A', 'Z', 'a', '.', '_', '1', '-', ...WS], 14, withoutJsxTags, (s) => s.replace(/<\/?[A-Z][\w.]*(?:\s[^>]*)?\/?>/g, ''))
    same(60_000, ['{/*', '*/}', '{', '/', '*', '}', 'a', ...WS, '\u2029'], 12, withoutMdxComments, (s) => s.replace(/\{\/\*.*?\*\/\}/g, ''))
    expect(withoutJsxTags('See <Card title="Setup" href="/x" /> and <Tabs.Item>two</Tabs.Item> a<b>c</b>')).toBe('See  and two a<b>c</b>')
    expect(withoutMdxComments('a {/* hidden */} b {/* open\nc */}')).toBe('a  b {/* open\nc */}')
  })
  it('reads the shapes that made them quadratic in linear time', () => {
    // the front matter is cut at 65,536 characters before the title is looked for; a line of MDX may be the whole file
    const fm = 65_536
    const line = 200_000
    const ordinaryToml = ofLength('weight = 10\ndraft = false\ntags = ["setup", "install"]\n', fm)
    const ordinaryMdx = ofLength('Some text with <Note>a note</Note>, a {/* comment */} and more words. ', line)
    linearAgainstBaseline(tomlTitleOf, `title=t${'\t'.repeat(fm - 8)}t`, ordinaryToml)
    linearAgainstBaseline(tomlTitleOf, ofLength('title\t\n', fm), ordinaryToml)
    linearAgainstBaseline(withoutJsxTags, ofLength('<A\t', line), ordinaryMdx)
    linearAgainstBaseline(withoutJsxTags, `<A${'.'.repeat(line - 3)}\t`, ordinaryMdx)
    linearAgainstBaseline(withoutMdxComments, ofLength('/}{/*\u0000', line), ordinaryMdx)
    linearAgainstBaseline(withoutMdxComments, `${ofLength('{/*\r', line - 3)}*/}`, ordinaryMdx)
  })
})

describe('the Word reader HTML tokens (issue 50: the parse worker)', () => {
  const ref = (s: string) =>
    [...s.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>|([^<]+)|(<)/g)].map((m) =>
      m[2] !== undefined ? { tag: m[2], close: m[1] === '/', attrs: m[3]! } : { text: m[4] ?? m[5]! },
    )
  it('htmlTokens gives the tokens of the pattern it replaced', () => {
    same(60_000, ['<', '/', '>', 'a', 'B', '1', ' ', '"', '=', '&'], 14, htmlTokens, ref)
    expect(htmlTokens('<p class="x">a &amp; b</p><br/>< 3')).toEqual([
      { tag: 'p', close: false, attrs: ' class="x"' },
      { text: 'a &amp; b' },
      { tag: 'p', close: true, attrs: '' },
      { tag: 'br', close: false, attrs: '/' },
      { text: '<' },
      { text: ' 3' },
    ])
  })
  it('reads the shapes that made it quadratic in linear time', () => {
    // mammoth's HTML of an upload (20 MB at most): linear, so a part of it shows the rate
    const n = 400_000
    const ordinary = ofLength('<tr><td>1</td><td>a &amp; b</td><td><a href="https://x.test/">link</a></td></tr>', n)
    linearAgainstBaseline(htmlTokens, `<A${'0'.repeat(n - 3)}/`, ordinary)
    linearAgainstBaseline(htmlTokens, ofLength('<A0', n), ordinary)
  })
})

describe('headings, links and sentences of chunks and documents (issue 50: the unknown verdicts)', () => {
  it('sourceHeadingOf and firstH1Of give what their patterns captured', () => {
    same(60_000, ['#', ' ', 'a', ...WS, '\u2029'], 12, sourceHeadingOf, (s) => /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(s)?.[1] ?? null)
    same(60_000, ['#', ' ', 'a', ...WS, '\u2029'], 12, firstH1Of, (s) => /^ {0,3}# +(.+?)\s*#*\s*$/m.exec(s)?.[1] ?? null)
    expect(sourceHeadingOf('  ## Billing and refunds ##  ')).toBe('Billing and refunds')
    expect(firstH1Of('intro\n\n# Real Title #\n\n# Second')).toBe('Real Title')
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
    // a line of a chunk (CHUNK_TARGET_TOKENS at most 4,000: 16,000 characters), a document's text in the parse worker
    const chunk = 16_000
    const doc = 400_000
    const prose = ofLength('Refunds take [five days](https://x.test/refunds "Refunds"). See the guide! Or ask us? ', chunk)
    const heading = `## ${ofLength('Billing, refunds and invoices ', chunk - 6)} ##`
    linearAgainstBaseline(sourceHeadingOf, `#\t${'\t'.repeat(chunk / 2 - 3)}\u0000${'\t'.repeat(chunk / 2 - 2)}\r\u0000`, heading)
    linearAgainstBaseline(sourceHeadingOf, `# ${ofLength('a\r', chunk - 4)} #`, heading)
    linearAgainstBaseline(markdownLinkLabels, ofLength('[(', chunk), prose)
    linearAgainstBaseline(markdownLinkLabels, `${ofLength('[a](b(', chunk - 1)})`, prose)
    linearAgainstBaseline(markdownLinkLabels, ofLength('[a](x "', chunk), prose)
    linearAgainstBaseline(sentencesOf, `\t${ofLength('\t\u0000', 5332)}${'!'.repeat(5332)}\u0000${'\t'.repeat(5334)}`, prose)
    linearAgainstBaseline(sentencesOf, ofLength('a!b', chunk), prose)
    const text = ofLength('Some text of a document, a line of it.\n## A heading\n', doc)
    linearAgainstBaseline(firstH1Of, `# #${' '.repeat(doc - 6)}\u0000\n#`, text)
    linearAgainstBaseline(firstH1Of, ofLength('# \n', doc), text)
  })
})
