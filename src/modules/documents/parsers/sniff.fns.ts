/**
 * Decides what an upload really is, from its extension and its first bytes. The extension says what the
 * user meant; the bytes say what it is. A format we read is read as what its bytes say (a `.doc` that is
 * really a docx is read as docx); a known foreign format is refused as unsupported; anything claiming a
 * binary format its bytes contradict is a parse error.
 */

export type UploadKind = 'pdf' | 'docx' | 'doc' | 'markdown' | 'mdx' | 'plaintext' | 'json' | 'yaml' | 'html'

export const ACCEPTED_EXTENSIONS = ['pdf', 'md', 'mdx', 'docx', 'doc', 'txt', 'json', 'yaml', 'yml', 'html', 'htm'] as const

const BY_EXTENSION: Record<string, UploadKind> = {
  pdf: 'pdf',
  md: 'markdown',
  markdown: 'markdown',
  mdx: 'mdx',
  docx: 'docx',
  doc: 'doc',
  txt: 'plaintext',
  json: 'json',
  yaml: 'yaml',
  yml: 'yaml',
  // an exported help centre's pages (issue 52): read as the crawler reads a page, stored as Markdown
  html: 'html',
  htm: 'html',
}

export type SniffResult = { ok: true; kind: UploadKind } | { ok: false; status: 400 | 422; message: string }

export function extensionOf(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? ''
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : ''
}

const startsWith = (b: Uint8Array, sig: number[], at = 0) => sig.every((v, i) => b[at + i] === v)

/** Formats we recognise by their magic bytes but do not accept. */
const FOREIGN: [string, (b: Uint8Array) => boolean][] = [
  ['a PNG image', (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47])],
  ['a JPEG image', (b) => startsWith(b, [0xff, 0xd8, 0xff])],
  ['a GIF image', (b) => startsWith(b, [0x47, 0x49, 0x46, 0x38])],
  ['a WebP or RIFF file', (b) => startsWith(b, [0x52, 0x49, 0x46, 0x46])],
  ['a gzip archive', (b) => startsWith(b, [0x1f, 0x8b])],
  ['a 7-Zip archive', (b) => startsWith(b, [0x37, 0x7a, 0xbc, 0xaf])],
  ['a RAR archive', (b) => startsWith(b, [0x52, 0x61, 0x72, 0x21])],
  ['an executable', (b) => startsWith(b, [0x4d, 0x5a]) || startsWith(b, [0x7f, 0x45, 0x4c, 0x46])],
  ['an RTF document', (b) => startsWith(b, [0x7b, 0x5c, 0x72, 0x74, 0x66])],
  ['a SQLite database', (b) => startsWith(b, [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65])],
]

const isZip = (b: Uint8Array) => startsWith(b, [0x50, 0x4b, 0x03, 0x04]) || startsWith(b, [0x50, 0x4b, 0x05, 0x06])
const isOle = (b: Uint8Array) => startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])

/**
 * `%PDF-` at the start, or within the first KiB of a file named .pdf (some producers put junk before it
 * and readers accept that; a markdown file merely mentioning %PDF- is not a PDF).
 */
function isPdf(b: Uint8Array, claimedPdf: boolean): boolean {
  const n = Math.min(b.length - 4, claimedPdf ? 1024 : 1)
  for (let i = 0; i < n; i++) {
    if (b[i] === 0x25 && b[i + 1] === 0x50 && b[i + 2] === 0x44 && b[i + 3] === 0x46 && b[i + 4] === 0x2d) return true
  }
  return false
}

/** A zip with a Word main part: the name appears in the local headers or the central directory. */
function zipHasWordDocument(b: Uint8Array): boolean {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).includes('word/document.xml')
}

/** Text has no NUL bytes and few control characters in its first 8 KiB (UTF-16 has a BOM). */
export function looksLikeText(b: Uint8Array): boolean {
  if (startsWith(b, [0xff, 0xfe]) || startsWith(b, [0xfe, 0xff])) return true
  const n = Math.min(b.length, 8192)
  let control = 0
  for (let i = 0; i < n; i++) {
    const c = b[i]!
    if (c === 0) return false
    if (c < 9 || (c > 13 && c < 32 && c !== 27)) control++
  }
  return control <= n * 0.01
}

export function sniffUpload(filename: string, bytes: Uint8Array): SniffResult {
  const ext = extensionOf(filename)
  const claimed = BY_EXTENSION[ext]
  if (!claimed) {
    return {
      ok: false,
      status: 400,
      message: `Unsupported file type${ext ? ` '.${ext}'` : ''}. Accepted: ${ACCEPTED_EXTENSIONS.join(', ')}`,
    }
  }
  if (bytes.length === 0) return { ok: false, status: 422, message: 'The file is empty' }

  // Formats we read are read as what they are, whatever the extension says.
  if (isPdf(bytes, claimed === 'pdf')) return { ok: true, kind: 'pdf' }
  if (isZip(bytes)) {
    if (zipHasWordDocument(bytes)) return { ok: true, kind: 'docx' }
    if (claimed === 'docx') return { ok: false, status: 422, message: 'The file is a zip archive but not a Word document' }
    return { ok: false, status: 400, message: 'Unsupported file type: the file is a zip archive' }
  }
  if (isOle(bytes)) return { ok: true, kind: 'doc' }
  for (const [what, test] of FOREIGN) {
    if (test(bytes)) return { ok: false, status: 400, message: `Unsupported file type: the file is ${what}, not a document` }
  }
  if (!isTextKind(claimed)) {
    return { ok: false, status: 422, message: `The file is not a valid ${claimed === 'pdf' ? 'PDF' : 'Word'} document (unrecognised content)` }
  }
  if (!looksLikeText(bytes)) return { ok: false, status: 422, message: `The file is not readable text (binary content in a .${ext} file)` }
  return { ok: true, kind: claimed }
}

const isTextKind = (k: UploadKind) => k === 'markdown' || k === 'mdx' || k === 'plaintext' || k === 'json' || k === 'yaml' || k === 'html'
