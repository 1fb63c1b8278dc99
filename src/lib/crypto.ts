import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex')

export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url')

export const hmacSha256Hex = (key: string, message: string): string => createHmac('sha256', key).update(message).digest('hex')

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a)
  const bb = Buffer.from(b)
  return ab.length === bb.length && timingSafeEqual(ab, bb)
}

/**
 * AES-256-GCM with a random 96-bit nonce. Stored form: `v1.<iv>.<tag>.<ciphertext>` (base64url), so the
 * format can change later without guessing.
 */
export interface Cipher {
  encrypt(plaintext: string): string
  decrypt(stored: string): string
  /**
   * A keyed hash of an e-mail address (HMAC-SHA256 of the lowercased, trimmed address under a key derived
   * from ENCRYPTION_KEY), so an exact address can be looked up without decrypting every row (#39).
   */
  emailHash(address: string): string
}

/** The e-mail lookup key: derived from the encryption key for this one purpose, so neither reveals the other. */
const emailHashKey = (key: Buffer): Buffer => createHmac('sha256', key).update('visitor-email-search/v1').digest()

/** The form an address is hashed in: trimmed, lowercased. */
export const normalizeEmail = (address: string): string => address.trim().toLowerCase()

export function createCipher(hexKey: string): Cipher {
  const key = Buffer.from(hexKey, 'hex')
  if (key.length !== 32) throw new Error('ENCRYPTION_KEY must be 32 bytes of hex')
  const hashKey = emailHashKey(key)
  return {
    emailHash(address) {
      return createHmac('sha256', hashKey).update(normalizeEmail(address)).digest('hex')
    },
    encrypt(plaintext) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      const tag = cipher.getAuthTag()
      return ['v1', iv.toString('base64url'), tag.toString('base64url'), data.toString('base64url')].join('.')
    },
    decrypt(stored) {
      const [version, iv, tag, data] = stored.split('.')
      if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('unknown ciphertext format')
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      try {
        return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8')
      } catch {
        // GCM's "Unsupported state or unable to authenticate data" names no cause: the usual one is another key
        throw new Error(
          'could not decrypt a stored secret: ENCRYPTION_KEY differs from the key it was written with (every instance on one database needs the same ENCRYPTION_KEY)',
        )
      }
    },
  }
}

/**
 * Bytes sealed under a hex key in the cipher's stored form (`v1.<iv>.<tag>.<ciphertext>`, the plaintext taken as
 * bytes, not UTF-8 text): for a thread that holds no Cipher (the mail parse worker seals a raw mail off the event
 * loop, issue 50). `Cipher.decrypt` of a sealed UTF-8 text gives that text back, and `openBytes` reads both.
 */
export function sealBytes(hexKey: string, bytes: Uint8Array): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(hexKey, 'hex'), iv)
  const data = Buffer.concat([cipher.update(bytes), cipher.final()])
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.')
}

/** The bytes of a value sealed by `sealBytes` (or by `Cipher.encrypt`); throws when the key or the value is wrong. */
export function openBytes(hexKey: string, stored: string): Buffer {
  const [version, iv, tag, data] = stored.split('.')
  if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('unknown ciphertext format')
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(hexKey, 'hex'), Buffer.from(iv, 'base64url'))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()])
}

/** Last `n` characters, for hints such as "…a1b2". */
export const lastChars = (value: string, n = 4): string => value.slice(-n)

/** The plaintext of an encrypted value, or null when there is none or it no longer decrypts (rotated key, erased). */
export function decryptOrNull(cipher: Pick<Cipher, 'decrypt'>, enc: string | null | undefined): string | null {
  if (!enc) return null
  try {
    return cipher.decrypt(enc)
  } catch {
    return null
  }
}

/** A fingerprint of the key (HMAC of a constant under it): comparable across instances, reveals nothing of the key. */
export function keyFingerprint(hexKey: string): string {
  return createHmac('sha256', Buffer.from(hexKey, 'hex')).update('encryption-key-fingerprint/v1').digest('hex').slice(0, 32)
}
