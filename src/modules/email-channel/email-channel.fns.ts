import { createHash, randomBytes } from 'node:crypto'
import { addressOf, mailboxOf, nameOf, parseReplyFrom } from '../mailer/address.fns.js'
import { message } from '../shared/messages/catalogue.js'
import { GMAIL_FORWARDING_SENDER, isAutoReplySubject, messageIdOf, plainAddress } from './email-channel.inbound.fns.js'
import { trimBothOf } from '../../lib/trim-run.fns.js'

/** One header line as mailparser gives it (`headerLines`): the lower-cased name and the whole raw line. */
export interface HeaderLine {
  key: string
  line: string
}

/** The value of the first header `name` (unfolded, trimmed), or null. */
export function headerValue(lines: HeaderLine[], name: string): string | null {
  const h = lines.find((l) => l.key === name)
  if (!h) return null
  const colon = h.line.indexOf(':')
  return h.line
    .slice(colon + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim()
}

export type LoopReason =
  | 'auto_submitted'
  | 'auto_reply_header'
  | 'auto_reply_subject'
  | 'auto_response_suppress'
  | 'precedence'
  | 'mailing_list'
  | 'list_unsubscribe'
  | 'feedback_id'
  | 'delivery_report'
  | 'x_loop'
  | 'empty_return_path'
  | 'daemon_sender'
  | 'forwarding_confirmation'
  | 'own_address'
  | 'bot_address'
  | 'no_sender'

const DAEMONS = new Set([
  'mailer-daemon',
  'postmaster',
  'no-reply',
  'noreply',
  'no_reply',
  'do-not-reply',
  'do_not_reply',
  'donotreply',
  'bounce',
  'bounces',
  'notifications',
  'notification',
  'notify',
])

/**
 * Why a message must never be answered, from its headers alone (run before any body parse): RFC 3834 and what
 * Chatwoot, Zammad and FreeScout learned, and the automatic mail that got past it (issue 50, finding 15): an
 * out-of-office by its subject, `X-Auto-Response-Suppress: All`, a bulk sender's `Feedback-ID` or `List-Unsubscribe`,
 * a `multipart/report` delivery notice. `Auto-Submitted: no` is a person's mail (RFC 3834), unlike FreeScout's reading.
 */
export function headerLoopReason(lines: HeaderLine[], subject?: string | null): LoopReason | null {
  const auto = headerValue(lines, 'auto-submitted')
  if (auto !== null && auto.split(';')[0]!.trim().toLowerCase() !== 'no') return 'auto_submitted'
  if (headerValue(lines, 'x-autoreply') !== null || headerValue(lines, 'x-autorespond') !== null) return 'auto_reply_header'
  const precedence = (headerValue(lines, 'precedence') ?? headerValue(lines, 'x-precedence') ?? '').toLowerCase()
  if (/^(?:bulk|junk|list|auto_reply)\b/.test(precedence)) return 'precedence'
  if (headerValue(lines, 'list-id') !== null) return 'mailing_list'
  if (headerValue(lines, 'list-unsubscribe') !== null) return 'list_unsubscribe'
  if (headerValue(lines, 'feedback-id') !== null) return 'feedback_id'
  if (
    (headerValue(lines, 'x-auto-response-suppress') ?? '')
      .toLowerCase()
      .split(/[\s,]+/)
      .includes('all')
  )
    return 'auto_response_suppress'
  if ((headerValue(lines, 'content-type') ?? '').toLowerCase().startsWith('multipart/report')) return 'delivery_report'
  if (headerValue(lines, 'x-loop') !== null) return 'x_loop'
  const returnPath = headerValue(lines, 'return-path')
  if (returnPath !== null && returnPath.replace(/\s/g, '') === '<>') return 'empty_return_path'
  if (isAutoReplySubject(subject ?? headerValue(lines, 'subject'))) return 'auto_reply_subject'
  return null
}

/**
 * Why a message must never be answered: its headers (headerLoopReason), then its sender: none (or not one plain
 * address), a daemon or a no-reply/notifications mailbox, Gmail's forwarding confirmation, one of our own
 * addresses, or another bot's inbound address (`inboundDomain`: two bots must not answer each other).
 */
export function loopReason(
  lines: HeaderLine[],
  sender: string | null,
  own: readonly string[],
  o: { subject?: string | null; inboundDomain?: string } = {},
): LoopReason | null {
  const byHeader = headerLoopReason(lines, o.subject)
  if (byHeader) return byHeader
  if (!sender) return 'no_sender'
  const address = sender.toLowerCase()
  if (address === GMAIL_FORWARDING_SENDER) return 'forwarding_confirmation'
  const [localPart, domain] = address.split('@') as [string, string | undefined]
  const local = localPart.split('+')[0]!
  if (DAEMONS.has(local)) return 'daemon_sender'
  if (own.some((o) => o.toLowerCase() === address)) return 'own_address'
  if (o.inboundDomain && domain === o.inboundDomain.toLowerCase()) return 'bot_address'
  return null
}

/**
 * The bare address of "Name <a@b>" or "a@b", lower-cased, when it is one plain address (plainAddress); null
 * otherwise. No pattern: the part between the last `<` and the `>` after it, else the whole value.
 */
export function bareAddress(s: string | null | undefined): string | null {
  if (!s || s.length > 1000) return null
  const open = s.lastIndexOf('<')
  if (open < 0) return plainAddress(s)
  const close = s.indexOf('>', open)
  return close < 0 ? null : plainAddress(s.slice(open + 1, close))
}

/** An inbound address's local part: readable from the bot's name, with random letters so it cannot be guessed. */
export function newLocalPart(botName: string): string {
  // the dashes trimmed by a scan: /^-+|-+$/g is quadratic on a run of them (issue 50)
  const slug =
    trimBothOf(
      botName
        .toLowerCase()
        .normalize('NFKD')
        .replace(/[^a-z0-9]+/g, '-'),
      '-',
    ).slice(0, 24) || 'bot'
  return `${slug}-${randomBytes(4).toString('hex')}`
}

export const newToken = (): string => randomBytes(24).toString('base64url')
export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex')
/** The per-sender cap counts by a keyed hash, so the count needs no decryption. */
export const senderHash = (tenantKey: string, address: string): string => createHash('sha256').update(`${tenantKey}\n${address.toLowerCase()}`).digest('hex')
/** The per-sender cap's key: the normalised mailbox (mailboxOf), so `+tags` and Gmail's dots are one sender. */
export const mailboxHash = (tenantKey: string, address: string): string =>
  createHash('sha256')
    .update(`${tenantKey}\nmailbox\n${mailboxOf(address)}`)
    .digest('hex')

/**
 * The From of the channel's mails and whether reply_from is confirmed: reply_from itself once its address is
 * the confirmed one; else EMAIL_FROM's address under reply_from's display name (EMAIL_FROM's own name when
 * reply_from has none); EMAIL_FROM when reply_from is unset (or, stored before issue 50, not one address).
 */
export function senderOf(
  row: { reply_from: string | null; reply_from_verified: string | null },
  emailFrom: string,
): { from: { name: string; address: string }; verified: boolean } {
  const parsed = row.reply_from ? parseReplyFrom(row.reply_from) : null
  const ours = { name: nameOf(emailFrom) ?? '', address: addressOf(emailFrom) }
  if (!parsed || 'problem' in parsed) return { from: ours, verified: false }
  if (parsed.address === row.reply_from_verified) return { from: { name: parsed.name ?? '', address: parsed.address }, verified: true }
  return { from: { name: parsed.name ?? ours.name, address: ours.address }, verified: false }
}

/** A From as a header shows it, for the settings screen. */
export const showSender = (f: { name: string; address: string }): string => (f.name ? `"${f.name}" <${f.address}>` : f.address)

/** `Re: <subject>`, once (not `Re: Re:`); an empty subject gets a neutral one. */
export function replySubject(subject: string | null | undefined): string {
  const s = (subject ?? '').replace(/\s+/g, ' ').trim().slice(0, 300)
  if (!s) return 'Re: your message'
  return /^(re|aw|sv|antw)\s*(\[\d+\])?\s*:/i.test(s) ? s : `Re: ${s}`
}

/** References of a reply: the thread's earlier ids (at most 20 kept, the first and the latest), then the one answered. */
export function replyReferences(references: readonly string[], inReplyTo: string): string[] {
  const all = [...references.filter((r) => r !== inReplyTo), inReplyTo]
  return all.length > 20 ? [all[0]!, ...all.slice(-19)] : all
}

/** Message-ids named by a mail's In-Reply-To and References, newest first, bounded; only well-formed ids (messageIdOf). */
export function threadIds(inReplyTo: string | null | undefined, references: string | string[] | null | undefined): string[] {
  const refs = (Array.isArray(references) ? references : references ? references.split(/\s+/) : []).slice(-200)
  const ids = [...(inReplyTo ? inReplyTo.split(/\s+/).slice(0, 20) : []), ...refs.reverse()].map(messageIdOf).filter((s): s is string => s !== null)
  return [...new Set(ids)].slice(0, 50)
}

export interface Cited {
  title: string
  /** null: an uploaded document without a page, named by its title (issue 52, item 12) */
  url: string | null
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/**
 * A reply's text and HTML parts: the answer, the cited pages as numbered links under it, the signature, and
 * (for the bot's own answers) the footer that says so.
 */
export function renderReply(input: {
  text: string
  sources: Cited[]
  signature: string | null
  footer?: string | null
  /** the session's language: the fixed texts (the sources heading) come from the catalogue in it; English without one */
  lang?: string | null
}): { text: string; html: string } {
  const heading = message(input.lang ?? 'en', 'email.sources_heading')
  const seen = new Set<string>()
  const sources = input.sources
    .filter((s) => (s.url === null ? s.title.trim() !== '' : /^https?:\/\//i.test(s.url)))
    .filter((s) => {
      const k = s.url ?? `title:${s.title}`
      return seen.has(k) ? false : (seen.add(k), true)
    })
    .slice(0, 10)
  const parts = [input.text.trim()]
  if (sources.length) parts.push([heading, ...sources.map((s, i) => `[${i + 1}] ${s.title}${s.url ? `: ${s.url}` : ''}`)].join('\n'))
  // the footer before the signature: mail clients fold away what follows "-- " (issue 52, item 12)
  if (input.footer) parts.push(input.footer)
  if (input.signature?.trim()) parts.push(`-- \n${input.signature.trim()}`)
  const paragraphs = (s: string) =>
    s
      .split(/\n{2,}/)
      .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
      .join('')
  let html = paragraphs(input.text.trim())
  if (sources.length) {
    const items = sources.map((s) => `<li>${s.url ? `<a href="${escapeHtml(s.url)}">${escapeHtml(s.title)}</a>` : escapeHtml(s.title)}</li>`).join('')
    html += `<p>${escapeHtml(heading)}</p><ol>${items}</ol>`
  }
  if (input.footer) html += `<p style="color:#666;font-size:smaller">${escapeHtml(input.footer)}</p>`
  if (input.signature?.trim()) html += `<p>-- <br>${escapeHtml(input.signature.trim()).replace(/\n/g, '<br>')}</p>`
  return { text: parts.join('\n\n'), html: `<!doctype html><html><body>${html}</body></html>` }
}

/** Our Message-ID for the reply to one inbound message: deterministic, so a retried job sends the same id. */
export const ourMessageId = (kind: string, rowId: string, domain: string): string => `<${kind}.${rowId}@${domain}>`
