import { randomUUID } from 'node:crypto'
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/client.js'
import type { Guards, Viewer } from '../../http/auth.js'
import { decryptOrNull } from '../../lib/crypto.js'
import { createRateLimitStore, rateLimitMessage } from '../../http/rate-limit.js'
import { AppError, notFound } from '../../lib/errors.js'
import type { AttachmentsService } from '../attachments/attachments.service.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { BotRow } from '../bots/bots.service.js'
import type { ChatService } from '../chat/chat.service.js'
import type { EmailService } from '../mailer/mailer.service.js'
import { inScope, type BotScope } from '../shared/bot-scope.js'
import { mailboxHash, senderHash } from './email-channel.fns.js'
import { emailChannelJobs } from './email-channel.jobs.js'
import { createThreadedReplies } from './email-channel.mails.js'
import { createEmailChannelRepo } from './email-channel.repo.js'
import { emailChannelRoutes } from './email-channel.routes.js'
import { createEmailChannelService, senderKey } from './email-channel.service.js'
import { createEmailTurns, type EmailTurnDeps } from './email-channel.turns.js'

/**
 * The mailer as the escalations module sees it: a mail that names an e-mail session (an operator's message, a
 * resolution) goes out in that session's thread, from the bot's reply_from. Wired before the escalations module.
 */
export function threadedEmail(ctx: AppContext, email: EmailService): EmailService {
  const replies = createThreadedReplies({
    db: ctx.db,
    repo: createEmailChannelRepo(ctx.db),
    cipher: ctx.cipher,
    config: ctx.config,
    senderKey: senderKey(ctx.config),
    newId: randomUUID,
    now: () => ctx.clock.now(),
  })
  return {
    async queue(message, opts = {}, trx) {
      const mail = opts.sessionId ? await replies.rewrite(opts.tenantId ?? '', opts.sessionId, message, trx as Db | undefined) : message
      return email.queue(mail, opts, trx)
    },
  }
}

/**
 * The bot's inbound rate at the door (issue 50, finding 8): INBOUND_EMAIL_PER_BOT_PER_MINUTE mails a minute per
 * bot, webhook and SMTP together, counted in the rate limits' store (Redis when set, shared by every instance).
 * Beyond it the mail is refused for now (429 with Retry-After; SMTP 451), not stored: the sender's MTA or
 * provider retries, and a flood costs a counter, not a parse and a row.
 */
export function inboundRate(ctx: Pick<AppContext, 'redis' | 'config'>): (botId: string) => Promise<void> {
  const Store = createRateLimitStore(ctx.redis, `${ctx.config.REDIS_PREFIX}rl:email-in:`)
  const store = new Store()
  const max = ctx.config.INBOUND_EMAIL_PER_BOT_PER_MINUTE
  return (botId) =>
    new Promise((resolve, reject) =>
      store.incr(
        botId,
        (err, res) => {
          if (err || !res || res.current <= max) return resolve()
          const retry = String(Math.max(1, Math.ceil(res.ttl / 1000)))
          reject(new AppError(429, 'rate_limited', rateLimitMessage(max, 60_000), { headers: { 'retry-after': retry } }))
        },
        60_000,
      ),
    )
}

/** The e-mail channel: settings per bot, the inbound webhook, the worker's turn, and the SMTP listener's lookups. */
export function wireEmailChannel(
  ctx: AppContext,
  guards: Guards,
  deps: {
    bots: { get(tenantId: string, botId: string, scope?: BotScope): Promise<BotRow> }
    botsRepo: Pick<BotsRepo, 'find'>
    chat: Pick<ChatService, 'runTurn' | 'createSession' | 'getSession' | 'escalate'>
    email: Pick<EmailService, 'queue'>
    /** draft mode: the bot's answer kept as the ticket's suggested reply (assist) */
    keepDraft?: EmailTurnDeps['keepDraft']
    /** a member's mailed reply to a notice, posted on the ticket as theirs (live's operator message) */
    postAsMember?: (tenantId: string, ticketId: string, body: { content: string; internal: boolean }, viewer: Viewer) => Promise<unknown>
    /** the attachments module: a mail's files stored with its message (issue 54) */
    attachments?: Pick<AttachmentsService, 'storeMailFiles' | 'takeBack'>
  },
) {
  const { db, clock, cipher, config, queue } = ctx
  const repo = createEmailChannelRepo(db)
  /** A notice's reply from a member's own login address, posted on the ticket as that member's message. */
  async function memberReply(tenantId: string, r: { ticketId: string; botId: string; sender: string; text: string }) {
    const ticket = await repo.ticketSession(tenantId, r.ticketId)
    if (!ticket || !deps.postAsMember) return { ignored: 'unknown_ticket' }
    const member = ticket.bot_id ? await repo.ticketMember(tenantId, r.sender, ticket.bot_id) : undefined
    if (!member) return { ignored: 'not_a_member' }
    const viewer: Viewer = { userId: member.id, ip: null, role: member.role, scope: member.bot_ids, canViewOriginal: member.can_view_original }
    try {
      await deps.postAsMember(tenantId, r.ticketId, { content: r.text, internal: false }, viewer)
    } catch (err) {
      // a resolved ticket, a closed conversation: said as the reason, the mail kept
      if (err instanceof AppError && err.status < 500) return { ignored: err.code ?? 'refused' }
      throw err
    }
    return { ticketNumber: ticket.ticket_number }
  }
  const service = createEmailChannelService({
    db,
    clock,
    cipher,
    queue,
    repo,
    config,
    bots: deps.bots,
    email: deps.email,
    admit: inboundRate(ctx),
    memberReply,
  })
  const key = senderKey(config)
  const turns = createEmailTurns(
    { db, clock, cipher, repo, chat: deps.chat, bots: deps.botsRepo, email: deps.email, config, keepDraft: deps.keepDraft, attachments: deps.attachments },
    {
      sender: (a) => senderHash(key, a),
      mailbox: (a) => mailboxHash(key, a),
    },
  )

  /** A ticket's e-mail facts: its conversation's channel, the messages' attachments and drafts. */
  async function ticketEmail(tenantId: string, ticketId: string, scope: string[] | null) {
    const t = await repo.ticketSession(tenantId, ticketId)
    if (!t || (scope && !inScope(scope, t.bot_id))) throw notFound('Ticket not found')
    const session = t.session_id ? await repo.session(tenantId, t.session_id) : null
    const rows = t.session_id ? await repo.inboundOfSession(tenantId, t.session_id) : []
    return {
      channel: session?.channel ?? 'api',
      messages: rows.map((r) => ({
        id: r.id,
        subject: r.subject ?? '',
        status: r.status,
        attachments: r.attachments ?? [],
        draft: r.status === 'drafted' ? decryptOrNull(cipher, r.draft_enc) : null,
        received_at: r.created_at.toISOString(),
      })),
    }
  }

  return {
    service,
    routes: emailChannelRoutes({ guards, channel: service, maxBytes: config.INBOUND_EMAIL_MAX_BYTES, ticketEmail }),
    jobs: emailChannelJobs({ turns }),
  }
}
