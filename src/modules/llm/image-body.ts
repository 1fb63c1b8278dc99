import { randomBytes } from 'node:crypto'

/** An image given as its bytes (a visitor's file), sent as a base64 `data:` URL written straight into the request. */
export interface InlineImage {
  /** image/png, image/jpeg, image/webp or image/gif */
  type: string
  bytes: Uint8Array
}

/**
 * A chat request's JSON body with its inline images written in as base64 (issue 54). A 2 MB screenshot is a 2.7 MB
 * data URL: made as a string when the image was claimed, copied into the 2.7 MB JSON text by the SDK's
 * JSON.stringify and encoded again to UTF-8 bytes by undici, each a fresh 2.7 MB for the collector; in
 * bench:attachments' profile this was about 30 ms of the event loop a turn with an image at load 4-5, the collector's
 * share not counted. Here `body` holds a placeholder (`inlinePlaceholder(i)`) where image i's URL goes: the rest is
 * stringified alone (a few kilobytes) and each image's base64 is written once into the body's buffer. Base64 and
 * the `data:<type>;base64,` prefix need no escaping in JSON.
 */
export function jsonWithImages(body: unknown, images: readonly InlineImage[]): Buffer {
  const text = JSON.stringify(body)
  // the text around the placeholders, in order, and each image's URL: its prefix as JSON text, its base64's length
  const around: string[] = []
  const heads: string[] = []
  let from = 0
  let size = 0
  for (let i = 0; i < images.length; i++) {
    const mark = JSON.stringify(inlinePlaceholder(i))
    const at = text.indexOf(mark, from)
    if (at < 0) throw new Error(`inline image ${i} has no place in the request`)
    around.push(text.slice(from, at))
    from = at + mark.length
    const head = JSON.stringify(`data:${images[i]!.type};base64,`).slice(0, -1)
    heads.push(head)
    size += Buffer.byteLength(head) + Math.ceil(images[i]!.bytes.length / 3) * 4 + 1
  }
  around.push(text.slice(from))
  for (const t of around) size += Buffer.byteLength(t)
  const out = Buffer.allocUnsafe(size)
  let at = out.write(around[0]!, 0)
  for (let i = 0; i < images.length; i++) {
    const { bytes } = images[i]!
    at += out.write(heads[i]!, at)
    at += writeBase64(out, at, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    out[at++] = 0x22
    at += out.write(around[i + 1]!, at)
  }
  if (at !== size) throw new Error(`request body of ${at} bytes, ${size} expected`)
  return out
}

/**
 * Whole in pieces of 48 KB (a multiple of 3 bytes, so the pieces' base64 joins without padding inside): each piece's
 * 64 KB string is an ordinary young one. The whole image's base64 as one string (2.7 MB, which Node keeps outside the
 * JS heap) took 21-23 ms a 2 MB image with its collection, the pieces 5.2-5.5 ms (the same bytes, 200 in a row).
 */
const BASE64_STEP = 3 * 16384
function writeBase64(out: Buffer, at: number, bytes: Buffer): number {
  let n = 0
  for (let o = 0; o < bytes.length; o += BASE64_STEP) n += out.write(bytes.subarray(o, o + BASE64_STEP).toString('base64'), at + n, 'latin1')
  return n
}

/** A placeholder no string of a request holds but ours: this process's random nonce and the image's index. */
const NONCE = randomBytes(16).toString('hex')
export const inlinePlaceholder = (i: number) => `inline-image-${NONCE}-${i}`

/** The data URL of an inline image as text (a serialiser other than jsonWithImages: tests, the fallback). */
export const dataUrl = (i: InlineImage) => `data:${i.type};base64,${Buffer.from(i.bytes.buffer, i.bytes.byteOffset, i.bytes.byteLength).toString('base64')}`
