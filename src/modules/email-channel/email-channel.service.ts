import { redactOperatorText } from '../shared/redaction.js'
import { createHash } from 'node:crypto'
import type { Config } from '../../config.js'
import type { Db } from '../../db/client.js'
import type { EmailMode } from '../../db/schema/email-channel.js'
import type { JobQueue } from '../../jobs/queue.js'
import type { Clock } from '../../lib/clock.js'
import { decryptOrNull, type Cipher } from '../../lib/crypto.js'
import { AppError, badRequest, conflict, notFound, ValidationError } from '../../lib/errors.js'
import type { BotRow } from '../bots/bots.service.js'
import { parseReplyFrom, REPLY_FROM_PROBLEMS } from '../mailer/address.fns.js'
import type { EmailService } from '../mailer/mailer.service.js'
import type { BotScope } from '../shared/bot-scope.js'
import { bareAddress, hashToken, headerLoopReason, loopReason, newLocalPart, newToken, senderHash, senderOf, showSender } from './email-channel.fns.js'
import { confirmSenderMail } from './email-channel.sender.js'
import { testMailRaw, testMessageId } from './email-channel.test-mail.js'
import { isTicketReplyAddress, ticketAddressesIn, ticketOfReplyAddress, ticketReplyAddress, ticketReplyKey } from './email-channel.ticket-reply.js'
import { type InboundMail, MailTooComplex, parseAndSeal, parseInbound } from './email-channel.parse.js'
import type { EmailChannelRepo } from './email-channel.repo.js'

type ChannelRow = NonNullable<Awaited<ReturnType<EmailChannelRepo['settings']>>>

export interface EmailChannelDeps {
  db: Db
  clock: Clock
  cipher: Cipher
  queue: Pick<JobQueue, 'enqueue'>
  repo: EmailChannelRepo
  config: Pick<Config, 'INBOUND_EMAIL_DOMAIN' | 'INBOUND_EMAIL_MAX_BYTES' | 'EMAIL_FROM' | 'PUBLIC_BASE_URL' | 'PORT' | 'ENCRYPTION_KEY' | 'INBOUND_SMTP_PORT'>
  bots: { get(tenantId: string, botId: string, scope?: BotScope): Promise<BotRow> }
  /** the confirmation link to a new reply_from */
  email: Pick<EmailService, 'queue'>
  /** The bot's inbound rate at the door (INBOUND_EMAIL_PER_BOT_PER_MINUTE): throws a 429 beyond it. */
  admit?: (botId: string) => Promise<void>
  /**
   * A member's reply to a ticket's notice (its Reply-To, the ticket's reply address): posted on the ticket as that
   * member's message, which goes on to the customer; a reason when it is not (not a member, a closed ticket).
   */
  memberReply?: (
    tenantId: string,
    r: { ticketId: string; botId: string; sender: string; text: string },
  ) => Promise<{ ticketNumber: string } | { ignored: string }>
}

/** How long a reply_from confirmation link works. */
export const SENDER_CONFIRM_TTL_MS = 48 * 3600_000
/** A new reply_from mails its link at once unless one went out this recently (the resend route is limited apart). */
const SENDER_CONFIRM_SPACING_MS = 60_000

export interface ReceiveResult {
  id: string
  status: 'queued' | 'duplicate' | 'ignored'
  reason?: string
}

export const inboundAddress = (row: Pick<ChannelRow, 'local_part'>, domain: string) => `${row.local_part}@${domain}`

/** The addresses that are ours: mail from them is never answered (Zammad #2923: it mails itself). */
export const ownAddresses = (row: Pick<ChannelRow, 'local_part' | 'reply_from'>, config: Pick<Config, 'INBOUND_EMAIL_DOMAIN' | 'EMAIL_FROM'>) =>
  [inboundAddress(row, config.INBOUND_EMAIL_DOMAIN), bareAddress(row.reply_from), bareAddress(config.EMAIL_FROM)].filter((a): a is string => !!a)

/** The key the per-sender hashes are taken under (never the address itself in a count). */
export const senderKey = (config: Pick<Config, 'ENCRYPTION_KEY'>) => createHash('sha256').update(`email-sender:${config.ENCRYPTION_KEY}`).digest('hex')

