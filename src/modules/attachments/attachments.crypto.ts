import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'

/**
 * A file's bytes encrypted at rest like the rest of a visitor's data (AES-256-GCM), as bytes rather than the
 * Cipher's base64 text (a third smaller, no 10 MB string). The key is derived from ENCRYPTION_KEY for this one
 * purpose. Stored form: version (1) | iv (12) | tag (16) | ciphertext.
 */
export interface FileCipher {
  seal(plain: Uint8Array): Buffer
  /**
   * The same stored form in pieces, without a copy of the whole file: the ciphertext of `parts` (read in order) in
   * pieces of `pieceBytes`, then `head()` (version, iv, tag: known once the last piece is out) to store before them.
   */
  sealPieces(parts: readonly Uint8Array[], pieceBytes: number): { pieces: Iterable<Buffer>; head(): Buffer }
  open(stored: Uint8Array): Buffer
}

const VERSION = 1

export function createFileCipher(hexKey: string): FileCipher {
  const key = createHmac('sha256', Buffer.from(hexKey, 'hex')).update('attachments/v1').digest()
  return {
    seal(plain) {
      const iv = randomBytes(12)
      const c = createCipheriv('aes-256-gcm', key, iv)
      const data = Buffer.concat([c.update(plain), c.final()])
      return Buffer.concat([Buffer.from([VERSION]), iv, c.getAuthTag(), data])
    },
    sealPieces(parts, pieceBytes) {
      const iv = randomBytes(12)
      const c = createCipheriv('aes-256-gcm', key, iv)
      let done = false
      function* pieces(): Generator<Buffer> {
        let held: Buffer[] = []
        let n = 0
        for (const part of parts) {
          for (let o = 0; o < part.length; ) {
            const take = Math.min(pieceBytes - n, part.length - o)
            held.push(c.update(part.subarray(o, o + take)))
            n += take
            o += take
            if (n === pieceBytes) {
              yield Buffer.concat(held)
              held = []
              n = 0
            }
          }
        }
        const last = c.final()
        if (n || last.length) yield Buffer.concat([...held, last])
        done = true
      }
      return {
        pieces: pieces(),
        head() {
          if (!done) throw new Error('the pieces are not all sealed yet')
          return Buffer.concat([Buffer.from([VERSION]), iv, c.getAuthTag()])
        },
      }
    },
    open(stored) {
      const b = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength)
      if (b[0] !== VERSION || b.length < 29) throw new Error('unknown attachment format')
      const d = createDecipheriv('aes-256-gcm', key, b.subarray(1, 13))
      d.setAuthTag(b.subarray(13, 29))
      return Buffer.concat([d.update(b.subarray(29)), d.final()])
    },
  }
}
