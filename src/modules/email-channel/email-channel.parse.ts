import EmailReplyParser from 'email-reply-parser'
import type { ParsedMail } from 'mailparser'
import type { EmailAttachment } from '../../db/schema/email-channel.js'
import { bareAddress, type HeaderLine, threadIds } from './email-channel.fns.js'

/** One inbound mail as the channel uses it. The raw MIME stays with the row; the prompt gets only `question`. */
export interface InboundMail {
  messageId: string | null
  sender: string | null
  subject: string
  /** the sender's new text: HTML turned into text, quoted earlier mail and signature cut off */
  question: string
  /** In-Reply-To and References, newest first */
  thread: string[]
  inReplyTo: string | null
  references: string[]
  headerLines: HeaderLine[]
  attachments: EmailAttachment[]
}

/** Longest text kept of a question (the chat's own bound on a message). */
const MAX_QUESTION = 4000

/**
 * Parses raw RFC 822 with mailparser (charsets, quoted-printable, base64, HTML to text). Attachments are only
 * listed (name, type, size), never read into the prompt. Null when it is not a message: no From and no body.
 * mailparser is loaded at the first mail, not when the service starts (about 0.1 s of every start).
 */
export async function parseInbound(raw: Buffer | string): Promise<InboundMail | null> {
  const { simpleParser } = await import('mailparser')
  let m: ParsedMail
  try {
    m = await simpleParser(raw, { skipImageLinks: true, maxHtmlLengthToParse: 2_000_000 })
  } catch {
    return null
  }
  const from = m.from?.value?.[0]?.address ?? null
  const replyTo = m.replyTo?.value?.[0]?.address ?? null
  const body = (m.text ?? '').trim()
  if (!from && !body) return null
  if (!m.headerLines?.length) return null
  const references = typeof m.references === 'string' ? [m.references] : (m.references ?? [])
  return {
    messageId: m.messageId?.trim() || null,
    // the address a reply goes to: Reply-To, else From (Chatwoot's order, without the X-Original-Sender step)
    sender: bareAddress(replyTo) ?? bareAddress(from),
    subject: (m.subject ?? '').slice(0, 500),
    question: visibleText(body).slice(0, MAX_QUESTION),
    thread: threadIds(m.inReplyTo ?? null, references),
    inReplyTo: m.inReplyTo?.trim() || null,
    references,
    headerLines: m.headerLines.map((l) => ({ key: l.key.toLowerCase(), line: l.line })),
    attachments: (m.attachments ?? [])
      .filter((a) => a.contentDisposition !== 'inline' || !a.contentId)
      .slice(0, 50)
      .map((a) => ({ name: (a.filename ?? 'attachment').slice(0, 200), type: (a.contentType ?? 'application/octet-stream').slice(0, 100), size: a.size ?? 0 })),
  }
}

/**
 * The reply's own text: email-reply-parser (GitHub's reply parser, maintained by Crisp) cuts the quoted earlier
 * mail ("On ... wrote:", "> " lines) and signatures ("Sent from my iPhone", "-- "). A forwarded message keeps
 * its forwarded part, which is the question. When the parser leaves nothing, the whole text is kept.
 */
export function visibleText(text: string): string {
  const normalised = text.replace(/\r\n/g, '\n')
  let cut: string
  try {
    cut = new EmailReplyParser().parseReply(normalised)
  } catch {
    cut = normalised
  }
  return (cut.trim() || normalised.trim()).replace(/\n{3,}/g, '\n\n')
}
