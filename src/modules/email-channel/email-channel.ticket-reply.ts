import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

/**
 * A ticket's own reply address (issue 52, item 5): the team notice's `Reply-To`, so a member who presses Reply
 * answers into the ticket, not around it. `ticket.<id>.<mac>@INBOUND_EMAIL_DOMAIN`: the ticket's id (base 36) and an
 * HMAC of it under a key derived from ENCRYPTION_KEY (80 bits): it cannot be guessed from a ticket number or id,
 * and it is checked (in constant time) before anything is read. 53 characters before the @ (a local part holds 64).
 */
const PREFIX = 'ticket.'
const MAC_HEX = 20

export const ticketReplyKey = (encryptionKey: string) => createHash('sha256').update(`ticket-reply:${encryptionKey}`).digest()

const mac = (key: Buffer, ticketId: string) => createHmac('sha256', key).update(`ticket-reply:${ticketId.toLowerCase()}`).digest('hex').slice(0, MAC_HEX)

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'

function idToBase36(uuid: string): string | null {
  const hex = uuid.replaceAll('-', '').toLowerCase()
  if (hex.length !== 32 || ![...hex].every((c) => ALPHABET.indexOf(c) >= 0 && ALPHABET.indexOf(c) < 16)) return null
  return BigInt(`0x${hex}`).toString(36)
}

function base36ToId(s: string): string | null {
  if (!s || s.length > 25) return null
  let n = 0n
  for (const c of s) {
    const d = ALPHABET.indexOf(c)
    if (d < 0) return null
    n = n * 36n + BigInt(d)
  }
  if (n >= 1n << 128n) return null
  const hex = n.toString(16).padStart(32, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The ticket's reply address, or null for an id that is not a UUID. */
export function ticketReplyAddress(key: Buffer, ticketId: string, domain: string): string | null {
  const id = idToBase36(ticketId)
  return id ? `${PREFIX}${id}.${mac(key, ticketId)}@${domain.toLowerCase()}` : null
}

/** The ticket an address is the reply address of (its MAC checked), else null. */
export function ticketOfReplyAddress(key: Buffer, address: string, domain: string): string | null {
  const a = address.trim().toLowerCase()
  const at = a.lastIndexOf('@')
  if (at < 0 || a.slice(at + 1) !== domain.toLowerCase()) return null
  const local = a.slice(0, at)
  if (!local.startsWith(PREFIX) || local.length > 64) return null
  const [id36, given, extra] = local.slice(PREFIX.length).split('.')
  if (!id36 || !given || extra !== undefined || given.length !== MAC_HEX) return null
  const id = base36ToId(id36)
  if (!id) return null
  const want = Buffer.from(mac(key, id))
  const got = Buffer.from(given)
  return want.length === got.length && timingSafeEqual(want, got) ? id : null
}

/** Whether an address looks like a ticket's reply address (its checks are ticketOfReplyAddress's). */
export const isTicketReplyAddress = (address: string, domain: string) =>
  address.trim().toLowerCase().startsWith(PREFIX) && address.trim().toLowerCase().endsWith(`@${domain.toLowerCase()}`)

/**
 * The ticket reply addresses a mail names in its recipient headers (To, Cc, Delivered-To, X-Original-To,
 * Envelope-To), read as plain text: at most the first 20 addresses of each, bounded.
 */
export function ticketAddressesIn(headerLines: readonly { key: string; line: string }[], domain: string): string[] {
  const names = new Set(['to', 'cc', 'delivered-to', 'x-original-to', 'envelope-to'])
  const out: string[] = []
  const suffix = `@${domain.toLowerCase()}`
  for (const h of headerLines) {
    if (!names.has(h.key.toLowerCase())) continue
    const line = h.line.slice(0, 4000).toLowerCase()
    let from = 0
    for (let n = 0; n < 20; n++) {
      const i = line.indexOf(PREFIX, from)
      if (i < 0) break
      const end = line.indexOf(suffix, i)
      if (end < 0) break
      const candidate = line.slice(i, end + suffix.length)
      // a plain local part only: letters, digits and dots between the prefix and the domain
      if ([...candidate.slice(0, -suffix.length)].every((c) => c === '.' || ALPHABET.includes(c))) out.push(candidate)
      from = end + suffix.length
    }
  }
  return out
}
