import { describe, expect, it } from 'vitest'
import { htmlToMarkdown } from './html.fns.js'
import { normalizeMarkdown, normalizeMdx, stripMdxByLines } from './markdown.js'
import { publicAddress, tomlFields } from './public-address.fns.js'
import { linearAgainstBaseline, ofLength } from '../../../../test/helpers/linear-time.js'
import { sniffUpload } from './sniff.fns.js'
import { isOpenApi, parseJsonText, parseYamlText, renderStructured, StructuredParseError } from './structured.fns.js'
import { decodeText } from './text.fns.js'

const bytes = (s: string | number[]) => (typeof s === 'string' ? new TextEncoder().encode(s) : new Uint8Array(s))

describe('sniffUpload', () => {
  it('accepts the nine extensions for matching content', () => {
    expect(sniffUpload('a.md', bytes('# hi'))).toEqual({ ok: true, kind: 'markdown' })
    expect(sniffUpload('a.mdx', bytes('# hi'))).toEqual({ ok: true, kind: 'mdx' })
    expect(sniffUpload('a.txt', bytes('hi'))).toEqual({ ok: true, kind: 'plaintext' })
    expect(sniffUpload('a.json', bytes('{}'))).toEqual({ ok: true, kind: 'json' })
    expect(sniffUpload('a.yml', bytes('a: 1'))).toEqual({ ok: true, kind: 'yaml' })
    expect(sniffUpload('a.YAML', bytes('a: 1'))).toEqual({ ok: true, kind: 'yaml' })
    expect(sniffUpload('a.pdf', bytes('%PDF-1.7\n'))).toEqual({ ok: true, kind: 'pdf' })
  })

  it('reads content as what it is: a .doc that is a docx, a .docx that is a Word 97 file', () => {
    const zip = bytes([0x50, 0x4b, 0x03, 0x04, ...new TextEncoder().encode('....word/document.xml....')])
    expect(sniffUpload('old.doc', zip)).toEqual({ ok: true, kind: 'docx' })
    const ole = bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0])
    expect(sniffUpload('new.docx', ole)).toEqual({ ok: true, kind: 'doc' })
  })

  it('refuses unknown extensions and foreign formats with 400', () => {
    expect(sniffUpload('x.exe', bytes('MZ'))).toMatchObject({ ok: false, status: 400 })
    expect(sniffUpload('noext', bytes('hello'))).toMatchObject({ ok: false, status: 400 })
    expect(sniffUpload('image.md', bytes([0x89, 0x50, 0x4e, 0x47, 1, 2]))).toMatchObject({ ok: false, status: 400, message: expect.stringContaining('PNG') })
    expect(sniffUpload('a.docx', bytes([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]))).toMatchObject({ ok: false, status: 422 })
    expect(sniffUpload('a.md', bytes([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]))).toMatchObject({ ok: false, status: 400 })
  })

  it('calls binary content in a text or PDF file a parse error (422)', () => {
    expect(sniffUpload('a.pdf', bytes([0, 1, 2, 3, 4, 5]))).toMatchObject({ ok: false, status: 422 })
    expect(sniffUpload('a.txt', bytes([65, 0, 66, 0, 1, 2]))).toMatchObject({ ok: false, status: 422 })
    expect(sniffUpload('a.txt', bytes(''))).toMatchObject({ ok: false, status: 422 })
  })

  it('does not take a markdown file that mentions %PDF- for a PDF', () => {
    expect(sniffUpload('notes.md', bytes('# About\n%PDF-1.4 is the header'))).toEqual({ ok: true, kind: 'markdown' })
  })
})

describe('decodeText', () => {
  it('honours BOMs, falls back to Windows-1252 and strips control characters', () => {
    expect(decodeText(bytes([0xef, 0xbb, 0xbf, 0x68, 0x69]))).toBe('hi')
    expect(decodeText(bytes([0xff, 0xfe, 0x68, 0, 0x69, 0]))).toBe('hi')
    expect(decodeText(bytes([0x63, 0x61, 0x66, 0xe9]))).toBe('café')
    expect(decodeText(bytes('a\r\nb\u0007c'))).toBe('a\nbc')
  })
})

