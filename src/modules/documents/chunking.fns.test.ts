import { describe, expect, it } from 'vitest'
import { chunkDocument, chunkMarkdown, estimateTokens, plainHeading, scanBlocks } from './chunking.fns.js'

const para = (words: number, seed = 'alpha') =>
  Array.from({ length: Math.ceil(words / 10) }, (_, i) => `Sentence ${i} about ${seed} explains how the product works in practice.`).join(' ')

describe('scanBlocks', () => {
  it('recognises headings, code, tables, lists and paragraphs', () => {
    const md = [
      '# Title',
      '',
      'Intro paragraph',
      'continues here.',
      '',
      'Setext Heading',
      '--------------',
      '',
      '```bash',
      '# not a heading',
      'npm install',
      '```',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
      '',
      '- one',
      '- two',
      '',
      '  continued item',
      '- three',
      '',
      '> quoted',
    ].join('\n')
    const blocks = scanBlocks(md)
    expect(blocks.map((b) => b.type)).toEqual(['heading', 'paragraph', 'heading', 'code', 'table', 'list', 'quote'])
    expect(blocks[2]).toMatchObject({ level: 2, title: 'Setext Heading' })
    expect(blocks[3]!.text).toContain('# not a heading')
    expect(blocks[5]!.text).toContain('continued item')
  })

  it("drops a heading's attribute block (kramdown, Pandoc, MkDocs anchors), not braces in its words", () => {
    expect(plainHeading('Is it available outside the U.S.? {#pir-outside-us}')).toBe('Is it available outside the U.S.?')
    expect(plainHeading('Notes {: .warning}')).toBe('Notes')
    expect(plainHeading('Install {#install .tabbed data-x=1}')).toBe('Install')
    expect(plainHeading('The {id} placeholder')).toBe('The {id} placeholder')
    expect(plainHeading('Map {key}')).toBe('Map {key}')
  })

  it('closes an unterminated code fence', () => {
    const blocks = scanBlocks('```js\nconst a = 1')
    expect(blocks[0]!.text.endsWith('```')).toBe(true)
  })
})

