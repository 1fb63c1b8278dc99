/**
 * What a visitor's file is, by its bytes alone (never its name or declared type), and the image metadata taken
 * out before it is stored. Every loop here walks a structure whose lengths come from the file: each step is
 * bounded by the buffer and by a step count, so a crafted file costs at most one pass over its bytes.
 */

export type AttachmentKind = 'image' | 'document'

export type Sniffed =
  | { ok: true; kind: 'image'; contentType: ImageType; width: number; height: number }
  | { ok: true; kind: 'document'; contentType: DocumentType }
  | { ok: false; why: string }

export type ImageType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif'
export type DocumentType = 'application/pdf' | 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' | 'text/plain'

export const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'

const at = (b: Uint8Array, sig: readonly number[], offset = 0) => b.length >= offset + sig.length && sig.every((v, i) => b[offset + i] === v)
const ascii = (b: Uint8Array, s: string, offset = 0) =>
  at(
    b,
    [...s].map((c) => c.charCodeAt(0)),
    offset,
  )
const be32 = (b: Uint8Array, o: number) => ((b[o]! << 24) >>> 0) + (b[o + 1]! << 16) + (b[o + 2]! << 8) + b[o + 3]!
const be16 = (b: Uint8Array, o: number) => (b[o]! << 8) + b[o + 1]!
const le16 = (b: Uint8Array, o: number) => b[o]! + (b[o + 1]! << 8)
const le24 = (b: Uint8Array, o: number) => b[o]! + (b[o + 1]! << 8) + (b[o + 2]! << 16)
const le32 = (b: Uint8Array, o: number) => b[o]! + (b[o + 1]! << 8) + (b[o + 2]! << 16) + ((b[o + 3]! << 24) >>> 0)

const PNG_SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const

/** The kind, type and (for an image) declared size of a file; `ok: false` for anything not accepted (415). */
export function sniffAttachment(b: Uint8Array): Sniffed {
  if (b.length === 0) return { ok: false, why: 'the file is empty' }
  if (at(b, PNG_SIG)) {
    if (b.length < 24 || !ascii(b, 'IHDR', 12)) return { ok: false, why: 'a damaged PNG image' }
    return { ok: true, kind: 'image', contentType: 'image/png', width: be32(b, 16), height: be32(b, 20) }
  }
  if (at(b, [0xff, 0xd8, 0xff])) {
    const size = jpegSize(b)
    return size ? { ok: true, kind: 'image', contentType: 'image/jpeg', ...size } : { ok: false, why: 'a damaged JPEG image' }
  }
  if (ascii(b, 'GIF87a') || ascii(b, 'GIF89a')) {
    if (b.length < 10) return { ok: false, why: 'a damaged GIF image' }
    return { ok: true, kind: 'image', contentType: 'image/gif', width: le16(b, 6), height: le16(b, 8) }
  }
  if (ascii(b, 'RIFF') && ascii(b, 'WEBP', 8)) {
    const size = webpSize(b)
    return size ? { ok: true, kind: 'image', contentType: 'image/webp', ...size } : { ok: false, why: 'a damaged WebP image' }
  }
  if (ascii(b, '%PDF-')) return { ok: true, kind: 'document', contentType: 'application/pdf' }
  // a zip is accepted only as Word's (its central directory is checked before anything is inflated: zipEntries)
  if (at(b, [0x50, 0x4b, 0x03, 0x04])) return { ok: true, kind: 'document', contentType: DOCX_TYPE }
  if (isPlainText(b)) return { ok: true, kind: 'document', contentType: 'text/plain' }
  return { ok: false, why: 'not an accepted type' }
}

/**
 * Plain text: valid UTF-8 without NUL, and not markup. A text that starts with a tag (HTML, SVG, XML) is refused:
 * a browser that opens it may render it, whatever we call it.
 */