describe('markdown', () => {
  it('drops front matter (keeping its title), HTML comments and tag-only lines; keeps code', () => {
    const r = normalizeMarkdown(
      '---\ntitle: "Setup"\ntags: [a]\n---\n<!-- hidden -->\n<div align="center">\n\n# Install\n\n</div>\n\n```html\n<div>keep</div>\n<!-- keep -->\n```\n',
    )
    expect(r.title).toBe('Setup')
    expect(r.text).toBe('# Install\n\n```html\n<div>keep</div>\n<!-- keep -->\n```')
  })

  it('takes the first H1 as title when there is no front matter', () => {
    expect(normalizeMarkdown('intro\n\n# Real Title\n\ntext').title).toBe('Real Title')
  })

  it('MDX: drops imports, exports, JSX tags and expressions, keeps the markdown inside components', () => {
    const mdx = [
      '---',
      'title: Tabs page',
      '---',
      "import { Tabs, Tab } from '@/components'",
      'export const meta = { draft: false }',
      '',
      '# Configure',
      '',
      '{/* editor note */}',
      '',
      '<Tabs>',
      '  <Tab title="Linux">',
      '    ## On Linux',
      '',
      '    Run the **installer** script.',
      '  </Tab>',
      '</Tabs>',
      '',
      'Text with <Badge>inline</Badge> JSX and {props.version}.',
      '',
      '```jsx',
      '<Keep />',
      '```',
    ].join('\n')
    const r = normalizeMdx(mdx)
    expect(r.title).toBe('Tabs page')
    expect(r.text).not.toMatch(/import|export const|<Tab|<\/Tabs>|editor note|props\.version/)
    expect(r.text).toContain('# Configure')
    expect(r.text).toMatch(/^## On Linux$/m)
    expect(r.text).toContain('Run the **installer** script.')
    expect(r.text).toContain('Text with inline JSX and .')
    expect(r.text).toContain('```jsx\n<Keep />\n```')
  })

  it('MDX the parser rejects is stripped line by line instead', () => {
    const broken = 'import X from \'x\'\n\n# Title\n\n<Callout type="warn">\nUnclosed component\n\nMore text'
    const r = normalizeMdx(broken)
    expect(r.text).toContain('# Title')
    expect(r.text).toContain('Unclosed component')
    expect(r.text).not.toContain('import')
    expect(stripMdxByLines('<Foo\n  a="1"\n/>\ntext')).toBe('text')
  })
})

describe('structured (JSON / YAML / OpenAPI)', () => {
  it('renders an OpenAPI 3 document one operation per section', () => {
    const spec = parseYamlText(
      'openapi: 3.0.0\ninfo: {title: Pets, version: "1"}\npaths:\n  /pets:\n    get:\n      summary: List pets\n      parameters:\n        - {name: limit, in: query, schema: {type: integer}}\n      responses:\n        "200": {description: OK}\n    post:\n      summary: Add pet\n      responses:\n        "201": {description: Created}\n',
    )
    expect(isOpenApi(spec[0]!)).toBe(true)
    const r = renderStructured(spec, 'pets')
    expect(r.isOpenApi).toBe(true)
    expect(r.title).toBe('Pets')
    expect(r.text).toMatch(/^## GET \/pets$/m)
    expect(r.text).toMatch(/^## POST \/pets$/m)
    expect(r.text).toContain('**Summary:** List pets')
    expect(r.text).toContain('- `limit` (query, integer, optional)')
    expect(r.text).toContain('- `201`: Created')
  })

  it('renders other JSON readably: nested keys become headings and lists, not one line', () => {
    const r = renderStructured(
      [parseJsonText('{"name":"Acme","plans":{"basic":{"price":10,"seats":[1,2]},"pro":{"price":30}},"faq":[{"q":"Refunds?","a":"Within 14 days"}]}')],
      'data',
    )
    expect(r.isOpenApi).toBe(false)
    expect(r.title).toBe('Acme')
    expect(r.text.split('\n').length).toBeGreaterThan(5)
    expect(r.text).toContain('- **name**: Acme')
    expect(r.text).toMatch(/^## plans$/m)
    expect(r.text).toMatch(/^### plans › basic$/m)
    expect(r.text).toContain('- **price**: 10')
    expect(r.text).toContain('Within 14 days')
  })

  it('refuses invalid JSON and YAML, and alias bombs', () => {
    expect(() => parseJsonText('{"a":')).toThrow(StructuredParseError)
    expect(() => parseYamlText('a: [1, 2\nb: }')).toThrow(StructuredParseError)
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'f: [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    ].join('\n')
    expect(() => parseYamlText(bomb)).toThrow(StructuredParseError)
  })
})

describe('htmlToMarkdown (mammoth output)', () => {
  it('renders headings, nested lists, tables with short rows, links and footnotes', () => {
    const html =
      '<h1>Title</h1><p>Intro with <strong>bold</strong> and <a href="https://x.test/a">a link</a><sup><a href="#footnote-1" id="footnote-ref-1">[1]</a></sup>.</p>' +
      '<ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul>' +
      '<table><tr><td><p>a</p></td><td><p>b</p></td></tr><tr><td><p>c</p></td></tr></table>' +
      '<ol><li id="footnote-1"><p>The note. <a href="#footnote-ref-1">↑</a></p></li></ol>'
    const md = htmlToMarkdown(html)
    expect(md).toContain('# Title')
    expect(md).toContain('Intro with bold and a link (https://x.test/a)[1].')
    expect(md).toContain('- one\n  - nested\n- two')
    expect(md).toContain('| a | b |\n| --- | --- |\n| c |  |')
    expect(md).toContain('1. The note.')
    expect(md).not.toContain('↑')
  })
})

describe('TOML front matter fields in linear time (issue 50: an unknown verdict that was quadratic)', () => {
  const old = (text: string) => {
    const out: Record<string, unknown> = {}
    for (const m of text.matchAll(/^\s*(url|canonical|permalink)\s*=\s*["']([^"'\n]*)["']\s*$/gm)) out[m[1]!] ??= m[2]
    return out
  }
  it('tomlFields gives what the pattern gave', () => {
    let seed = 50
    const pick = (xs: string[]) => xs[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % xs.length]!
    const alphabet = ['url', 'canonical', '=', '"', "'", 'x', ' ', '\t', '\n', '\r', '\u2028', '\u00a0']
    for (let i = 0; i < 60_000; i++) {
      const s = Array.from({ length: seed % 14 }, () => pick(alphabet)).join('')
      expect(tomlFields(s), JSON.stringify(s)).toEqual(old(s))
    }
    expect(publicAddress('+++\ntitle = "x"\n\n  canonical = "https://docs.example.com/a"\n+++\nbody')).toBe('https://docs.example.com/a')
  })
  it('reads front matter of blank lines in linear time', () => {
    // front matter is looked for in the first 65,536 characters
    const n = 65_536
    const ordinary = ofLength('weight = 10\ndraft = false\ntags = ["setup", "install"]\n', n)
    linearAgainstBaseline(tomlFields, `"${ofLength('\r\t', n - 10)}\r"\nurl=""`, ordinary)
    linearAgainstBaseline(tomlFields, ofLength('\n \t', n), ordinary)
  })
})
