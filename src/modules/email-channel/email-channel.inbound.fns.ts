import { wellFormed } from '../../http/input.js'

/*
 * Inbound mail's pure steps, each linear in its input or run on a bounded slice of it (issue 50): a hostile
 * mail must cost at most milliseconds here, whatever its shape. No pattern in this file backtracks.
 */

/** The most of a body the reply cutter reads: a reply's own text is at its top (findings 1 and 2). */
export const MAX_REPLY_SCAN = 20_000
/** A longer line is never a quote header: the hostile line was 12 KB of ' on at'. */
const MAX_QUOTE_HEADER_LINE = 500
/** The header block read before any body parse (loop guard, Message-ID, channel_disabled). */
export const MAX_HEADER_BYTES = 64 * 1024
/** RFC 5321's longest path, and the bound of one address's parts. */
const MAX_ADDRESS = 254

/**
 * The one address of a sender, lower-cased, or null: exactly one `@`, none of `, ; " < > \` nor any space or
 * control character, at most 254 characters (finding 5). A list, a quoted local part holding commas, a group:
 * null, so the bot never answers a list of strangers.
 */
export function plainAddress(s: string | null | undefined): string | null {
  if (!s) return null
  const a = s.trim()
  if (a.length < 3 || a.length > MAX_ADDRESS) return null
  let at = -1
  for (let i = 0; i < a.length; i++) {
    const c = a.charCodeAt(i)
    // controls, space, DEL, and the separators and quotes that make a list or a quoted local part
    if (c <= 0x20 || c === 0x7f || c === 0x2c || c === 0x3b || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x5c) return null
    if (c === 0x40) {
      if (at >= 0) return null
      at = i
    }
  }
  if (at <= 0 || at === a.length - 1) return null
  return a.toLowerCase()
}

/**
 * A message id as RFC 5322 writes one, `<local@domain>`, with nothing else: a sender's junk (`<m5@x> Bcc: e@x>`)
 * never travels into our In-Reply-To or References (finding 17). Null for anything else.
 */
export function messageIdOf(s: string | null | undefined): string | null {
  if (!s) return null
  const t = s.trim()
  return t.length <= 500 && /^<[^<>\s@]{1,250}@[^<>\s@]{1,250}>$/.test(t) ? t : null
}

/**
 * Text as the database can hold it: NUL removed, lone surrogates as U+FFFD (finding 9; the JSON routes do the
 * same with http/input.ts). A NUL in a subject or a body made the insert or the turn fail for ever.
 */
export const storable = (s: string): string => wellFormed(s.includes('\u0000') ? s.replaceAll('\u0000', '') : s)

/** A raw header line as mailparser gives it: the lower-cased name and the whole (folded) line. */
export interface RawHeaderLine {
  key: string
  line: string
}

/**
 * The header lines of a raw message, read from its first 64 KB only (before any body parse): the lines up to
 * the first empty one, folded lines joined, at most 500 headers. Never a copy of the body.
 */
export function readHeaders(raw: Buffer): RawHeaderLine[] {
  const head = raw.subarray(0, Math.min(raw.length, MAX_HEADER_BYTES))
  const crlf = head.indexOf('\r\n\r\n')
  const lf = head.indexOf('\n\n')
  const ends = [crlf, lf].filter((i) => i >= 0)
  const block = head.subarray(0, ends.length ? Math.min(...ends) : head.length).toString('utf8')
  const out: RawHeaderLine[] = []
  for (const l of block.split('\n')) {
    const line = l.endsWith('\r') ? l.slice(0, -1) : l
    if ((line.startsWith(' ') || line.startsWith('\t')) && out.length) {
      out[out.length - 1]!.line += `\r\n${line}`
      continue
    }
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    if (out.length >= 500) break
    out.push({ key: line.slice(0, colon).trim().toLowerCase(), line })
  }
  return out
}

const QUOTE_LEADS = ['on ', 'am ', 'le ', 'el ', 'op ', 'il ', 'den ', 'em ']
const QUOTE_VERBS = ['wrote', 'schrieb', 'a écrit', 'escribió', 'schreef', 'scrisse', 'skrev', 'escreveu']
const OUTLOOK_FROM = ['from:', 'von:', 'de:']
const OUTLOOK_SENT = ['sent:', 'gesendet:', 'envoyé :', 'envoyé:', 'enviado:']
const MOBILE_SIGNATURES = ['sent from my ', 'get outlook for ', 'von meinem ', 'envoyé de mon ']

const hasDigit = (s: string) => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0x30 && c <= 0x39) return true
  }
  return false
}

/**
 * "On <date>, <name> wrote:" and its translations (finding 16): a lead word, a verb, a colon at the end, and a
 * date or an address. "On your remote host you can run:" is the reply itself and stays.
 */
export function isQuoteHeader(line: string): boolean {
  const s = line.trim().toLowerCase()
  if (!s.endsWith(':') || s.length > 2 * MAX_QUOTE_HEADER_LINE) return false
  if (!QUOTE_LEADS.some((l) => s.startsWith(l))) return false
  if (!QUOTE_VERBS.some((v) => s.includes(v))) return false
  return s.includes('@') || hasDigit(s)
}

const isForwardMarker = (t: string) => {
  const s = t.toLowerCase()
  return (s.startsWith('-----') && s.includes('forwarded message')) || s === 'begin forwarded message:'
}
const isOriginalMessage = (t: string) => t.startsWith('--') && t.endsWith('--') && t.toLowerCase().includes('original message')
const isUnderscoreRule = (t: string) => t.length >= 20 && t.replaceAll('_', '') === ''

