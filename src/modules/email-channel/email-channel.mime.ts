import type { ParsedMail } from 'mailparser'
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
  /** Gmail's forwarding confirmation: its link, shown to the lead instead of an answer */
  confirmationLink: string | null
}

/** What the parse reads: the headers only (the door's loop guard, before any body), or the whole message. */
export type ParseStage = 'headers' | 'full'

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
 * Attachments are only listed (name, type, size), never read into the prompt. Text is made storable (no NUL, no
 * lone surrogate). Null when it is not a message: no headers, or (full) no From and no body.
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
  const text = stage === 'full' ? storable((m.text ?? '').slice(0, MAX_REPLY_SCAN)).trim() : ''
  if (stage === 'full' && !m.from && !text) return null
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
    attachments: (m.attachments ?? [])
      .filter((a) => a.contentDisposition !== 'inline' || !a.contentId)
      .slice(0, 50)
      .map((a) => ({
        name: storable(a.filename ?? 'attachment').slice(0, 200),
        type: storable(a.contentType ?? 'application/octet-stream').slice(0, 100),
        size: a.size ?? 0,
      })),
    confirmationLink: sender === GMAIL_FORWARDING_SENDER && text ? confirmationLink(text) : null,
  }
}
