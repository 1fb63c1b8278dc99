import { constants, createDeflate } from 'node:zlib'
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from './helpers/app.js'
import { upload, uploadReady } from './helpers/documents.js'
import { createTenant } from './helpers/factories.js'
import { makePdf } from './fixtures/files.js'

let t: TestApp
beforeAll(async () => {
  t = await startApp()
})
afterAll(() => t?.close())

/** Deflates `megabytes` of zeros from one reused 1 MB buffer, so the test itself never holds the inflated data. */
async function deflatedZeros(megabytes: number): Promise<Buffer> {
  const deflate = createDeflate({ level: constants.Z_BEST_COMPRESSION })
  const out: Buffer[] = []
  deflate.on('data', (c: Buffer) => out.push(c))
  const ended = new Promise((r) => deflate.on('end', r))
  const mb = Buffer.alloc(1024 * 1024)
  for (let i = 0; i < megabytes; i++) if (!deflate.write(mb)) await new Promise((r) => deflate.once('drain', r))
  deflate.end()
  await ended
  return Buffer.concat(out)
}

/** A readable PDF whose pages' content streams inflate to `pages` x `megabytesPerPage` MB of zeros. */
async function pdfBomb(pages: number, megabytesPerPage: number): Promise<Uint8Array> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  const bomb = await deflatedZeros(megabytesPerPage)
  for (let p = 0; p < pages; p++) {
    const page = pdf.addPage([595, 842])
    page.drawText('Innocent looking first line of a billing guide.', { x: 50, y: 780, size: 12, font })
    const stream = pdf.context.stream(bomb, { Filter: 'FlateDecode', Length: bomb.length })
    page.node.set(PDFName.of('Contents'), pdf.context.register(stream))
  }
  return pdf.save({ useObjectStreams: false })
}

describe('hostile PDFs', () => {
  it('still reads an ordinary PDF with compressed content streams', async () => {
    const owner = await createTenant(t)
    const doc = await uploadReady(t, owner.api, 'billing.pdf', await makePdf({ pages: 2, marker: 'hostile-ok' }))
    expect(doc.parsed_text).toContain('hostile-ok')
  })

  it('refuses a PDF whose content streams inflate to 480 MB with a clear 422 in under 2 s, memory bounded', async () => {
    const bytes = await pdfBomb(3, 160)
    expect(bytes.length).toBeLessThan(2 * 1024 * 1024)
    const owner = await createTenant(t)
    global.gc?.()
    const rssBefore = process.memoryUsage().rss
    let peak = rssBefore
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
    // twice, the faster counted: the machine running the tests is shared, and the target is the service's own time
    const times: number[] = []
    let r!: Awaited<ReturnType<typeof upload>>
    for (let i = 0; i < 2; i++) {
      const started = performance.now()
      r = await upload(owner.api, 'billing-guide.pdf', bytes)
      times.push(performance.now() - started)
      expect(r.status, r.text).toBe(422)
    }
    const ms = Math.min(...times)
    clearInterval(sampler)
    peak = Math.max(peak, process.memoryUsage().rss)
    console.info(`pdf bomb (${(bytes.length / 1024 / 1024).toFixed(2)} MB -> 480 MB): 422 in ${times.map(Math.round).join(' / ')} ms, rss +${Math.round((peak - rssBefore) / 1024 / 1024)} MB`)
    expect(r.status, r.text).toBe(422)
    expect(r.body.detail).toMatch(/expands to too much data/)
    expect(ms).toBeLessThan(2000)
    expect(peak - rssBefore).toBeLessThan(200 * 1024 * 1024)
    expect((await owner.api.get('/documents')).body.documents).toEqual([])
  })

})
