import { crc32, deflateSync } from 'node:zlib'
import type { Api } from './http.js'
import { reads } from './http.js'

/** A PNG chunk: length, type, data, CRC over type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(data.length)
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(td) >>> 0)
  return Buffer.concat([len, td, crc])
}

/**
 * A real PNG of `width` x `height` grey pixels; `meta` adds an eXIf chunk and a tEXt chunk carrying it (GPS as a
 * camera would write it); `declared` writes another size into the header than the pixels have (a bomb's header).
 */
export function makePng(opts: { width?: number; height?: number; meta?: string; declared?: [number, number]; padBytes?: number } = {}): Buffer {
  const w = opts.width ?? 4
  const h = opts.height ?? 4
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(opts.declared?.[0] ?? w, 0)
  ihdr.writeUInt32BE(opts.declared?.[1] ?? h, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 0 // greyscale
  const raw = Buffer.alloc((w + 1) * h, 0x80)
  for (let y = 0; y < h; y++) raw[y * (w + 1)] = 0
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr)]
  if (opts.meta) parts.push(chunk('eXIf', Buffer.from(`MM\0*${opts.meta}`)), chunk('tEXt', Buffer.from(`Comment\0${opts.meta}`)))
  parts.push(chunk('IDAT', deflateSync(raw)))
  // a large image's bytes without a large image's pixels: a private ancillary chunk readers skip
  if (opts.padBytes) parts.push(chunk('prVt', Buffer.alloc(opts.padBytes, 7)))
  parts.push(chunk('IEND', Buffer.alloc(0)))
  return Buffer.concat(parts)
}

/** A JPEG's structure (SOI, APP0 JFIF, APP1 Exif with `meta`, a comment, SOF0 of the size, SOS, scan data, EOI); never decoded here. */
export function makeJpeg(meta: string, width = 640, height = 480): Buffer {
  const seg = (marker: number, data: Buffer) => {
    const h = Buffer.alloc(4)
    h[0] = 0xff
    h[1] = marker
    h.writeUInt16BE(data.length + 2, 2)
    return Buffer.concat([h, data])
  }
  const sof = Buffer.alloc(15)
  sof[0] = 8
  sof.writeUInt16BE(height, 1)
  sof.writeUInt16BE(width, 3)
  sof[5] = 3
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    seg(0xe0, Buffer.from('JFIF\0\x01\x01\0\0\x01\0\x01\0\0', 'latin1')),
    seg(0xe1, Buffer.from(`Exif\0\0${meta}`, 'latin1')),
    seg(0xfe, Buffer.from(`comment ${meta}`, 'latin1')),
    seg(0xc0, sof),
    seg(0xda, Buffer.from([3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3f, 0])),
    Buffer.from([0x12, 0x34, 0x56, 0x78, 0xff, 0xd9]),
  ])
}

/** POST /widget/attachments with one file. */
export async function uploadAttachment(api: Api, botId: string, sessionId: string, bytes: Uint8Array, name: string, type = 'application/octet-stream') {
  const form = new FormData()
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), name)
  return api.post(`/widget/attachments?bot_id=${botId}&session_id=${sessionId}`, form)
}

/** A new widget session of a bot: its id. */
export async function widgetSession(api: Api, botId: string): Promise<string> {
  const r = await api.post('/widget/session/init', { bot_id: botId })
  if (r.status !== 200) throw new Error(`session init failed: ${r.status} ${r.text}`)
  return r.body.session_id
}

/** POST /widget/chat, read to its end: the frames (or the plain error). */
export async function widgetChat(api: Api, botId: string, sessionId: string, body: Record<string, unknown>) {
  const res = await fetch(`${api.base}/widget/chat?bot_id=${botId}&session_id=${sessionId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': api.ip },
    body: JSON.stringify(body),
  })
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return { status: res.status, frames: [], json: await res.json() }
  let raw = ''
  const decoder = new TextDecoder()
  for await (const part of reads(res.body!)) raw += decoder.decode(part, { stream: true })
  const frames = raw
    .split('\n\n')
    .filter((b) => b.startsWith('data: '))
    .map((b) => JSON.parse(b.slice(6)))
  return { status: res.status, frames, json: null }
}
