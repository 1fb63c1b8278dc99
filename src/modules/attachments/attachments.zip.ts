import yauzl from 'yauzl'

export interface ZipCaps {
  maxEntries: number
  /** The declared decompressed size of all entries together. */
  maxExpandedBytes: number
}

/**
 * A zip accepted as a Word document: its central directory (read, nothing inflated) has word/document.xml, at most
 * `maxEntries` entries and declares at most `maxExpandedBytes` in all. A bomb is refused here, on the declared sizes,
 * in the time it takes to read the directory; one that lies about its sizes is stopped later by the parser
 * (docx.ts reads with yauzl's size validation and a byte budget, in a worker with a memory limit).
 */
export function checkDocxZip(bytes: Uint8Array, caps: ZipCaps): Promise<{ ok: true } | { ok: false; why: 'not_docx' | 'too_large' | 'damaged' }> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return new Promise((resolve) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) => {
      if (err || !zip) return resolve({ ok: false, why: 'damaged' })
      let entries = 0
      let expanded = 0
      let word = false
      let done = false
      const stop = (r: { ok: true } | { ok: false; why: 'not_docx' | 'too_large' | 'damaged' }) => {
        if (done) return
        done = true
        zip.close()
        resolve(r)
      }
      zip.on('error', () => stop({ ok: false, why: 'damaged' }))
      zip.on('end', () => stop(word ? { ok: true } : { ok: false, why: 'not_docx' }))
      zip.on('entry', (e: yauzl.Entry) => {
        if (done) return
        entries++
        expanded += e.uncompressedSize
        if (e.fileName === 'word/document.xml') word = true
        if (entries > caps.maxEntries || expanded > caps.maxExpandedBytes) return stop({ ok: false, why: 'too_large' })
        zip.readEntry()
      })
      zip.readEntry()
    })
  })
}
