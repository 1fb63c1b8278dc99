/**
 * Who outgoing mail of the channel can reach, and from whom (issue 50, findings 5, 6 and 8): pure checks of a
 * recipient, of the settings' `reply_from`, and the mailbox a per-sender cap counts. No regular expressions:
 * these meet outside text (a sender's address, a tenant's setting), and a character scan is linear by shape.
 */

/** Longest address SMTP carries (RFC 5321's path limit less its brackets). */
export const MAX_ADDRESS = 254
/** Longest display name we put in a From header. */
export const MAX_DISPLAY_NAME = 100

const NOT_IN_PLAIN = new Set([',', ';', '"', '<', '>', '\\', '(', ')', '[', ']', ':'])

/** A character no header of ours may carry: C0/C1 controls, bidi embeddings and isolates, zero-width and BOM. */
export function hiddenCharacter(c: number): 'control' | 'bidi' | 'zero_width' | null {
  if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return 'control'
  if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c === 0x200e || c === 0x200f || c === 0x061c) return 'bidi'
  if ((c >= 0x200b && c <= 0x200d) || c === 0x2060 || c === 0xfeff || c === 0x00ad) return 'zero_width'
  return null
}

/**
 * One plain address, the only shape we mail: one `@` with something on each side, no list or quoting character, no space or hidden character, at most 254 characters. Anything else (a list
 * inside angle brackets, a quoted local part holding commas) is refused rather than guessed at.
 */
export function isPlainAddress(s: string | null | undefined): s is string {
  if (!s || s.length > MAX_ADDRESS) return false
  const at = s.indexOf('@')
  if (at <= 0 || at !== s.lastIndexOf('@') || at === s.length - 1) return false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c <= 0x20 || NOT_IN_PLAIN.has(s[i]!) || hiddenCharacter(c)) return false
  }
  return true
}

export type ReplyFromProblem = 'not_one_address' | 'list' | 'hidden_character' | 'name_too_long' | 'name_looks_like_address'

/**
 * The settings' `reply_from` ("Acme Support <support@acme.com>" or "support@acme.com") taken apart: a display
 * name and one plain address, or the problem that refuses it. Display names are refused, not cleaned, when they
 * hold a list separator, an `@` (a name that reads as another address), quotes or brackets beyond the outer
 * pair, or a hidden character (bidi overrides turn "moc.lapyap" into "paypal.com" on screen).
 */
export function parseReplyFrom(raw: string): { name: string | null; address: string } | { problem: ReplyFromProblem } {
  const s = raw.trim()
  for (let i = 0; i < s.length; i++) if (hiddenCharacter(s.charCodeAt(i))) return { problem: 'hidden_character' }
  let name: string | null = null
  let address = s
  const open = s.lastIndexOf('<')
  if (s.endsWith('>') && open >= 0) {
    address = s.slice(open + 1, -1).trim()
    name = s.slice(0, open).trim()
    if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) name = name.slice(1, -1).trim()
    if (!name) name = null
  }
  if (name !== null) {
    if (name.length > MAX_DISPLAY_NAME) return { problem: 'name_too_long' }
    if (name.includes(',') || name.includes(';')) return { problem: 'list' }
    if (name.includes('@')) return { problem: 'name_looks_like_address' }
    for (const c of '<>"\\') if (name.includes(c)) return { problem: 'not_one_address' }
  }
  if (address.includes(',') || address.includes(';')) return { problem: 'list' }
  if (!isPlainAddress(address)) return { problem: 'not_one_address' }
  return { name, address: address.toLowerCase() }
}

/** The words a 422 says for each problem. */
export const REPLY_FROM_PROBLEMS: Record<ReplyFromProblem, string> = {
  not_one_address: 'Not one plain e-mail address (e.g. "Acme Support <support@acme.com>")',
  list: 'One address only: a list (a comma or semicolon) is refused',
  hidden_character: 'The sender holds a control, bidirectional-override or zero-width character',
  name_too_long: `The display name is over ${MAX_DISPLAY_NAME} characters`,
  name_looks_like_address: 'The display name may not contain "@" (it would read as another address)',
}

/** Domains whose mailboxes ignore dots in the local part (and where googlemail.com is gmail.com). */
const DOTLESS: Record<string, string> = { 'gmail.com': 'gmail.com', 'googlemail.com': 'gmail.com' }

/**
 * The mailbox an address delivers to, as far as the per-sender cap needs it: lower-cased, a `+tag` dropped
 * (every large provider delivers `a+x@` to `a@`), and for Gmail the dots of the local part ignored. A
 * provider's other subaddressing (Yahoo's `-`) is not folded: such a sender still meets the bot's own cap.
 */
export function mailboxOf(address: string): string {
  const a = address.trim().toLowerCase()
  const at = a.lastIndexOf('@')
  if (at <= 0) return a
  let local = a.slice(0, at)
  let domain = a.slice(at + 1)
  const plus = local.indexOf('+')
  if (plus > 0) local = local.slice(0, plus)
  const dotless = DOTLESS[domain]
  if (dotless) {
    local = local.replaceAll('.', '')
    domain = dotless
  }
  return `${local}@${domain}`
}

/** The address part of EMAIL_FROM ("Support Bot <no-reply@x>" or "no-reply@x"), for the SMTP envelope. */
export function addressOf(from: string): string {
  const s = from.trim()
  const open = s.lastIndexOf('<')
  return (s.endsWith('>') && open >= 0 ? s.slice(open + 1, -1) : s).trim()
}

/** The display name of EMAIL_FROM, or null. */
export function nameOf(from: string): string | null {
  const s = from.trim()
  const open = s.lastIndexOf('<')
  if (!s.endsWith('>') || open < 0) return null
  let name = s.slice(0, open).trim()
  if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) name = name.slice(1, -1).trim()
  return name || null
}
