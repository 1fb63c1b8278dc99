import { afterAll, describe, expect, it } from 'vitest'
import { ParseFailure, UnsupportedFile } from '../src/modules/documents/parsers/errors.js'
import { DEFAULT_PARSE_LIMITS, parseUpload } from '../src/modules/documents/parsers/parse.js'
import { createParserPool, ParserTimeout } from '../src/modules/documents/parsers/pool.js'
import {
  makeDocx,
  makeEncryptedPdf,
  makeManyPagesPdf,
  makePdf,
  makeZipBombDocx,
  OPENAPI_YAML,
  PNG_HEADER,
  randomBytesSeeded,
  SWAGGER2_JSON,
  word97Sample,
} from './fixtures/files.js'

/** The real parsers on real (generated) files, without HTTP: what each format becomes. */
describe('parsers', () => {
  it('docx: headings, title, bold text, list and table as markdown', async () => {
    const r = await parseUpload('handbook.docx', await makeDocx())
    expect(r.fileType).toBe('docx')
    expect(r.title).toBe('Router Handbook')
    expect(r.text).toMatch(/^# Router Handbook$/m)
    expect(r.text).toMatch(/^# Installation$/m)
    expect(r.text).toMatch(/^## Resetting$/m)
    expect(r.text).toContain('wait for the green light.')
    expect(r.text).toMatch(/^- Unplug the cable$/m)
    expect(r.text).toContain('| Light | Meaning |\n| --- | --- |\n| Green | Online |')
  })

  it('a .doc that is really a docx is read as docx', async () => {
    const r = await parseUpload('legacy-name.doc', await makeDocx())
    expect(r.fileType).toBe('docx')
  })

  it('legacy .doc (Word 97) through word-extractor', async () => {
    const r = await parseUpload('sample.doc', word97Sample())
    expect(r.fileType).toBe('doc')
    expect(r.text).toContain('Nom Document1')
    expect(r.text).toContain('Définition')
    expect(r.text.split('\n\n').length).toBeGreaterThan(5)
  })

  it('pdf: layout headings, joined hyphenation, running footer dropped, title from metadata', async () => {
    const r = await parseUpload('faq.pdf', await makePdf({ pages: 3 }))
    expect(r.fileType).toBe('pdf')
    expect(r.title).toBe('Billing FAQ')
    expect(r.text).toMatch(/^# Chapter 1: Invoices and refunds$/m)
    expect(r.text).toMatch(/^# Chapter 3: Invoices and refunds$/m)
    expect(r.text).toContain('after a cancellation request arrives')
    expect(r.text).not.toContain('Acme Billing Guide')
  })

  it('OpenAPI YAML and Swagger 2 JSON become file_type swagger, one section per operation', async () => {
    const y = await parseUpload('petstore.yaml', new TextEncoder().encode(OPENAPI_YAML))
    expect(y.fileType).toBe('swagger')
    expect(y.title).toBe('Pet Store API')
    expect(y.text).toMatch(/^## GET \/pets$/m)
    expect(y.text).toMatch(/^## POST \/pets$/m)
    expect(y.text).toMatch(/^## DELETE \/pets\/\{petId\}$/m)
    expect(y.text).toContain('- `limit` (query, integer (int32), optional): How many pets to return at most')
    expect(y.text).toContain('- `200`: A page of pets — returns array of Pet')
    expect(y.text).toContain("- `name` (string, required): The pet's name")
    const j = await parseUpload('orders.json', new TextEncoder().encode(SWAGGER2_JSON))
    expect(j.fileType).toBe('swagger')
    expect(j.text).toMatch(/^## POST \/orders$/m)
    expect(j.text).toContain('Base URL: https://orders.test/api')
  })

  it('plain JSON and YAML keep their file types', async () => {
    expect((await parseUpload('c.json', new TextEncoder().encode('{"a":{"b":1}}'))).fileType).toBe('json')
    expect((await parseUpload('c.yml', new TextEncoder().encode('a:\n  b: 1\n'))).fileType).toBe('yaml')
  })

  it('refuses hostile and broken files with a clear reason', async () => {
    const fails = async (name: string, data: Uint8Array, kind: typeof ParseFailure | typeof UnsupportedFile, msg: RegExp) => {
      const err = await parseUpload(name, data).then(
        () => null,
        (e) => e,
      )
      expect(err, name).toBeInstanceOf(kind)
      expect(err.message, name).toMatch(msg)
    }
    await fails('secret.pdf', makeEncryptedPdf(), ParseFailure, /encrypted/i)
    await fails('random.pdf', randomBytesSeeded(4096), ParseFailure, /not a valid PDF/i)
    const broken = Buffer.from(await makePdf())
    await fails('truncated.pdf', broken.subarray(0, 600), ParseFailure, /PDF/)
    const docx = await makeDocx()
    await fails('truncated.docx', docx.subarray(0, Math.floor(docx.length / 2)), ParseFailure, /damaged|not a Word/i)
    await fails('bomb.docx', makeZipBombDocx(300), ParseFailure, /zip bomb/i)
    await fails('liar.docx', makeZipBombDocx(50, true), ParseFailure, /damaged|zip bomb/i)
    await fails('photo.md', PNG_HEADER, UnsupportedFile, /PNG/)
    await fails('tool.exe', new TextEncoder().encode('MZ'), UnsupportedFile, /Unsupported file type '.exe'/)
    await fails('bad.json', new TextEncoder().encode('{"a": '), ParseFailure, /Invalid JSON/)
    await fails('blank.txt', new TextEncoder().encode('   \n\n '), ParseFailure, /no readable text/)
  })
})

describe('parser pool', () => {
  const pool = createParserPool({ size: 1, timeoutMs: 2500, maxMemoryMb: 256, limits: DEFAULT_PARSE_LIMITS })
  afterAll(() => pool.close())

  it('parses in a worker thread and keeps working after a file that takes too long', async () => {
    expect((await pool.parse('a.md', new TextEncoder().encode('# A\n\ntext'))).text).toBe('# A\n\ntext')
    // 4,000 pages of text cannot be read in 2.5 s: the worker is terminated and replaced
    const big = makeManyPagesPdf(4000)
    const err = await pool.parse('big.pdf', big).then(
      () => null,
      (e) => e,
    )
    expect(err).toBeInstanceOf(ParserTimeout)
    expect(err.message).toMatch(/too long/)
    expect((await pool.parse('b.md', new TextEncoder().encode('# B\n\nagain'))).text).toBe('# B\n\nagain')
  }, 60_000)
})
