import { createHash } from 'node:crypto'
import type { Config } from '../../config.js'
import type { Db } from '../../db/client.js'
import type { JobContext } from '../../jobs/types.js'
import type { EmailAttachment } from '../../db/schema/email-channel.js'
import type { Clock } from '../../lib/clock.js'
import type { Cipher } from '../../lib/crypto.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { AttachmentsService } from '../attachments/attachments.service.js'
import type { ChatService } from '../chat/chat.service.js'
import type { TurnResult } from '../chat/turn.context.js'
import type { EmailService } from '../mailer/mailer.service.js'
import { isPlainAddress } from '../mailer/address.fns.js'
import { ourMessageId, renderReply, replySubject, senderOf } from './email-channel.fns.js'
import { isTestMail } from './email-channel.test-mail.js'
import { threadMail } from './email-channel.mails.js'
import { parseStored, type InboundMail } from './email-channel.parse.js'
import type { EmailChannelRepo } from './email-channel.repo.js'
import { inboundAddress, PROCESS_ATTEMPTS } from './email-channel.service.js'
import { message } from '../shared/messages/catalogue.js'

/**
 * Bot mails (answers and ticket notices) one mailbox (mailboxOf: `+tags` and Gmail's dots folded) gets from one
 * bot in an hour; beyond, a person gets the thread. The bot's own cap across senders is EMAIL_BOT_HOURLY_CAP.
 */
export const SENDER_HOURLY_CAP = 5

export interface EmailTurnDeps {
  db: Db
  clock: Clock
  cipher: Cipher
  repo: EmailChannelRepo
  chat: Pick<ChatService, 'runTurn' | 'createSession' | 'getSession' | 'escalate'>
  bots: Pick<BotsRepo, 'find'>
  email: Pick<EmailService, 'queue'>
  config: Pick<Config, 'INBOUND_EMAIL_DOMAIN' | 'EMAIL_FROM' | 'EMAIL_BOT_HOURLY_CAP' | 'ENCRYPTION_KEY'>
  /** Draft mode: the answer kept as the ticket's suggested reply (the assist module's). */
  keepDraft?: (tenantId: string, d: { sessionId: string; text: string; cited: NonNullable<TurnResult['draft']>['cited']; language: string }) => Promise<unknown>
  /** the attachments module: a mail's files stored with its message (issue 54) */
  attachments?: Pick<AttachmentsService, 'storeMailFiles' | 'takeBack'>
}

/** The keyed hashes of a sender: the exact address (the thread's correspondent) and the mailbox (the caps). */
export interface SenderHashes {
  sender(address: string): string
  mailbox(address: string): string
}

type Outcome =
  | {
      status: 'answered' | 'handed_off'
      text: string
      sources: { title: string; url: string | null }[]
      kind: 'answer' | 'notice'
      ticketNumber?: string | null
    }
  | { status: 'delivered' | 'drafted' | 'ignored' | 'failed' | 'handed_off'; reason?: string; ticketNumber?: string | null; draft?: string }

/**
 * The worker's part of one inbound mail (job `email_channel.process`): its session (a reply in a thread
 * continues it), one of the sender's hourly bot mails taken, the chat's own turn (non-streaming, channel
 * email), and then in one transaction with the status check: the reply queued through the mailer and the
 * message marked. A second run of the job (a worker killed mid-way) finds the message handled and sends nothing.
 */
