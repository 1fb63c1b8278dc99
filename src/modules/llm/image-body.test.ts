import { randomBytes } from 'node:crypto'
import { expect, it } from 'vitest'
import { dataUrl, inlinePlaceholder, jsonWithImages, type InlineImage } from './image-body.js'

/** A request body as the client builds it (openai-client.ts wireMessage): text, then image parts, by placeholder or URL. */
const request = (urls: string[], text = 'What does this error mean?') => ({
  model: 'm',
  messages: [
    { role: 'system', content: 'Answer from the sources.\n"quoted" \\ back-slashed, ünïcödé 😀, \u0001' },
    { role: 'user', content: [{ type: 'text', text }, ...urls.map((url) => ({ type: 'image_url', image_url: { url } }))] },
  ],
  stream: true,
})
const png = (n: number): InlineImage => ({ type: 'image/png', bytes: randomBytes(n) })
/** What JSON.stringify gives for the same request with each image's data URL in its place. */
const expected = (images: InlineImage[], urls: (string | number)[], text?: string) =>
  Buffer.from(
    JSON.stringify(
      request(
        urls.map((u) => (typeof u === 'number' ? dataUrl(images[u]!) : u)),
        text,
      ),
    ),
  )

it('writes the bytes JSON.stringify gives with every image data URL in its place, in order', () => {
  // sizes that leave 0, 1 and 2 bytes over a multiple of 3 (base64 padding), one as a view into a larger buffer
  const big = randomBytes(300_002)
  // and one exactly two of the writer's 48 KB pieces
  const images = [png(2_000_001), { type: 'image/jpeg', bytes: big.subarray(1, 300_001) }, png(0), png(1), png(2 * 3 * 16384)]
  const urls = ['https://example.com/a.png', 0, 1, 2, 3, 4]
  const body = request(urls.map((u) => (typeof u === 'number' ? inlinePlaceholder(u) : u)))
  expect(jsonWithImages(body, images).equals(expected(images, urls))).toBe(true)
})

it('is not misled by a visitor who writes what looks like a placeholder', () => {
  const images = [png(5000)]
  const text = `inline-image-0 "inline-image-00000000000000000000000000000000-0" ${JSON.stringify(inlinePlaceholder(1))}`
  const body = request([inlinePlaceholder(0)], text)
  expect(jsonWithImages(body, images).equals(expected(images, [0], text))).toBe(true)
})

it('refuses a body without the place of one of its images', () => {
  expect(() => jsonWithImages(request([]), [png(10)])).toThrow(/no place/)
})
