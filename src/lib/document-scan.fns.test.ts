import { describe, expect, it } from 'vitest'
import { equivalence, linearAgainstBaseline, ofLength } from '../../test/helpers/linear-time.js'
import { firstH1Of, htmlTokens, tomlTitleOf, withoutJsxTags, withoutMdxComments } from './document-scan.fns.js'

/**
 * Each scan gives exactly what the pattern it replaced gives (the patterns are kept here as the reference), on many
 * thousands of random texts over the characters those patterns care about; then each is timed on the shapes that
 * made its pattern super-linear, against ordinary text of the same length (test/helpers/linear-time.ts).
 */
const { rand, text, same } = equivalence()
const WS = [' ', '\t', '\n', '\r', '\u2028', '\u00a0']

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

describe("a document's first # heading (issue 50: an unknown verdict that was cubic)", () => {
  it('firstH1Of gives what its pattern captured', () => {
    same(60_000, ['#', ' ', 'a', ...WS, '\u2029'], 12, firstH1Of, (s) => /^ {0,3}# +(.+?)\s*#*\s*$/m.exec(s)?.[1] ?? null)
    expect(firstH1Of('intro\n\n# Real Title #\n\n# Second')).toBe('Real Title')
  })
  it('reads a heading of spaces in linear time', () => {
    // a document's text in the parse worker: linear, so a part of an upload shows the rate
    const doc = 400_000
    const ordinary = ofLength('Some text of a document, a line of it.\n## A heading\n', doc)
    linearAgainstBaseline(firstH1Of, `# #${' '.repeat(doc - 6)}\u0000\n#`, ordinary)
    linearAgainstBaseline(firstH1Of, ofLength('# \n', doc), ordinary)
  })
})
