import type { Attachment, ParsedMail } from 'mailparser'
import { sniffAttachment } from '../attachments/attachments.fns.js'
import type { EmailAttachment } from '../../db/schema/email-channel.js'
import type { HeaderLine } from './email-channel.fns.js'
import { threadIds } from './email-channel.fns.js'
import {
  confirmationLink,
  GMAIL_FORWARDING_SENDER,
  MAX_HEADER_BYTES,
  MAX_REPLY_SCAN,
  messageIdOf,
  plainAddress,
  storable,
  visibleText,
} from './email-channel.inbound.fns.js'

/** One inbound mail as the channel uses it. The raw MIME stays with the row; the prompt gets only `question`. */
export interface InboundMail {
  /** the sender's Message-ID when it is a well-formed one, else null */
  messageId: string | null
  /** Reply-To, else From, when it is one plain address (never a list), else null */
  sender: string | null
  subject: string
  /** the sender's new text: HTML turned into text, quoted earlier mail and signature cut off */
  question: string
  /** In-Reply-To and References, newest first, well-formed ids only */
  thread: string[]
  inReplyTo: string | null
  references: string[]
  headerLines: HeaderLine[]
  attachments: EmailAttachment[]
  /** stage `files` only: the bytes of the attachments that may be stored (mailFiles), at most 5 */
  files?: MailFile[]
  /** Gmail's forwarding confirmation: its link, shown to the lead instead of an answer */
  confirmationLink: string | null
}

/**
 * What the parse reads: the headers only (the door's loop guard, before any body), the whole message, or the whole
 * message with the bytes of the attachments that may be stored (the worker's turn, issue 54).
 */
export type ParseStage = 'headers' | 'full' | 'files'

/** An attachment's bytes, handed from the parse worker (transferred, not copied) to be stored: `index` in `attachments`. */
export interface MailFile {
  index: number
  name: string
  bytes: Uint8Array
}

/** A part shown inline (a `cid:` image in the body) counts as an attachment only when it is an image this large: a pasted screenshot, not a logo. */
const INLINE_IMAGE_MIN_BYTES = 16 * 1024

/** Longest text kept of a question (the chat's own bound on a message). */
const MAX_QUESTION = 4000

/** The header block (at most 64 KB) and an empty line: what the 'headers' stage hands to mailparser. */
function headerSlice(raw: Uint8Array): Buffer {
  const head = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, MAX_HEADER_BYTES))
  const ends = [head.indexOf('\r\n\r\n'), head.indexOf('\n\n')].filter((i) => i >= 0)
  const end = ends.length ? Math.min(...ends) : head.length
  return Buffer.concat([head.subarray(0, end), Buffer.from('\r\n\r\n')])
}

/** Reply-To when there is one, else From: exactly one plain address, or null (issue 50, finding 5). */
function senderOf(m: ParsedMail): string | null {
  const pick = (a: ParsedMail['from']) => {
    const list = a?.value ?? []
    return list.length === 1 && !list[0]!.group ? plainAddress(list[0]!.address) : null
  }
  return m.replyTo ? pick(m.replyTo) : pick(m.from)
}

/**
 * Parses raw RFC 822 with mailparser (charsets, quoted-printable, base64, HTML to text) in this thread: the
 * parse worker (email-channel.parse-worker.ts) calls it under its memory limit and deadline; nothing else should.
 * Attachments are listed (name, type, size); at stage `files` the bytes of those that may be stored come too.
 * Text is made storable (no NUL, no lone surrogate). Null when it is not a message: no headers, or (full) no From and no body.
 */
export async function parseMime(raw: Uint8Array, stage: ParseStage): Promise<InboundMail | null> {
  const { simpleParser } = await import('mailparser')
  const input = stage === 'headers' ? headerSlice(raw) : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  let m: ParsedMail
  try {
    // no text-to-HTML copy and no link scan of the text: neither is used, both cost a copy of a 10 MB body
    m = await simpleParser(input, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true, maxHtmlLengthToParse: 1_000_000 })
  } catch {
    return null
  }
  if (!m.headerLines?.length) return null
  const sender = senderOf(m)
  // the reply cutter and the prompt see the first 20 KB of the text, never a copy of the whole body
  const text = stage !== 'headers' ? storable((m.text ?? '').slice(0, MAX_REPLY_SCAN)).trim() : ''
  if (stage !== 'headers' && !m.from && !text) return null
  const listed = (m.attachments ?? []).filter((a) => a.contentDisposition !== 'inline' || !a.contentId || isScreenshot(a)).slice(0, 50)
  const references = (typeof m.references === 'string' ? [m.references] : (m.references ?? [])).slice(0, 200)
  return {
    messageId: messageIdOf(m.messageId),
    sender,
    subject: storable(m.subject ?? '').slice(0, 500),
    question: text ? visibleText(text).slice(0, MAX_QUESTION) : '',
    thread: threadIds(m.inReplyTo ?? null, references),
    inReplyTo: messageIdOf(m.inReplyTo),
    references: references.map(messageIdOf).filter((r): r is string => r !== null),
    headerLines: m.headerLines.slice(0, 500).map((l) => ({ key: l.key.toLowerCase().slice(0, 200), line: l.line.slice(0, 8000) })),
    attachments: listed.map((a) => ({
      name: storable(a.filename ?? 'attachment').slice(0, 200),
      type: storable(a.contentType ?? 'application/octet-stream').slice(0, 100),
      size: a.size ?? 0,
    })),
    ...(stage === 'files' ? { files: mailFiles(listed) } : {}),
    confirmationLink: sender === GMAIL_FORWARDING_SENDER && text ? confirmationLink(text) : null,
  }
}

/** A message's most files (contract: at most 5 per message). */
const MAIL_FILES_MAX = 5

const isScreenshot = (a: Attachment) => a.contentType.startsWith('image/') && (a.size ?? 0) >= INLINE_IMAGE_MIN_BYTES

/**
 * The attachments worth handing over: the first 5 (a message's most) whose bytes are of an accepted type (the
 * attachments module checks them again, with its caps and bomb checks). Each is its own buffer, transferable
 * without detaching another's memory; the rest stay behind with the worker.
 */
function mailFiles(listed: Attachment[]): MailFile[] {
  const out: MailFile[] = []
  for (let index = 0; index < listed.length && out.length < MAIL_FILES_MAX; index++) {
    const a = listed[index]!
    const c = a.content
    if (!c?.length || !sniffAttachment(c).ok) continue
    const own = c.byteOffset === 0 && c.byteLength === c.buffer.byteLength
    out.push({ index, name: storable(a.filename ?? 'attachment').slice(0, 200), bytes: own ? new Uint8Array(c.buffer, 0, c.byteLength) : new Uint8Array(c) })
  }
  return out
}