export function createEmailTurns(deps: EmailTurnDeps, hashes: SenderHashes) {
  const { repo, cipher, clock } = deps

  async function sessionFor(
    tenantId: string,
    row: { id: string; bot_id: string; session_id: string | null },
    mail: InboundMail,
    sender: string,
    hash: string,
    mailbox: string,
  ): Promise<{ id: string; owner: string; created: boolean; capped?: CapReason }> {
    if (row.session_id) {
      const s = await deps.chat.getSession(tenantId, row.session_id)
      if (s) return { id: s.id, owner: s.owner, created: false }
    }
    // a reply in a thread continues its session, when it comes from the thread's correspondent (chatwoot PR #13502);
    // a message of the thread that names no correspondent is never taken as proof (issue 50, finding 10)
    const found = await repo.sessionOfThread(tenantId, row.bot_id, mail.thread)
    if (found?.session_id && found.sender_hash && found.sender_hash === hash) {
      const s = await deps.chat.getSession(tenantId, found.session_id)
      if (s && s.owner !== 'closed' && !s.chat_ended) {
        await repo.attachSession(tenantId, row.id, s.id)
        return { id: s.id, owner: s.owner, created: false }
      }
    }
    // a capped sender whose earlier capped mail a person has: this one joins it (one ticket, not one per mail)
    const capped = await cappedNow(tenantId, row.bot_id, mailbox)
    if (capped) {
      const held = await repo.heldSession(tenantId, row.bot_id, mailbox)
      if (held) {
        await repo.attachSession(tenantId, row.id, held.id)
        return { id: held.id, owner: held.owner, created: false, capped }
      }
    }
    const created = await deps.chat.createSession({ tenantId, botId: row.bot_id, channel: 'email', mode: 'anonymous' })
    await deps.db.transaction().execute(async (trx) => {
      await repo.setVisitorEmail(tenantId, created.id, { enc: cipher.encrypt(sender), hash: cipher.emailHash(sender) }, trx)
      await repo.attachSession(tenantId, row.id, created.id, trx)
    })
    return { id: created.id, owner: 'bot' as const, created: true }
  }

  /** Whether the mailbox or the bot has used its hourly bot mails (a read without locks: reserve decides). */
  async function cappedNow(tenantId: string, botId: string, mailbox: string): Promise<CapReason | null> {
    const used = await repo.used(tenantId, { botId, mailboxHash: mailbox, since: new Date(clock.now().getTime() - 3600_000) })
    return used.sender >= SENDER_HOURLY_CAP ? 'sender_rate_limited' : used.bot >= deps.config.EMAIL_BOT_HOURLY_CAP ? 'bot_rate_limited' : null
  }

  async function process(p: { tenantId: string; id: string }, job: Pick<JobContext, 'attempt'>): Promise<void> {
    const { tenantId } = p
    const row = await repo.findInbound(tenantId, p.id)
    if (!row || row.status !== 'queued' || !row.raw_enc) return
    // opened and parsed in the mail worker, as at the door (nothing of its size on the event loop); a mail beyond its
    // limits here is settled unreadable, never retried for ever
    const mail = await parseStored(row.raw_enc, deps.config.ENCRYPTION_KEY, 'files').catch(() => null)
    const channel = await repo.settings(tenantId, row.bot_id)
    const bot = await deps.bots.find(tenantId, row.bot_id)
    const sender = mail?.sender
    if (!mail || !sender || !channel || !bot) return settle(tenantId, row.id, { status: 'failed', reason: 'unreadable' }, null)
    // the bot answers one plain address or nobody: a list in angle brackets or a quoted local part is not a sender
    if (!isPlainAddress(sender)) return settle(tenantId, row.id, { status: 'ignored', reason: 'no_sender' }, null)
    // the bot page's test mail: answered in the member's inbox, no conversation, no ticket (email-channel.test-mail.ts)
    if (isTestMail(deps.config.ENCRYPTION_KEY, mail.messageId)) return answerTest(tenantId, row.id, { mail, sender, channel, bot }, job)
    const hash = hashes.sender(sender)
    const mailbox = hashes.mailbox(sender)
    const session = await sessionFor(tenantId, row, mail, sender, hash, mailbox)
    const messageId = ourMessageId('r', row.id, deps.config.INBOUND_EMAIL_DOMAIN)
    const question = questionOf(mail, session.created)

    // one of the sender's hourly bot mails, taken before the turn (a person's conversation takes none)
    if (session.owner === 'bot') {
      const now = clock.now()
      const room = await deps.db.transaction().execute((trx) =>
        repo.reserve(
          tenantId,
          {
            botId: row.bot_id,
            senderHash: hash,
            mailboxHash: mailbox,
            inboundId: row.id,
            sessionId: session.id,
            messageId,
            kind: 'answer',
            since: new Date(now.getTime() - 3600_000),
            now,
            senderCap: SENDER_HOURLY_CAP,
            botCap: deps.config.EMAIL_BOT_HOURLY_CAP,
          },
          trx,
        ),
      )
      if (!room.ok) {
        // the storm stops here: a person gets the sender's mail, in one ticket, and the sender no further bot mail
        if (room.held === session.id) {
          const r = await deps.chat.escalate(tenantId, session.id, { trigger: 'user_request', original_user_message: question })
          return settle(tenantId, row.id, { status: 'handed_off', reason: room.reason, ticketNumber: r.ticket_number }, session.id)
        }
        await repo.attachSession(tenantId, row.id, room.held)
        const held = await deps.chat.getSession(tenantId, room.held)
        // the held conversation's first capped mail may still be opening its ticket: escalating again joins it
        if (held?.owner === 'bot') await deps.chat.escalate(tenantId, room.held, { trigger: 'user_request' })
        return deliverCapped(tenantId, row, room.held, bot, mail, room.reason)
      }
    } else if (session.capped) {
      return deliverCapped(tenantId, row, session.id, bot, mail, session.capped)
    }

    let result: TurnResult
    try {
      // draft mode: an answer is kept for a person, never stored or mailed as the bot's (issue 52, item 4)
      const attachmentIds = await storeFiles(tenantId, row, session.id, mail)
      result = await deps.chat.runTurn({
        tenantId,
        bot,
        sessionId: session.id,
        message: question,
        channel: 'email',
        draft: channel.mode === 'draft',
        attachmentIds,
      })
    } catch (err) {
      if (job.attempt < PROCESS_ATTEMPTS) throw err
      // the model stayed down: a person answers, and the sender is told the ticket's number
      const r = await deps.chat.escalate(tenantId, session.id, { trigger: 'llm_unavailable', original_user_message: question })
      return settle(
        tenantId,
        row.id,
        { status: 'handed_off', text: r.message, sources: [], kind: 'notice', ticketNumber: r.ticket_number, reason: 'failed' },
        session.id,
        { channel, sender, messageId, answering: mail.messageId, hash, mailbox },
      )
    }
    const outcome = await outcomeOf(tenantId, session.id, channel.mode, result)
    return settle(tenantId, row.id, outcome, session.id, { channel, sender, messageId, answering: mail.messageId, hash, mailbox })
  }

  /**
   * The mail's files that pass the attachments' checks, stored for its conversation for the turn to claim with its
   * message (the model sees them, the team sees them in the thread); the mail's listing marks them, the rest stay
   * listed by name and size. The bytes are let go as soon as they are stored. Each file's id comes from the mail and
   * its place in it, the same on every attempt: a retried job reuses what an earlier attempt stored (even one that
   * died before marking the listing) and stores only the rest, and takes the files back from the message an earlier
   * attempt's failed turn kept, so the retry's message sends them: each file stored once, none left behind.
   */
  async function storeFiles(
    tenantId: string,
    row: { id: string; bot_id: string; attachments: EmailAttachment[] | null },
    sessionId: string,
    mail: InboundMail,
  ): Promise<string[]> {
    const files = (mail.files ?? []).map((f) => ({ ...f, id: mailFileId(row.id, f.index) }))
    mail.files = undefined
    if (!deps.attachments || !files.length) return []
    const stored = await deps.attachments.storeMailFiles(tenantId, row.bot_id, sessionId, files)
    if (!stored.length) return []
    const ids = new Map(stored.map((s) => [s.index, s.meta.id]))
    await repo.setAttachments(
      tenantId,
      row.id,
      mail.attachments.map((a, i) => (ids.has(i) ? { ...a, attachment_id: ids.get(i)! } : a)),
    )
    return deps.attachments.takeBack(
      tenantId,
      sessionId,
      stored.map((s) => s.meta.id),
    )
  }

  /** A capped sender's mail, into the conversation a person has (the turn delivers it there; no bot mail). */
  async function deliverCapped(tenantId: string, row: InboundRow, sessionId: string, bot: BotRowOf, mail: InboundMail, reason: CapReason) {
    const id = row.id
    const attachmentIds = await storeFiles(tenantId, row, sessionId, mail)
    const r = await deps.chat.runTurn({ tenantId, bot, sessionId, message: questionOf(mail, false), channel: 'email', attachmentIds })
    const ticketNumber = r.ticket_number ?? (await deps.chat.getSession(tenantId, sessionId))?.ticket_number ?? null
    return settle(tenantId, id, { status: 'handed_off', reason, ticketNumber }, sessionId)
  }

  async function outcomeOf(tenantId: string, sessionId: string, mode: string, r: TurnResult): Promise<Outcome & { reason?: string }> {
    if (r.draft) {
      // the answer waits on the ticket its turn opened (trigger email_draft) as a suggested reply; nothing goes out
      const language = r.language ?? (await deps.chat.getSession(tenantId, sessionId))?.language ?? 'en'
      await deps.keepDraft?.(tenantId, { sessionId, text: r.draft.text, cited: r.draft.cited, language })
      return { status: 'drafted', draft: r.draft.text, ticketNumber: r.ticket_number ?? null }
    }
    if (r.delivered) return { status: 'delivered', ticketNumber: (await deps.chat.getSession(tenantId, sessionId))?.ticket_number ?? null }
    if (r.ticket_number) return { status: 'handed_off', text: r.text, sources: [], kind: 'notice', ticketNumber: r.ticket_number }
    // draft mode whose turn said something other than an answer (a refusal, a greeting): a person decides, nothing is sent
    if (mode === 'draft') {
      const t = await deps.chat.escalate(tenantId, sessionId, { trigger: 'user_request' })
      return { status: 'drafted', draft: r.text, ticketNumber: t.ticket_number }
    }
    if (!r.text.trim()) return { status: 'failed', reason: 'empty_answer' }
    // every cited source, an uploaded document without a page by its title (issue 52, item 12)
    return { status: 'answered', text: r.text, sources: r.cited ?? r.sources, kind: 'answer' }
  }

  /** The last step, once: the message marked, the mail queued (or the reservation given back) in one transaction. */
  async function settle(
    tenantId: string,
    id: string,
    o: Outcome & { reason?: string },
    sessionId: string | null,
    send?: {
      channel: NonNullable<Awaited<ReturnType<EmailChannelRepo['settings']>>>
      sender: string
      messageId: string
      answering: string | null
      hash: string
      mailbox: string
    },
  ) {
    const mailing = 'text' in o && send && sessionId
    // the mail's fixed texts (sources heading, the bot's footer) in the session's language (#40)
    const lang = mailing ? ((await deps.chat.getSession(tenantId, sessionId))?.language ?? 'en') : 'en'
    const mail = mailing
      ? await threadMail(deps, tenantId, {
          channel: send.channel,
          sessionId,
          to: send.sender,
          messageId: send.messageId,
          answering: send.answering,
          text: o.text,
          sources: o.sources,
          auto: true,
          footer: o.kind === 'answer' ? message(lang, 'email.bot_footer') : null,
          lang,
        })
      : null
    await deps.db.transaction().execute(async (trx) => {
      const locked = await repo.lockInbound(tenantId, id, trx)
      if (!locked || locked.status !== 'queued') return
      const now = clock.now()
      if (mail && send && sessionId && 'kind' in o) {
        await repo.recordOut(
          tenantId,
          {
            botId: send.channel.bot_id,
            messageId: send.messageId,
            sessionId,
            kind: o.kind,
            subject: mail.subject,
            senderHash: send.hash,
            mailboxHash: send.mailbox,
            inboundId: id,
            now,
          },
          trx,
        )
        await deps.email.queue(mail, { tenantId, dedupeKey: `email-out:${send.messageId}` }, trx)
      } else if (send) {
        await repo.dropReservation(tenantId, send.channel.bot_id, send.messageId, trx)
      }
      // the bot's words: the draft waiting for a person, or what was mailed (the settings screen shows it)
      const said = 'draft' in o && o.draft ? o.draft : 'text' in o ? o.text : null
      const draftEnc = said ? cipher.encrypt(said) : null
      await repo.finish(tenantId, id, { status: o.status, reason: o.reason ?? null, sessionId, ticketNumber: o.ticketNumber ?? null, draftEnc, now }, trx)
    })
  }

  /**
   * A test mail's turn, as a dry run (the evaluations' switch: no session, message, ticket or event is stored): the
   * answer is mailed in the thread to the member who sent it, with its sources; a turn that would hand off says
   * so (`handed_off`, reason `test_mail_no_ticket`) and opens nothing; draft mode keeps the draft on the row only.
   */
  async function answerTest(
    tenantId: string,
    id: string,
    t: { mail: InboundMail; sender: string; channel: ChannelOf; bot: BotRowOf },
    job: Pick<JobContext, 'attempt'>,
  ) {
    const trace = { history: [], claims: null, offered: [], actions: [] }
    let r: TurnResult
    try {
      r = await deps.chat.runTurn({ tenantId, bot: t.bot, message: questionOf(t.mail, true), channel: 'email', evaluation: trace })
    } catch (err) {
      if (job.attempt < PROCESS_ATTEMPTS) throw err
      return settle(tenantId, id, { status: 'failed', reason: 'test_mail_model_unavailable' }, null)
    }
    const handedOff = r.delivered_to_operator || (trace as { finish?: { handedOff: boolean } }).finish?.handedOff
    if (handedOff) return settle(tenantId, id, { status: 'handed_off', reason: 'test_mail_no_ticket' }, null)
    if (!r.text.trim()) return settle(tenantId, id, { status: 'failed', reason: 'empty_answer' }, null)
    const lang = r.language ?? 'en'
    const sources = r.cited ?? r.sources
    const shown = renderReply({ text: r.text, sources, signature: null, lang }).text
    if (t.channel.mode === 'draft') return settle(tenantId, id, { status: 'drafted', draft: shown, reason: 'test_mail' }, null)
    const body = renderReply({ text: r.text, sources, signature: t.channel.signature, footer: message(lang, 'email.bot_footer'), lang })
    const mail = {
      to: t.sender,
      from: senderOf(t.channel, deps.config.EMAIL_FROM).from,
      replyTo: inboundAddress(t.channel, deps.config.INBOUND_EMAIL_DOMAIN),
      subject: replySubject(t.mail.subject),
      text: body.text,
      html: body.html,
      messageId: ourMessageId('r', id, deps.config.INBOUND_EMAIL_DOMAIN),
      ...(t.mail.messageId ? { inReplyTo: t.mail.messageId, references: [t.mail.messageId] } : {}),
      headers: { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' },
    }
    await deps.db.transaction().execute(async (trx) => {
      const locked = await repo.lockInbound(tenantId, id, trx)
      if (!locked || locked.status !== 'queued') return
      await deps.email.queue(mail, { tenantId, dedupeKey: `email-out:${mail.messageId}` }, trx)
      await repo.finish(tenantId, id, { status: 'answered', reason: 'test_mail', draftEnc: cipher.encrypt(shown), now: clock.now() }, trx)
    })
  }

  return { process }
}

type ChannelOf = NonNullable<Awaited<ReturnType<EmailChannelRepo['settings']>>>

type CapReason = 'sender_rate_limited' | 'bot_rate_limited'
type InboundRow = { id: string; bot_id: string; attachments: EmailAttachment[] | null }
type BotRowOf = NonNullable<Awaited<ReturnType<EmailTurnDeps['bots']['find']>>>

/** The visitor's question: a new thread's subject leads its first message (often the question itself). */
function questionOf(mail: InboundMail, newSession: boolean): string {
  const subject = mail.subject.trim()
  const body = mail.question.trim()
  if (!newSession || !subject || replySubject(subject) === subject || body.toLowerCase().includes(subject.toLowerCase())) return body || subject
  return body ? `${subject}\n\n${body}` : subject
}

/** The id of a mail's file: from the mail and the file's place in it, so every attempt of its job names it alike. */
export function mailFileId(mailId: string, index: number): string {
  const h = createHash('sha256').update(`email-attachment:${mailId}:${index}`).digest('hex')
  // a UUID's form (version 8: made by its application), its bits from the hash
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`
}