/** Where the quoted earlier mail or the signature begins (an index into `lines`), or lines.length. */
function quoteStart(lines: string[]): number {
  const n = lines.length
  // quotedFrom[i]: every line from i on is blank or quoted ('>'), so a '>' line there starts the quoted tail
  const quotedFrom: boolean[] = new Array(n + 1)
  quotedFrom[n] = true
  for (let i = n - 1; i >= 0; i--) {
    const t = lines[i]!.trimStart()
    quotedFrom[i] = quotedFrom[i + 1]! && (t === '' || t.startsWith('>'))
  }
  for (let i = 0; i < n; i++) {
    const line = lines[i]!
    const t = line.trim()
    // a forwarded message is the question: nothing below it is cut
    if (isForwardMarker(t)) return n
    if (line === '-- ' || line === '--') return i
    if (t.startsWith('>') && quotedFrom[i]) return i
    if (line.length > MAX_QUOTE_HEADER_LINE) continue
    if (isOriginalMessage(t)) return i
    if (isQuoteHeader(t)) return i
    // a header wrapped over two lines: "On Mon, 23 Nov 2026 at 10:05, Acme Support\n<support@acme.test> wrote:"
    const next = lines[i + 1]
    if (next !== undefined && next.length <= MAX_QUOTE_HEADER_LINE && !t.endsWith(':') && isQuoteHeader(`${t} ${next.trim()}`)) return i
    // Outlook's block: "From: ..." with "Sent: ..." within the next lines (a forward's "Date:" is not one)
    const lower = t.toLowerCase()
    if (OUTLOOK_FROM.some((f) => lower.startsWith(f))) {
      for (let j = i + 1; j < Math.min(n, i + 5); j++) {
        const l = lines[j]!.trim().toLowerCase()
        if (lines[j]!.length <= MAX_QUOTE_HEADER_LINE && OUTLOOK_SENT.some((s) => l.startsWith(s))) {
          return i > 0 && isUnderscoreRule(lines[i - 1]!.trim()) ? i - 1 : i
        }
      }
    }
  }
  return n
}

/** Runs of blank lines as one blank line. */
function collapseBlank(lines: string[]): string[] {
  const out: string[] = []
  for (const l of lines) {
    const blank = l.trim() === ''
    if (blank && (out.length === 0 || out[out.length - 1] === '')) continue
    out.push(blank ? '' : l)
  }
  return out
}

/**
 * The reply's own text, read from the first 20 KB of the body only: the quoted earlier mail ("On ... wrote:",
 * Outlook's "From:/Sent:" block, "-----Original Message-----", a quoted '>' tail) and the signature ("-- ",
 * "Sent from my iPhone") cut off. A forwarded message keeps its forwarded part, which is the question. When the
 * cut leaves nothing, the whole (bounded) text is kept. Linear: each line is looked at a bounded number of times.
 */
export function visibleText(text: string): string {
  const lines = text.slice(0, MAX_REPLY_SCAN).split('\n')
  for (let i = 0; i < lines.length; i++) if (lines[i]!.endsWith('\r')) lines[i] = lines[i]!.slice(0, -1)
  let end = quoteStart(lines)
  while (end > 0 && lines[end - 1]!.trim() === '') end--
  const last = end > 0 ? lines[end - 1]!.trim().toLowerCase() : ''
  if (last.length <= 80 && MOBILE_SIGNATURES.some((m) => last.startsWith(m))) end--
  const kept = collapseBlank(lines.slice(0, end)).join('\n').trim()
  return kept || collapseBlank(lines).join('\n').trim()
}

const AUTO_REPLY_SUBJECTS = [
  'out of office',
  'out of the office',
  'automatic reply',
  'auto reply',
  'autoreply',
  'auto-reply',
  'abwesenheitsnotiz',
  'automatische antwort',
  'réponse automatique',
  'reponse automatique',
  'absent(e) du bureau',
  'absence du bureau',
  'respuesta automática',
  'fuera de la oficina',
  'risposta automatica',
  'fuori sede',
  'afwezigheidsbericht',
  'automatisch antwoord',
  'resposta automática',
  'autosvar',
  'automatiskt svar',
  'automatisk svar',
  'odpowiedź automatyczna',
]

/** An out-of-office subject without RFC 3834's headers (finding 15): the phrase leads the subject. */
export function isAutoReplySubject(subject: string | null | undefined): boolean {
  const s = (subject ?? '').trim().slice(0, 200).toLowerCase()
  return AUTO_REPLY_SUBJECTS.some((p) => s.startsWith(p))
}

/** Gmail's forwarding confirmation: kept and shown to the lead with its link, never answered (finding 15). */
export const GMAIL_FORWARDING_SENDER = 'forwarding-noreply@google.com'

/** The confirmation link of Gmail's forwarding mail (a https URL on a google.com host), from a bounded text. */
export function confirmationLink(text: string): string | null {
  const s = text.slice(0, MAX_REPLY_SCAN)
  let from = 0
  for (;;) {
    const i = s.indexOf('https://', from)
    if (i < 0) return null
    let j = i
    while (j < s.length && j - i < 2000 && s.charCodeAt(j) > 0x20 && !'<>"\''.includes(s[j]!)) j++
    const url = s.slice(i, j)
    try {
      const u = new URL(url)
      if (u.protocol === 'https:' && (u.hostname === 'google.com' || u.hostname.endsWith('.google.com'))) return url
    } catch {
      // not a URL: look further
    }
    from = j
  }
}