/** The channel's settings (per bot) and the door of inbound mail (webhook and SMTP): recorded once, queued, answered 202. */
export function createEmailChannelService(deps: EmailChannelDeps) {
  const { repo, cipher, clock, config } = deps
  const base = () => config.PUBLIC_BASE_URL || `http://localhost:${config.PORT}`
  const key = senderKey(config)
  const replyKey = ticketReplyKey(config.ENCRYPTION_KEY)

  const channelOf = async (tenantId: string, botId: string, scope: BotScope) => (await channelAndBot(tenantId, botId, scope)).row

  async function channelAndBot(tenantId: string, botId: string, scope: BotScope) {
    const bot = await deps.bots.get(tenantId, botId, scope)
    const token = newToken()
    const row = await repo.ensure(tenantId, bot.id, {
      localPart: newLocalPart(bot.name),
      tokenHash: hashToken(token),
      tokenEnc: cipher.encrypt(token),
      now: clock.now(),
    })
    return { row, bot }
  }

  const present = (row: ChannelRow) => {
    const sender = senderOf(row, config.EMAIL_FROM)
    return {
      enabled: row.enabled,
      mode: row.mode,
      reply_from: row.reply_from,
      reply_from_verified: sender.verified,
      reply_from_pending: !sender.verified && !!row.verify_token_hash && !!row.verify_expires_at && row.verify_expires_at > clock.now(),
      sender: showSender(sender.from),
      signature: row.signature,
      inbound_address: inboundAddress(row, config.INBOUND_EMAIL_DOMAIN),
      inbound_url: `${base()}/inbound/email/${cipher.decrypt(row.token_enc)}`,
      inbound_smtp: config.INBOUND_SMTP_PORT !== undefined,
    }
  }

  /** A new single-use confirmation link for the row's reply_from, mailed to that address (in the caller's transaction). */
  async function mailConfirmation(tenantId: string, row: ChannelRow, botName: string, trx: Db) {
    const parsed = row.reply_from ? parseReplyFrom(row.reply_from) : null
    if (!parsed || 'problem' in parsed) return row
    const token = newToken()
    const now = clock.now()
    const updated = await repo.setPendingSender(
      tenantId,
      row.bot_id,
      { tokenHash: hashToken(token), address: parsed.address, expiresAt: new Date(now.getTime() + SENDER_CONFIRM_TTL_MS), now },
      trx,
    )
    const url = `${base()}/email/verify-sender?token=${encodeURIComponent(token)}`
    await deps.email.queue(confirmSenderMail(parsed.address, { url, botName, inbound: inboundAddress(row, config.INBOUND_EMAIL_DOMAIN) }), { tenantId }, trx)
    return updated
  }

  /**
   * A mail to a ticket's reply address: recorded once (its Message-ID), then posted as the member's message when
   * the address checks out and the sender is a member who may answer the ticket (their own login address); else
   * recorded `ignored` with the reason (`unknown_ticket`, `not_a_member`, ...). Nothing is ever mailed back here.
   */
  async function memberReply(
    channel: ChannelRow,
    m: { mail: InboundMail; messageId: string; sender: string | null; ticketId: string | null; now: Date },
  ): Promise<ReceiveResult> {
    const row = {
      botId: channel.bot_id,
      messageId: m.messageId.slice(0, 998),
      senderEnc: m.sender ? cipher.encrypt(m.sender) : null,
      senderHash: m.sender ? senderHash(key, m.sender) : null,
      subject: redactOperatorText(m.mail.subject ?? '', null),
      status: 'ignored' as const,
      reason: 'member_reply',
      rawEnc: null,
      attachments: m.mail.attachments ?? [],
      draftEnc: null,
      now: m.now,
    }
    const inserted = await repo.insertInbound(channel.tenant_id, row)
    if (!inserted) return { id: (await repo.findByMessageId(channel.tenant_id, channel.bot_id, row.messageId))?.id ?? '', status: 'duplicate' }
    const text = m.mail.question.trim()
    const out = !m.ticketId
      ? { ignored: 'unknown_ticket' }
      : !m.sender
        ? { ignored: 'no_sender' }
        : !text
          ? { ignored: 'empty_reply' }
          : deps.memberReply
            ? await deps.memberReply(channel.tenant_id, { ticketId: m.ticketId, botId: channel.bot_id, sender: m.sender, text })
            : { ignored: 'unknown_ticket' }
    if ('ignored' in out) {
      await repo.finish(channel.tenant_id, inserted.id, { status: 'ignored', reason: out.ignored, now: clock.now() })
      return { id: inserted.id, status: 'ignored', reason: out.ignored }
    }
    await repo.finish(channel.tenant_id, inserted.id, { status: 'delivered', reason: 'member_reply', ticketNumber: out.ticketNumber, now: clock.now() })
    return { id: inserted.id, status: 'queued' }
  }

  const service = {
    get: async (tenantId: string, botId: string, scope: BotScope) => present(await channelOf(tenantId, botId, scope)),

    /**
     * The bot page's test mail (issue 52, item 11): the question mailed from the member's own address to the bot,
     * through the same door as a customer's; the worker answers it in the member's inbox as a dry run (no
     * conversation, no ticket: email-channel.test-mail.ts).
     */
    async sendTest(tenantId: string, botId: string, scope: BotScope, p: { question: string; from: string }) {
      const row = await channelOf(tenantId, botId, scope)
      const raw = testMailRaw({
        from: p.from,
        to: inboundAddress(row, config.INBOUND_EMAIL_DOMAIN),
        question: p.question.trim(),
        messageId: testMessageId(config.ENCRYPTION_KEY, config.INBOUND_EMAIL_DOMAIN),
        date: clock.now(),
      })
      return service.receive(row, raw)
    },

    async update(
      tenantId: string,
      botId: string,
      scope: BotScope,
      body: { enabled: boolean; mode: EmailMode; reply_from?: string | null; signature?: string | null },
    ) {
      const { row: before, bot } = await channelAndBot(tenantId, botId, scope)
      const raw = body.reply_from?.trim() || null
      const parsed = raw ? parseReplyFrom(raw) : null
      if (parsed && 'problem' in parsed) throw new ValidationError(['body', 'reply_from'], REPLY_FROM_PROBLEMS[parsed.problem], 'invalid_address')
      // stored as we parsed it, so what is mailed is what was checked
      const replyFrom = parsed ? (parsed.name ? `${parsed.name} <${parsed.address}>` : parsed.address) : null
      const signature = body.signature?.trim() || null
      const now = clock.now()
      const row = await deps.db.transaction().execute(async (trx) => {
        const row = await repo.update(tenantId, botId, { enabled: body.enabled, mode: body.mode, replyFrom, signature, now }, trx)
        const address = parsed?.address ?? null
        const pendingFor = row.verify_expires_at && row.verify_expires_at > now ? row.verify_address : null
        if (!address || address === row.reply_from_verified) return pendingFor ? repo.clearPendingSender(tenantId, botId, trx) : row
        if (address === pendingFor) return row
        // a new address to confirm: its link, unless one just went out (the card's resend is there for that)
        const lastSent = before.verify_expires_at ? before.verify_expires_at.getTime() - SENDER_CONFIRM_TTL_MS : 0
        if (now.getTime() - lastSent < SENDER_CONFIRM_SPACING_MS) return repo.clearPendingSender(tenantId, botId, trx)
        return mailConfirmation(tenantId, row, bot.name, trx)
      })
      return present(row)
    },

    /** The card's "Resend confirmation": a new link (the earlier one stops working) to the current reply_from. */
    async resendConfirmation(tenantId: string, botId: string, scope: BotScope) {
      const { row, bot } = await channelAndBot(tenantId, botId, scope)
      const sender = senderOf(row, config.EMAIL_FROM)
      const parsed = row.reply_from ? parseReplyFrom(row.reply_from) : null
      if (!parsed || 'problem' in parsed) throw conflict('There is no reply_from to confirm', 'no_reply_from')
      if (sender.verified) throw conflict(`${parsed.address} is already confirmed`, 'already_verified')
      return present(await deps.db.transaction().execute((trx) => mailConfirmation(tenantId, row, bot.name, trx)))
    },

    /**
     * The link's second step (a person pressed Confirm): the address becomes the bot's sender when the token is
     * known, unexpired and was mailed to the reply_from still set. Single use: the token is gone after.
     */
    async confirmSender(token: string) {
      if (!token || token.length > 200) throw badRequest('This confirmation link is not valid', 'invalid_token')
      const row = await repo.byVerifyTokenHash(hashToken(token))
      const now = clock.now()
      const parsed = row?.reply_from ? parseReplyFrom(row.reply_from) : null
      const current = parsed && !('problem' in parsed) ? parsed.address : null
      if (!row || !row.verify_expires_at || row.verify_expires_at <= now || !current || current !== row.verify_address)
        throw badRequest("This confirmation link is not valid any more: ask for a new one on the bot's E-mail settings", 'invalid_token')
      await repo.confirmSender(row.tenant_id, row.bot_id, { address: current, now })
      return { address: current }
    },

    /** Whether a confirmation token is current (the link's first page: no change on a GET). */
    async pendingSender(token: string) {
      if (!token || token.length > 200) return null
      const row = await repo.byVerifyTokenHash(hashToken(token))
      return row?.verify_address && row.verify_expires_at && row.verify_expires_at > clock.now() ? { address: row.verify_address } : null
    },

    /** A new webhook token: the old URL answers 404 from now on. */
    async rotate(tenantId: string, botId: string, scope: BotScope) {
      await channelOf(tenantId, botId, scope)
      const token = newToken()
      return present(await repo.rotate(tenantId, botId, { tokenHash: hashToken(token), tokenEnc: cipher.encrypt(token), now: clock.now() }))
    },

    /** The bot's latest inbound messages and what became of each. */
    async recent(tenantId: string, botId: string, scope: BotScope, limit: number) {
      await deps.bots.get(tenantId, botId, scope)
      const rows = await repo.recent(tenantId, botId, limit)
      return {
        items: rows.map((r) => ({
          id: r.id,
          from: decryptOrNull(cipher, r.sender_enc),
          subject: r.subject ?? '',
          status: r.status,
          reason: r.reason,
          ticket_number: r.ticket_number,
          session_id: r.session_id,
          attachments: r.attachments ?? [],
          draft: r.status === 'drafted' ? decryptOrNull(cipher, r.draft_enc) : null,
          reply: r.status === 'drafted' || r.reason === 'forwarding_confirmation' ? null : decryptOrNull(cipher, r.draft_enc),
          // Gmail's forwarding confirmation: the lead opens the link to let the mailbox forward to the bot
          confirmation_link: r.reason === 'forwarding_confirmation' ? decryptOrNull(cipher, r.draft_enc) : null,
          received_at: r.created_at.toISOString(),
          processed_at: r.processed_at ? r.processed_at.toISOString() : null,
        })),
      }
    },

    /** Resolves the webhook's token to its channel (null: unknown, a 404). */
    byToken: (token: string) => (token.length > 200 ? Promise.resolve(undefined) : repo.byTokenHash(hashToken(token))),
    /** Resolves an SMTP recipient to its channel (null: unknown, a 550); a ticket's reply address to its bot's. */
    async byAddress(address: string) {
      const [local, domain] = address.toLowerCase().split('@')
      if (!local || domain !== config.INBOUND_EMAIL_DOMAIN.toLowerCase()) return undefined
      if (isTicketReplyAddress(address, config.INBOUND_EMAIL_DOMAIN)) {
        const ticketId = ticketOfReplyAddress(replyKey, address, config.INBOUND_EMAIL_DOMAIN)
        return ticketId ? repo.channelOfTicket(ticketId) : undefined
      }
      return repo.byLocalPart(local)
    },

    /** The Reply-To of a ticket's team notice: its reply address when its bot answers mail, else null. */
    async ticketReplyTo(tenantId: string, botId: string | null, ticketId: string): Promise<string | null> {
      if (!botId) return null
      const row = await repo.settings(tenantId, botId)
      return row?.enabled ? ticketReplyAddress(replyKey, ticketId, config.INBOUND_EMAIL_DOMAIN) : null
    },

    /**
     * One inbound message for a channel, in the order that keeps a hostile mail cheap (issue 50): its size, the
     * bot's inbound rate, then its headers only (parsed in the mail worker from the first 64 KB):
     * `channel_disabled` and the header loop guard are decided before any body is parsed; then the whole mail in
     * the worker, under its deadline and memory limit, and the sender's checks. A verdict is recorded as
     * `ignored` with its reason (a mail over the parse's limits as `too_complex`); a Message-ID already recorded
     * is a `duplicate`; else the message is queued for the worker. The unique index decides between two
     * concurrent deliveries of one message.
     */
    async receive(channel: ChannelRow, raw: Buffer, o: { handOver?: boolean } = {}): Promise<ReceiveResult> {
      if (raw.length > config.INBOUND_EMAIL_MAX_BYTES) throw new AppError(413, 'too_large', `The message is over ${config.INBOUND_EMAIL_MAX_BYTES} bytes`)
      await deps.admit?.(channel.bot_id)
      const head = await parsed(() => parseInbound(raw, 'headers'))
      if (head === null) throw new ValidationError(['body'], 'Not an e-mail message (no headers)', 'not_a_message')
      let reason: string | null =
        head === 'too_complex' ? 'too_complex' : !channel.enabled ? 'channel_disabled' : headerLoopReason(head.headerLines, head.subject)
      let mail: InboundMail | null = head === 'too_complex' ? null : head
      // the raw mail's stored form, deflated and sealed in the parse worker with the full parse (issue 50: sealing
      // 10 MB here held the event loop for seconds under load)
      let sealed: string | null = null
      if (!reason) {
        const full = await parsed(async () => {
          // a caller that will not read `raw` again hands its bytes to the worker instead of a 10 MB copy here; not
          // when the synthetic id below would need them (no Message-ID in the header)
          const r = await parseAndSeal(raw, config.ENCRYPTION_KEY, { handOver: o.handOver === true && Boolean(head !== 'too_complex' && head.messageId) })
          sealed = r.sealed
          return r.mail
        })
        if (full === null) throw new ValidationError(['body'], 'Not an e-mail message (no From and no body)', 'not_a_message')
        if (full === 'too_complex') reason = 'too_complex'
        else {
          mail = full
          reason = loopReason(full.headerLines, full.sender, ownAddresses(channel, config), {
            subject: full.subject,
            inboundDomain: config.INBOUND_EMAIL_DOMAIN,
          })
        }
      }
      // a synthetic id when the sender's is missing or malformed: the same bytes are still handled once
      // (after a hand-over `raw` is gone, but the header's Message-ID was there)
      const messageId = mail?.messageId ?? (head !== 'too_complex' ? head.messageId : null) ?? `<sha256.${await sha256Off(raw)}@synthetic>`
      const sender = mail?.sender ?? null
      const now = clock.now()
      // a reply to a ticket's notice (issue 52, item 5): a member's message on the ticket, never a question for the bot
      const named = mail && !reason ? ticketAddressesIn(mail.headerLines, config.INBOUND_EMAIL_DOMAIN) : []
      if (mail && named.length) {
        const ticketId = named.map((a) => ticketOfReplyAddress(replyKey, a, config.INBOUND_EMAIL_DOMAIN)).find((x) => x) ?? null
        return memberReply(channel, { mail, messageId, sender, ticketId, now })
      }
      const row = {
        botId: channel.bot_id,
        messageId: messageId.slice(0, 998),
        senderEnc: sender ? cipher.encrypt(sender) : null,
        senderHash: sender ? senderHash(key, sender) : null,
        // kept for the settings screen and the thread's `Re:`: redacted as a visitor's text is (a card number in a
        // subject is neither stored nor mailed back)
        subject: redactOperatorText(mail?.subject ?? '', null),
        status: reason ? ('ignored' as const) : ('queued' as const),
        reason,
        rawEnc: reason ? null : sealed,
        attachments: mail?.attachments ?? [],
        // the forwarding confirmation's link, for the lead (encrypted as the bot's words are)
        draftEnc: reason === 'forwarding_confirmation' && mail?.confirmationLink ? cipher.encrypt(mail.confirmationLink) : null,
        now,
      }
      const inserted = await deps.db.transaction().execute(async (trx) => {
        const r = await repo.insertInbound(channel.tenant_id, row, trx)
        if (r && !reason) {
          await deps.queue.enqueue(
            'email_channel.process',
            { tenantId: channel.tenant_id, id: r.id },
            { tenantId: channel.tenant_id, dedupeKey: `email-in:${r.id}`, maxAttempts: PROCESS_ATTEMPTS },
            trx,
          )
        }
        return r
      })
      if (!inserted) {
        const first = await repo.findByMessageId(channel.tenant_id, channel.bot_id, row.messageId)
        return { id: first?.id ?? '', status: 'duplicate' }
      }
      return reason ? { id: inserted.id, status: 'ignored', reason } : { id: inserted.id, status: 'queued' }
    },
  }
  return service
}

/**
 * One parse in the mail worker: a mail beyond its deadline or memory is `too_complex` (stored, never a crash);
 * a full parser queue is a 503 the sender retries (SMTP 451).
 */
async function parsed(parse: () => Promise<InboundMail | null>): Promise<InboundMail | null | 'too_complex'> {
  try {
    return await parse()
  } catch (err) {
    if (err instanceof MailTooComplex && err.busy) throw new AppError(503, 'busy', err.message, { headers: { 'retry-after': '30' } })
    if (err instanceof MailTooComplex) return 'too_complex'
    throw err
  }
}

/** SHA-256 in hex by WebCrypto, which hashes in libuv's thread pool: a 10 MB mail is not hashed on the event loop. */
async function sha256Off(bytes: Uint8Array): Promise<string> {
  return Buffer.from(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)).toString('hex')
}

/** Attempts of one inbound message's turn before a person gets it (the model down, say). */
export const PROCESS_ATTEMPTS = 4

export type EmailChannelService = ReturnType<typeof createEmailChannelService>

export function channelNotFound(): never {
  throw notFound('Unknown inbound address')
}
