import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import type { FastifyBaseLogger } from 'fastify'
import { PermanentJobError } from '../../jobs/worker.js'
import { addressOf, isPlainAddress } from './address.fns.js'

export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
  replyTo?: string
  /**
   * A sender other than EMAIL_FROM: the e-mail channel's confirmed reply_from, or EMAIL_FROM's address under
   * reply_from's display name (an object, so the name is encoded by nodemailer, never spliced into a header).
   */
  from?: string | { name: string; address: string }
  /** Threading headers of a reply (the e-mail channel): our own Message-ID, the thread's ids. */
  messageId?: string
  inReplyTo?: string
  references?: string[]
  headers?: Record<string, string>
  /** the files these chat messages sent (an operator's reply, issue 54), attached when the mail is sent: never in the queue's payload */
  files?: { tenantId: string; messageIds: string[] }
}

/** A mail's attachment as nodemailer takes it. */
export interface MailFile {
  filename: string
  contentType: string
  content: Buffer
}

/**
 * The message as nodemailer takes it, with an explicit SMTP envelope of one recipient: MAIL FROM is the
 * address of the From we send (ours unless reply_from is confirmed), RCPT TO is `to` and nothing else, so no
 * header or address list can widen who receives it. A `to` that is not one plain address is never mailed.
 */
const envelope = (from: string, m: MailMessage, files?: MailFile[]) => {
  if (!isPlainAddress(m.to)) throw new PermanentJobError('The recipient is not one plain e-mail address: not mailed')
  const sender = m.from ?? from
  const mailFrom = typeof sender === 'string' ? addressOf(sender) : sender.address
  return {
    from: sender,
    to: m.to,
    envelope: { from: mailFrom, to: [m.to] },
    subject: m.subject,
    text: m.text,
    html: m.html,
    replyTo: m.replyTo,
    ...(m.messageId ? { messageId: m.messageId } : {}),
    ...(m.inReplyTo ? { inReplyTo: m.inReplyTo } : {}),
    ...(m.references?.length ? { references: m.references } : {}),
    ...(m.headers ? { headers: m.headers } : {}),
    ...(files?.length
      ? { attachments: files.map((f) => ({ filename: f.filename, contentType: f.contentType, content: f.content, contentDisposition: 'attachment' as const })) }
      : {}),
  }
}

/** The edge to the mail system. SMTP when SMTP_URL is set; otherwise .eml files in DATA_DIR/outbox. */
export interface Mailer {
  /** `attachments`: the message's `files`, read by the send job */
  send(message: MailMessage, attachments?: MailFile[]): Promise<void>
  close(): void
}

export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl)
  return {
    async send(m, files) {
      await transport.sendMail(envelope(from, m, files))
    },
    close: () => transport.close(),
  }
}

/**
 * Development fallback: each mail becomes an .eml file a developer can open, and the links in it are
 * logged so a verification link can be clicked straight from the console (never in production, where only
 * the file path is logged).
 */
export function createOutboxMailer(dir: string, from: string, log: FastifyBaseLogger, logLinks: boolean): Mailer {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
  return {
    async send(m, files) {
      mkdirSync(dir, { recursive: true })
      const info = await transport.sendMail(envelope(from, m, files))
      const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${info.messageId.replace(/[^a-zA-Z0-9]/g, '').slice(0, 16)}.eml`)
      writeFileSync(file, info.message as Buffer)
      const links = logLinks ? (m.text.match(/https?:\/\/\S+/g) ?? []) : undefined
      log.info({ file, subject: m.subject, links }, 'mail written to outbox (SMTP_URL not set)')
    },
    close: () => transport.close(),
  }
}