export function isPlainText(b: Uint8Array): boolean {
  if (b.includes(0)) return false
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(b)
  } catch {
    return false
  }
  const head = text
    .slice(0, 4096)
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase()
  if (/^<[!?a-z]/.test(head)) return false
  return !/<(?:html|svg|script|body|iframe)\b/.test(head)
}

/** A JPEG's size from its first start-of-frame marker; null when none is found in the walk. */
function jpegSize(b: Uint8Array): { width: number; height: number } | null {
  let o = 2
  for (let steps = 0; steps < 10_000 && o + 4 <= b.length; steps++) {
    if (b[o] !== 0xff) return null
    const marker = b[o + 1]!
    if (marker === 0xff) {
      o++
      continue
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      o += 2
      continue
    }
    const len = be16(b, o + 2)
    if (len < 2) return null
    // SOF0..SOF15 except DHT (c4), JPG (c8) and DAC (cc)
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (o + 9 > b.length) return null
      return { height: be16(b, o + 5), width: be16(b, o + 7) }
    }
    if (marker === 0xda) return null
    o += 2 + len
  }
  return null
}

/** A WebP's canvas size from its first chunk (VP8X, VP8L or VP8). */
function webpSize(b: Uint8Array): { width: number; height: number } | null {
  if (b.length < 30) return null
  const o = 12
  if (ascii(b, 'VP8X', o)) return { width: le24(b, o + 12) + 1, height: le24(b, o + 15) + 1 }
  if (ascii(b, 'VP8L', o)) {
    if (b[o + 8] !== 0x2f) return null
    const bits = le32(b, o + 9)
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
  }
  if (ascii(b, 'VP8 ', o)) {
    if (!at(b, [0x9d, 0x01, 0x2a], o + 11)) return null
    return { width: le16(b, o + 14) & 0x3fff, height: le16(b, o + 16) & 0x3fff }
  }
  return null
}

/**
 * The image without its metadata: JPEG APP1..APP13, APP15 (EXIF, XMP, IPTC: GPS lives in EXIF) and comments;
 * PNG eXIf and text chunks (tEXt, zTXt, iTXt) and tIME; WebP EXIF and XMP chunks (with the VP8X flags cleared).
 * GIF is stored as sent: it has no EXIF. Pixels are never decoded. Null when the structure is damaged.
 */
export function stripImageMetadata(b: Uint8Array, type: ImageType): Uint8Array | null {
  const parts = imageWithoutMetadata(b, type)
  return parts && concat(parts)
}

/** The same, as the pieces of the file in order (views of `b`, no copy of the whole): sealed and stored piece by piece. */
export function imageWithoutMetadata(b: Uint8Array, type: ImageType): Uint8Array[] | null {
  if (type === 'image/jpeg') return stripJpeg(b)
  if (type === 'image/png') return stripPng(b)
  if (type === 'image/webp') return stripWebp(b)
  return [b]
}

function stripJpeg(b: Uint8Array): Uint8Array[] | null {
  const parts: Uint8Array[] = [b.subarray(0, 2)]
  let o = 2
  for (let steps = 0; steps < 10_000; steps++) {
    if (o + 4 > b.length || b[o] !== 0xff) return null
    const marker = b[o + 1]!
    if (marker === 0xda) {
      // start of scan: the entropy-coded data and everything after it go as they are
      parts.push(b.subarray(o))
      return parts
    }
    if (marker === 0xff) {
      o++
      continue
    }
    const len = be16(b, o + 2)
    if (len < 2 || o + 2 + len > b.length) return null
    const drop = (marker >= 0xe1 && marker <= 0xed) || marker === 0xef || marker === 0xfe
    if (!drop) parts.push(b.subarray(o, o + 2 + len))
    o += 2 + len
  }
  return null
}

const PNG_DROP = new Set(['eXIf', 'tEXt', 'zTXt', 'iTXt', 'tIME'])