describe('chunkMarkdown', () => {
  it('keeps the heading path and section title on every chunk', () => {
    const md = `# Guide\n\n## Install\n\n### Linux\n\n${para(600, 'linux')}\n\n### Windows\n\n${para(200, 'windows')}`
    const chunks = chunkMarkdown(md)
    expect(chunks.length).toBeGreaterThan(2)
    const linux = chunks.filter((c) => c.content.includes('linux'))
    expect(linux.length).toBeGreaterThan(1)
    for (const c of linux) {
      expect(c.headingPath).toBe('Guide > Install > Linux')
      expect(c.sectionTitle).toBe('Linux')
    }
    const win = chunks.find((c) => c.content.includes('windows'))!
    expect(win.headingPath).toBe('Guide > Install > Windows')
    expect(win.content.startsWith('### Windows')).toBe(true)
    expect(chunks.map((c) => c.ordinal)).toEqual(chunks.map((_, i) => i))
  })

  it('sizes chunks around the target and never far above the maximum', () => {
    const md = Array.from({ length: 30 }, (_, i) => `## S${i}\n\n${para(250, `topic${i}`)}`).join('\n\n')
    const chunks = chunkMarkdown(md, { targetTokens: 300, maxTokens: 450, overlapTokens: 30 })
    for (const c of chunks) {
      expect(c.tokenCount).toBeLessThanOrEqual(450 + 30 + 20)
      expect(c.tokenCount).toBeGreaterThan(20)
    }
  })

  it('merges tiny sections instead of emitting tiny chunks', () => {
    const md = Array.from({ length: 10 }, (_, i) => `## FAQ ${i}\n\nShort answer ${i}.`).join('\n\n')
    const chunks = chunkMarkdown(md)
    expect(chunks.length).toBe(1)
    expect(chunks[0]!.content).toContain('## FAQ 9')
    expect(chunks[0]!.headingPath).toBe('FAQ 0')
  })

  it('keeps a code block and a table whole when they fit', () => {
    const code = '```python\n' + Array.from({ length: 40 }, (_, i) => `print(${i})  # line ${i}`).join('\n') + '\n```'
    const table = '| k | v |\n|---|---|\n' + Array.from({ length: 30 }, (_, i) => `| key${i} | value ${i} |`).join('\n')
    const md = `## Code\n\n${para(300)}\n\n${code}\n\n## Table\n\n${para(300)}\n\n${table}`
    const chunks = chunkMarkdown(md)
    expect(chunks.some((c) => c.content.includes(code))).toBe(true)
    expect(chunks.some((c) => c.content.includes(table))).toBe(true)
  })

  it('splits an oversized table repeating its header, and code keeping its fence', () => {
    const table = '| key | value |\n|---|---|\n' + Array.from({ length: 400 }, (_, i) => `| key${i} | value number ${i} |`).join('\n')
    const code = '```js\n' + Array.from({ length: 500 }, (_, i) => `const v${i} = compute(${i});`).join('\n') + '\n```'
    const chunks = chunkMarkdown(`# T\n\n${table}\n\n# C\n\n${code}`)
    const tableChunks = chunks.filter((c) => c.content.includes('| key'))
    expect(tableChunks.length).toBeGreaterThan(1)
    for (const c of tableChunks) expect(c.content).toMatch(/\| key \| value \|\n\|---\|---\|/)
    const codeChunks = chunks.filter((c) => c.content.includes('const v'))
    expect(codeChunks.length).toBeGreaterThan(1)
    for (const c of codeChunks) {
      expect(c.content).toMatch(/```js\n/)
      expect(c.content.trimEnd().endsWith('```')).toBe(true)
    }
    // nothing lost
    for (let i = 0; i < 400; i += 37) expect(chunks.some((c) => c.content.includes(`| key${i} |`))).toBe(true)
  })

  it('overlaps consecutive chunks of one section by whole sentences', () => {
    const md = `## Long\n\n${para(1200)}`
    const chunks = chunkMarkdown(md, { overlapTokens: 40 })
    expect(chunks.length).toBeGreaterThan(2)
    const firstSentence = chunks[1]!.content.split(/(?<=\.)\s+/)[0]!
    const lastSentence = chunks[0]!.content.split(/(?<=\.)\s+/).pop()!
    // the next chunk starts with the last sentences of the previous one, and not with all of it
    expect(chunks[0]!.content).toContain(firstSentence)
    expect(chunks[1]!.content.indexOf(lastSentence)).toBeGreaterThanOrEqual(0)
    expect(chunks[1]!.content.indexOf(lastSentence)).toBeLessThan(200)
    expect(chunks[1]!.content.startsWith(chunks[0]!.content.slice(0, 100))).toBe(false)
  })

  it('splits a text without any structure and without spaces', () => {
    const blob = 'x'.repeat(20_000)
    const chunks = chunkMarkdown(blob)
    expect(chunks.length).toBeGreaterThan(5)
    expect(chunks.map((c) => c.content).join('')).toBe(blob)
  })

  it('returns nothing for empty text or headings only', () => {
    expect(chunkMarkdown('')).toEqual([])
    expect(chunkMarkdown('# A\n\n## B\n')).toEqual([])
  })

  it('records the language per chunk and the source URL', () => {
    const md = `# Doc\n\n${para(300)}\n\n# Deutsch\n\nDies ist ein Absatz, der auf Deutsch geschrieben ist, und er ist nicht sehr lang, aber es gibt ihn und er hat viele Wörter.`
    const chunks = chunkMarkdown(md, { sourceUrl: 'https://ex.test/a' })
    expect(chunks[0]!.lang).toBe('english')
    expect(chunks.at(-1)!.lang).toBe('german')
    expect(chunks.every((c) => c.sourceUrl === 'https://ex.test/a')).toBe(true)
  })

  it('gives every API operation its own chunk', () => {
    const ops = Array.from({ length: 5 }, (_, i) => `## GET /items/${i}\n\nReturns item ${i}.`).join('\n\n')
    const chunks = chunkDocument({ text: `# API\n\n${ops}`, fileType: 'swagger' })
    expect(chunks.map((c) => c.sectionTitle)).toEqual([0, 1, 2, 3, 4].map((i) => `GET /items/${i}`))
  })

  it('is linear enough for megabytes', () => {
    const md = Array.from({ length: 2000 }, (_, i) => `## Section ${i}\n\n${para(80, `s${i}`)}\n\n- a\n- b\n\n\`\`\`\ncode ${i}\n\`\`\``).join('\n\n')
    const t = performance.now()
    const chunks = chunkMarkdown(md)
    const ms = performance.now() - t
    expect(md.length).toBeGreaterThan(1_000_000)
    expect(chunks.length).toBeGreaterThan(100)
    expect(ms).toBeLessThan(3000)
  })
})

describe('estimateTokens', () => {
  it('counts CJK characters as tokens', () => {
    expect(estimateTokens('abcd'.repeat(25))).toBe(25)
    expect(estimateTokens('日本語のテキスト')).toBe(8)
  })
})
