import { describe, expect, it } from 'vitest'
import { makeJpeg, makePng } from '../../../test/helpers/attachments.js'
import { cleanName, contentDisposition, planAttachments, sniffAttachment, stripImageMetadata } from './attachments.fns.js'

const webp = (chunks: [string, Buffer][]) => {
  const body = Buffer.concat(
    chunks.map(([type, data]) => {
      const h = Buffer.alloc(8)
      h.write(type, 0, 'latin1')
      h.writeUInt32LE(data.length, 4)
      return Buffer.concat([h, data, data.length & 1 ? Buffer.alloc(1) : Buffer.alloc(0)])
    }),
  )
  const head = Buffer.alloc(12)
  head.write('RIFF', 0, 'latin1')
  head.writeUInt32LE(4 + body.length, 4)
  head.write('WEBP', 8, 'latin1')
  return Buffer.concat([head, body])
}

describe('sniffAttachment', () => {
  it('types images by their bytes, with the size their header declares', () => {
    expect(sniffAttachment(makePng({ width: 3, height: 2 }))).toEqual({ ok: true, kind: 'image', contentType: 'image/png', width: 3, height: 2 })
    expect(sniffAttachment(makePng({ declared: [50_000, 50_000] }))).toMatchObject({ width: 50_000, height: 50_000 })
    expect(sniffAttachment(makeJpeg('x', 640, 480))).toMatchObject({ contentType: 'image/jpeg', width: 640, height: 480 })
    expect(sniffAttachment(Buffer.from('GIF89a\x10\x00\x20\x00', 'latin1'))).toMatchObject({ contentType: 'image/gif', width: 16, height: 32 })
    const vp8x = Buffer.alloc(10)
    vp8x.writeUIntLE(99, 4, 3)
    vp8x.writeUIntLE(49, 7, 3)
    expect(
      sniffAttachment(
        webp([
          ['VP8X', vp8x],
          ['VP8 ', Buffer.alloc(10)],
        ]),
      ),
    ).toMatchObject({ contentType: 'image/webp', width: 100, height: 50 })
  })

  it('takes PDF, a zip (checked as Word later) and UTF-8 text; refuses markup, binary, invalid UTF-8 and empty files', () => {
    expect(sniffAttachment(Buffer.from('%PDF-1.7\n'))).toMatchObject({ kind: 'document', contentType: 'application/pdf' })
    expect(sniffAttachment(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0]))).toMatchObject({ kind: 'document' })
    expect(sniffAttachment(Buffer.from('Error 0x80070005: access denied ü'))).toMatchObject({ contentType: 'text/plain' })
    for (const bad of [
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
      Buffer.from('  <!DOCTYPE html><p>hi'),
      Buffer.from('\uFEFF<?xml version="1.0"?><svg/>'),
      Buffer.from('hello <script>alert(1)</script>'),
      Buffer.from([0x4d, 0x5a, 0x90, 0]),
      Buffer.from([0xc3, 0x28]),
      Buffer.alloc(0),
    ]) {
      expect(sniffAttachment(bad).ok, bad.toString('latin1')).toBe(false)
    }
  })
})

describe('stripImageMetadata', () => {
  it('drops JPEG APP1 (EXIF, GPS) and comments, keeping JFIF, the frame and the scan', () => {
    const out = Buffer.from(stripImageMetadata(makeJpeg('GPSLatitude 52'), 'image/jpeg')!)
    expect(out.includes('GPSLatitude')).toBe(false)
    expect(out.includes('JFIF')).toBe(true)
    expect(out.subarray(-6)).toEqual(Buffer.from([0x12, 0x34, 0x56, 0x78, 0xff, 0xd9]))
    expect(sniffAttachment(out)).toMatchObject({ width: 640, height: 480 })
  })

  it('drops PNG eXIf and text chunks, keeping the rest byte for byte', () => {
    const plain = makePng()
    expect(Buffer.from(stripImageMetadata(makePng({ meta: 'GPS 1 2' }), 'image/png')!)).toEqual(plain)
  })

  it('drops WebP EXIF and XMP chunks, clears their VP8X flags and fixes the RIFF size', () => {
    const vp8x = Buffer.alloc(10)
    vp8x[0] = 0x0c
    const out = Buffer.from(
      stripImageMetadata(
        webp([
          ['VP8X', vp8x],
          ['VP8 ', Buffer.alloc(10)],
          ['EXIF', Buffer.from('GPS here!')],
          ['XMP ', Buffer.from('<x/>')],
        ]),
        'image/webp',
      )!,
    )
    expect(out.includes('GPS')).toBe(false)
    expect(out.includes('XMP')).toBe(false)
    expect(out[20]! & 0x0c).toBe(0)
    expect(out.readUInt32LE(4)).toBe(out.length - 8)
  })

  it('refuses a damaged structure (null) instead of storing it half-stripped', () => {
    expect(stripImageMetadata(makePng().subarray(0, 40), 'image/png')).toBeNull()
    expect(stripImageMetadata(Buffer.from([0xff, 0xd8, 0xff, 0xe1, 0xff, 0xff]), 'image/jpeg')).toBeNull()
  })
})

describe('planAttachments', () => {
  const img = (id: string, size: number) => ({ id, name: `${id}.png`, kind: 'image' as const, size, text: null })
  const doc = (id: string, text: string | null) => ({ id, name: `${id}.pdf`, kind: 'document' as const, size: 10, text })

  it('keeps every image within the count and bytes, the documents within the characters, and names what it leaves out', () => {
    const p = planAttachments([img('a', 10), img('b', 10), img('c', 100), doc('d', 'x'.repeat(700)), doc('e', 'y'.repeat(700)), doc('f', null)], {
      maxImages: 5,
      maxImageBytes: 50,
      maxTextChars: 850,
    })
    expect(p.images.map((i) => i.id)).toEqual(['a', 'b'])
    expect(p.texts.map((x) => x.item.id)).toEqual(['d'])
    expect(p.left).toEqual(["c.png (image: over this message's image budget)", "e.pdf (over this message's text budget)", 'f.pdf (no readable text)'])
  })

  it('cuts the last document that fits in part, and says so', () => {
    const p = planAttachments([doc('d', 'z'.repeat(2000))], { maxImages: 5, maxImageBytes: 1, maxTextChars: 1000 })
    expect(p.texts[0]!.text).toHaveLength(1000 + '\n[… the rest of d.pdf was left out]'.length)
  })
})

describe('names', () => {
  it('keeps a file name without its path or control characters, and writes Content-Disposition for it', () => {
    expect(cleanName('C:\\Users\\me\\screen "1".png', 'x')).toBe('screen 1.png')
    expect(cleanName('\u0000\u0007', 'image.png')).toBe('image.png')
    expect(contentDisposition('Fehler ü.png')).toBe(`attachment; filename="Fehler _.png"; filename*=UTF-8''Fehler%20%C3%BC.png`)
  })
})