function stripPng(b: Uint8Array): Uint8Array[] | null {
  const parts: Uint8Array[] = [b.subarray(0, 8)]
  let o = 8
  for (let steps = 0; steps < 100_000; steps++) {
    if (o + 12 > b.length) return null
    const len = be32(b, o)
    const end = o + 12 + len
    if (end > b.length) return null
    const type = String.fromCharCode(b[o + 4]!, b[o + 5]!, b[o + 6]!, b[o + 7]!)
    if (!PNG_DROP.has(type)) parts.push(b.subarray(o, end))
    o = end
    if (type === 'IEND') return parts
  }
  return null
}

function stripWebp(b: Uint8Array): Uint8Array[] | null {
  const chunks: Uint8Array[] = []
  let o = 12
  const riffEnd = Math.min(b.length, 8 + le32(b, 4))
  for (let steps = 0; steps < 100_000 && o < riffEnd; steps++) {
    if (o + 8 > riffEnd) return null
    const type = String.fromCharCode(b[o]!, b[o + 1]!, b[o + 2]!, b[o + 3]!)
    const len = le32(b, o + 4)
    const end = o + 8 + len + (len & 1)
    if (o + 8 + len > riffEnd) return null
    if (type !== 'EXIF' && type !== 'XMP ') {
      // a view, but VP8X's flags change: a copy of its few bytes
      const chunk = type === 'VP8X' ? b.slice(o, Math.min(end, riffEnd)) : b.subarray(o, Math.min(end, riffEnd))
      // VP8X flags: XMP (bit 2) and EXIF (bit 3) are no longer there
      if (type === 'VP8X' && chunk.length > 8) chunk[8] = chunk[8]! & ~0x0c
      chunks.push(chunk)
    }
    o = end
  }
  const head = b.slice(0, 12)
  const size = 4 + chunks.reduce((n, c) => n + c.length, 0)
  head[4] = size & 0xff
  head[5] = (size >>> 8) & 0xff
  head[6] = (size >>> 16) & 0xff
  head[7] = (size >>> 24) & 0xff
  return [head, ...chunks]
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

/** A file name as shown and sent in Content-Disposition: no path, no control characters, bounded. */
export function cleanName(name: string | undefined, fallback: string): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? ''
  const clean = base
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(0, 200)
  return clean || fallback
}

/** `Content-Disposition: attachment` with an ASCII fallback and the UTF-8 name (RFC 6266 / 5987). */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/[\\"]/g, '_')
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
}

/** What a turn may take from its attachments: count, bytes of images, characters of document text. */
export interface TurnBudget {
  maxImages: number
  maxImageBytes: number
  maxTextChars: number
}

export interface BudgetItem {
  id: string
  name: string
  kind: AttachmentKind
  size: number
  text: string | null
}

/**
 * Which attachments of a message go to the model, in the visitor's order: images while the count and bytes allow,
 * document text while the characters allow (the last one cut); what was left out is named, so the model can say so.
 */
export function planAttachments<T extends BudgetItem>(items: T[], b: TurnBudget): { images: T[]; texts: { item: T; text: string }[]; left: string[] } {
  const images: T[] = []
  const texts: { item: T; text: string }[] = []
  const left: string[] = []
  let bytes = 0
  let chars = 0
  for (const it of items) {
    if (it.kind === 'image') {
      if (images.length < b.maxImages && bytes + it.size <= b.maxImageBytes) {
        images.push(it)
        bytes += it.size
      } else left.push(`${it.name} (image: over this message's image budget)`)
      continue
    }
    const text = (it.text ?? '').trim()
    if (!text) {
      left.push(`${it.name} (no readable text)`)
      continue
    }
    const room = b.maxTextChars - chars
    if (room <= 200) {
      left.push(`${it.name} (over this message's text budget)`)
      continue
    }
    const cut = text.length > room
    texts.push({ item: it, text: cut ? `${text.slice(0, room)}\n[… the rest of ${it.name} was left out]` : text })
    chars += Math.min(text.length, room)
  }
  return { images, texts, left }
}
