import type { Config } from '../../config.js'
import type { Db } from '../../db/client.js'
import type { Cipher } from '../../lib/crypto.js'
import { decryptOrNull } from '../../lib/crypto.js'
import type { MailMessage } from '../mailer/mailer.transport.js'
import { isPlainAddress } from '../mailer/address.fns.js'
import { ourMessageId, renderReply, replyReferences, replySubject, senderHash, senderOf, type Cited } from './email-channel.fns.js'
import type { EmailChannelRepo } from './email-channel.repo.js'
import { inboundAddress } from './email-channel.service.js'

type ChannelRow = NonNullable<Awaited<ReturnType<EmailChannelRepo['settings']>>>
type MailConfig = Pick<Config, 'INBOUND_EMAIL_DOMAIN' | 'EMAIL_FROM'>

/**
 * A mail in a session's thread: `Re:` the thread's first subject, In-Reply-To the sender's latest message (or
 * the one answered), References the thread's ids, our own Message-ID, Reply-To the bot's inbound address, from
 * the channel's reply_from once confirmed (else EMAIL_FROM's address under reply_from's name: senderOf). `auto` marks the bot's own mails (RFC 3834), not a person's.
 */
export async function threadMail(
  deps: { repo: Pick<EmailChannelRepo, 'threadOf'>; cipher: Cipher; config: MailConfig },
  tenantId: string,
  p: {
    channel: ChannelRow
    sessionId: string
    to: string
    messageId: string
    answering?: string | null
    text: string
    sources?: Cited[]
    auto: boolean
    footer?: string | null
    /** the session's language, for the mail's fixed texts */
    lang?: string | null
  },
  trx?: Db,
): Promise<MailMessage> {
  const thread = await deps.repo.threadOf(tenantId, p.sessionId, trx)
  const firstSubject = thread.find((m) => m.direction === 'in')?.subject ?? null
  const ids = thread.map((m) => m.message_id).filter((id) => id !== p.messageId)
  const lastIn = [...thread].reverse().find((m) => m.direction === 'in')?.message_id
  const inReplyTo = p.answering ?? lastIn ?? ids[ids.length - 1]
  const body = renderReply({ text: p.text, sources: p.sources ?? [], signature: p.channel.signature, footer: p.footer, lang: p.lang })
  const headers: Record<string, string> = p.auto ? { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' } : {}
  return {
    to: p.to,
    from: senderOf(p.channel, deps.config.EMAIL_FROM).from,
    replyTo: inboundAddress(p.channel, deps.config.INBOUND_EMAIL_DOMAIN),
    subject: replySubject(firstSubject),
    text: body.text,
    html: body.html,
    messageId: p.messageId,
    ...(inReplyTo ? { inReplyTo, references: replyReferences(ids, inReplyTo) } : {}),
    headers,
  }
}

/** An operator's message or a resolution on an e-mail session goes out in the thread (the escalations module's mail, rewritten). */
export function createThreadedReplies(deps: {
  db: Db
  repo: EmailChannelRepo
  cipher: Cipher
  config: MailConfig
  /** the key of the correspondent's hash (senderKey) */
  senderKey: string
  newId: () => string
  now: () => Date
}) {
  return {
    /**
     * The mail as the escalations module built it, or the same words in the session's thread when the session
     * came by e-mail and its bot's channel exists (recorded, so the sender's answer finds the session).
     */
    async rewrite(tenantId: string, sessionId: string, mail: MailMessage, trx?: Db): Promise<MailMessage> {
      const session = await deps.repo.session(tenantId, sessionId, trx)
      if (!session || session.channel !== 'email') return mail
      const channel = await deps.repo.settings(tenantId, session.bot_id, trx)
      const to = decryptOrNull(deps.cipher, session.visitor_email_enc)
      // an address stored before senders were checked (a list in angle brackets) is not threaded: the mailer
      // refuses such a recipient, so the mail as built goes nowhere either
      if (!channel || !to || !isPlainAddress(to)) return mail
      const messageId = ourMessageId('o', deps.newId(), deps.config.INBOUND_EMAIL_DOMAIN)
      const threaded = await threadMail(deps, tenantId, { channel, sessionId, to, messageId, text: mail.text, auto: false }, trx)
      await deps.repo.recordOut(
        tenantId,
        {
          botId: channel.bot_id,
          messageId,
          sessionId,
          kind: 'operator',
          subject: threaded.subject,
          senderHash: senderHash(deps.senderKey, to),
          mailboxHash: null,
          inboundId: null,
          now: deps.now(),
        },
        trx,
      )
      // an operator's files go with the threaded mail too
      return mail.files ? { ...threaded, files: mail.files } : threaded
    },
  }
}

export type ThreadedReplies = ReturnType<typeof createThreadedReplies>
