import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { openBytes, sealBytes } from '../../lib/crypto.js'

/**
 * The stored form of a raw mail, made and read in the mail parse worker, never on the event loop (issue 50: sealing a
 * 10 MB mail there held `/health` for seconds under load): `z1.` and the mail deflated, then sealed under the
 * encryption key. A text mail shrinks to a few per cent, so the row written on the event loop (the embedded
 * database runs there) is small too. Rows written before hold `v1.…`: the mail as a latin1 string, encrypted.
 */
const DEFLATED = 'z1.'

/** Far above INBOUND_EMAIL_MAX_BYTES: an inflate never grows past it (the stored form is ours, but a row is data). */
const MAX_RAW_BYTES = 64 * 1024 * 1024

export function sealRaw(hexKey: string, raw: Uint8Array): string {
  return DEFLATED + sealBytes(hexKey, deflateRawSync(raw, { level: 1 }))
}

export function openRaw(hexKey: string, stored: string): Buffer {
  if (stored.startsWith(DEFLATED)) return inflateRawSync(openBytes(hexKey, stored.slice(DEFLATED.length)), { maxOutputLength: MAX_RAW_BYTES })
  return Buffer.from(openBytes(hexKey, stored).toString('utf8'), 'latin1')
}
