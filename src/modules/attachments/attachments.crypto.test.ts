import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createFileCipher } from './attachments.crypto.js'

describe('a file sealed in pieces', () => {
  const cipher = createFileCipher(randomBytes(32).toString('hex'))

  it('is the stored form of the whole: its head, then its pieces, opens to the parts read in order', () => {
    const parts = [randomBytes(10), randomBytes(1000), randomBytes(3), randomBytes(2500)]
    const sealed = cipher.sealPieces(parts, 1024)
    const pieces = [...sealed.pieces]
    // 3513 bytes: three full pieces and the rest
    expect(pieces.map((p) => p.length)).toEqual([1024, 1024, 1024, 441])
    const stored = Buffer.concat([sealed.head(), ...pieces])
    expect(cipher.open(stored)).toEqual(Buffer.concat(parts))
    expect(stored.length).toBe(cipher.seal(Buffer.concat(parts)).length)
  })

  it('has no head before its last piece, and a piece changed does not open', () => {
    const sealed = cipher.sealPieces([randomBytes(3000)], 1024)
    expect(() => sealed.head()).toThrow()
    const pieces = [...sealed.pieces]
    pieces[1]![5] ^= 1
    expect(() => cipher.open(Buffer.concat([sealed.head(), ...pieces]))).toThrow()
  })
})
