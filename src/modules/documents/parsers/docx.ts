import mammoth from 'mammoth'
import yauzl from 'yauzl'
import { ParseFailure } from './errors.js'
import { htmlToMarkdown } from './html.fns.js'

export interface ZipLimits {
  /** Entries in the archive. */
  maxEntries: number
  /** Decompressed bytes of all XML parts together (what the Word reader inflates and parses). */
  maxXmlBytes: number
}

/**
 * Word (docx): the archive is inspected first, so a zip bomb or a truncated file is refused before the
 * Word reader inflates anything: entry count capped, every XML part actually inflated with a running
 * byte budget (declared sizes can lie; yauzl also checks them against the real stream). Images are never
 * read. mammoth then maps Word styles to headings, lists and tables, rendered as markdown.
 */
export async function parseDocx(bytes: Uint8Array, limits: ZipLimits): Promise<{ text: string; title: string | null }> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  await inspectZip(buffer, limits)
  let html: string
  try {
    const result = await mammoth.convertToHtml(
      { buffer },
      {
        ignoreEmptyParagraphs: true,
        styleMap: ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => h2:fresh"],
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
      },
    )
    html = result.value
  } catch {
    throw new ParseFailure('The Word document could not be read (damaged or not a .docx)')
  }
  const text = htmlToMarkdown(html)
  const title = /^# (.+)$/m.exec(text)?.[1]?.trim() ?? null
  return { text, title }
}

function inspectZip(buffer: Buffer, limits: ZipLimits): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (msg: string) => reject(new ParseFailure(msg))
    yauzl.fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) => {
      if (err || !zip) return fail('The Word document is damaged (not a complete zip archive)')
      let entries = 0
      let xmlBytes = 0
      let hasDocument = false
      let done = false
      const stop = (msg: string | null) => {
        if (done) return
        done = true
        zip.close()
        if (msg) fail(msg)
        else resolve()
      }
      zip.on('error', () => stop('The Word document is damaged (invalid zip data)'))
      zip.on('end', () => stop(hasDocument ? null : 'The file is not a Word document (word/document.xml is missing)'))
      zip.on('entry', (entry: yauzl.Entry) => {
        if (done) return
        entries++
        if (entries > limits.maxEntries) return stop(`The Word document has too many parts (more than ${limits.maxEntries})`)
        const name = entry.fileName
        if (name === 'word/document.xml') hasDocument = true
        if (!/\.(xml|rels)$/i.test(name) || name.endsWith('/')) return zip.readEntry()
        if (xmlBytes + entry.uncompressedSize > limits.maxXmlBytes) return stop('The Word document expands to too much data (possible zip bomb)')
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return stop('The Word document is damaged (unreadable part)')
          stream.on('data', (chunk: Buffer) => {
            xmlBytes += chunk.length
            if (xmlBytes > limits.maxXmlBytes) {
              stream.destroy()
              stop('The Word document expands to too much data (possible zip bomb)')
            }
          })
          stream.on('error', () => stop('The Word document is damaged (corrupt compressed data)'))
          stream.on('end', () => {
            if (!done) zip.readEntry()
          })
        })
      })
      zip.readEntry()
    })
  })
}
