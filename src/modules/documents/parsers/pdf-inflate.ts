import { constants, createInflate, inflateSync } from 'node:zlib'
import { ParseFailure } from './errors.js'

/**
 * A PDF's Flate streams are inflated here, before PDF.js sees the file, with a running total that stops
 * at `maxBytes`: a 1.5 MB file whose content streams inflate to 480 MB otherwise holds a parser for most
 * of a minute and adds hundreds of MB per parse. Output is counted and dropped (memory stays at one
 * 64 KB chunk, or one small stream), so the check costs about as much as inflating `maxBytes` once.
 *
 * Images are not read for text, but a stream's dictionary is the attacker's to write, so an image's
 * stream is inflated too and only what exceeds its declared size (width x height x 8 bytes) counts.
 */
export const BOMB_MESSAGE = 'The PDF expands to too much data (possible decompression bomb)'

const SYNC_INPUT_MAX = 64 * 1024
const CHUNK = 64 * 1024
const DICT_LOOKBACK = 4096

export async function checkPdfInflation(bytes: Uint8Array, maxBytes: number): Promise<{ inflatedBytes: number; streams: number }> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let total = 0
  let streams = 0
  let pos = 0
  for (;;) {
    const at = buf.indexOf('stream', pos, 'latin1')
    if (at < 0) break
    pos = at + 6
    if (at >= 3 && buf.toString('latin1', at - 3, at) === 'end') continue
    let dataStart = at + 6
    if (buf[dataStart] === 0x0d) dataStart++
    if (buf[dataStart] !== 0x0a && buf[dataStart - 1] !== 0x0d) continue
    if (buf[dataStart] === 0x0a) dataStart++
    const head = buf.toString('latin1', Math.max(0, at - DICT_LOOKBACK), at)
    const dict = head.slice(head.lastIndexOf(' obj') + 1)
    const filters = filterNames(dict)
    let flateLayers = 0
    while (flateLayers < filters.length && (filters[flateLayers] === 'FlateDecode' || filters[flateLayers] === 'Fl')) flateLayers++
    if (flateLayers === 0) continue
    let end = buf.indexOf('endstream', dataStart, 'latin1')
    if (end < 0) end = buf.length
    pos = end
    streams++
    const free = declaredImageBytes(dict)
    const limit = free + (maxBytes - total)
    let input: Buffer = buf.subarray(dataStart, end)
    let size = 0
    for (let layer = 1; layer <= flateLayers; layer++) {
      const last = layer === flateLayers
      const r = await inflateCounted(input, limit, !last)
      size = r.size
      if (size > limit) throw new ParseFailure(BOMB_MESSAGE)
      if (!last) input = r.output!
    }
    total += Math.max(0, size - free)
    if (total > maxBytes) throw new ParseFailure(BOMB_MESSAGE)
  }
  return { inflatedBytes: total, streams }
}

/** `/Filter /FlateDecode` or `/Filter [/FlateDecode /DCTDecode]`, as a list of names. */
function filterNames(dict: string): string[] {
  const m = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dict)
  if (!m) return []
  return [...m[1]!.matchAll(/\/([A-Za-z0-9]+)/g)].map((x) => x[1]!)
}

function declaredImageBytes(dict: string): number {
  if (!/\/Subtype\s*\/Image\b/.test(dict)) return 0
  const w = Number(/\/Width\s+(\d+)/.exec(dict)?.[1] ?? 0)
  const h = Number(/\/Height\s+(\d+)/.exec(dict)?.[1] ?? 0)
  // 8 bytes a pixel covers 16-bit CMYK; absurd dimensions get no allowance beyond the cap itself
  return Number.isSafeInteger(w * h) && w * h <= 100_000_000 ? w * h * 8 + 65536 : 0
}

/**
 * Inflated size, up to just past `limit`. A truncated or corrupt stream counts what it yields before the
 * damage, as PDF.js would read it. The output is kept only when another Flate layer follows.
 */
async function inflateCounted(input: Buffer, limit: number, keep: boolean): Promise<{ size: number; output?: Buffer }> {
  if (input.length <= SYNC_INPUT_MAX) {
    // 64 KB of deflate inflates to at most ~66 MB, so this allocation is bounded
    try {
      const out = inflateSync(input, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: Math.max(1, Math.min(limit + 1, 2 ** 31 - 1)) })
      return { size: out.length, output: keep ? out : undefined }
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return { size: limit + 1 }
      // corrupt from the start: fall through to the streaming reader, which counts what comes out before the damage
    }
  }
  return new Promise((resolve) => {
    const inflate = createInflate({ finishFlush: constants.Z_SYNC_FLUSH, chunkSize: CHUNK })
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const finish = () => {
      if (done) return
      done = true
      resolve({ size, output: keep && size <= limit ? Buffer.concat(chunks, size) : undefined })
    }
    inflate.on('data', (c: Buffer) => {
      size += c.length
      if (keep) chunks.push(c)
      if (size > limit) {
        inflate.destroy()
        finish()
      }
    })
    inflate.on('end', finish)
    inflate.on('close', finish)
    inflate.on('error', finish)
    inflate.end(input)
  })
}
