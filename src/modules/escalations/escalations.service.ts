import { type AttachmentsPort, withFiles } from '../attachments/attachments.port.js'
import { randomUUID } from 'node:crypto'
import type { Db } from '../../db/client.js'
import type { TicketStatus } from '../../db/schema/chat.js'
import type { JobQueue } from '../../jobs/queue.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import { decryptOrNull as decrypt, type Cipher } from '../../lib/crypto.js'
import { forbidden, notFound, ValidationError } from '../../lib/errors.js'
import { memberOf, type Viewer } from '../../http/auth.js'
import { roleMay } from '../../http/permissions.js'
import type { AuditPort } from '../shared/audit.port.js'
import { inScope, type BotScope } from '../shared/bot-scope.js'
import type { EventsPort } from '../shared/events.port.js'
import type { LivePort } from '../shared/live.port.js'
import { assignedMail } from './assignment.mails.js'
import type { EmailService } from '../mailer/mailer.service.js'
import type { NewPiiEvent, PrivacyRepo } from '../tenants/privacy/privacy.repo.js'
import { readIdentity } from '../shared/identity.js'
import { piiEvents } from '../shared/pii-events.js'
import { entityCounts, redactOperatorText } from '../shared/redaction.js'
import type { TenantsService } from '../tenants/tenants.service.js'
import { visibleMemberName } from '../shared/member-name.js'
import { emailAddedMail, emailReplyMail, mailLanguage, notificationMail } from './escalations.fns.js'
import type { EscalationsRepo, TicketView } from './escalations.repo.js'
import type { NotifyKind } from './handoff.js'
import { createNoticeSender } from './notice-mail.job.js'
import { createReplyMailDecider } from './reply-mail.job.js'
import { searchedEmail } from './ticket-search.fns.js'
import { ticketEvent } from './tickets.fns.js'

/**
 * Operator workflows: the ticket views (originals only on request, each viewing and erasure audited with
 * the acting user), resolving with a reply that lands in the visitor's chat and is mailed after a grace
 * period unless read, and the notification of the support address. The hand-off itself is handoff.ts.
 */
export function createEscalationsService(deps: {
  db: Db
  clock: Clock
  cipher: Cipher
  repo: EscalationsRepo
  privacy: Pick<PrivacyRepo, 'insertEvents'>
  email: Pick<EmailService, 'queue'>
  queue: Pick<JobQueue, 'enqueue'>
  tenants: Pick<TenantsService, 'notificationAddress'>
  events: EventsPort
  graceSeconds: number
  /** Where the dashboard lives, for links in notification mails; null for none. */
  dashboardUrl: string | null
  audit: AuditPort
  live: Pick<LivePort, 'changeOwner'>
  /** A ticket resolved with a person's answer (assist: it becomes an FAQ candidate), in the resolution's transaction. */
  onResolved?: (tenantId: string, r: { ticketId: string; sessionId: string | null; question: string; reply: string; since: Date }, trx: Db) => Promise<void>
  /** the files of the visitor's messages, in the ticket's thread */
  attachments?: Pick<AttachmentsPort, 'byMessages'>
  /** A team notice's Reply-To: the ticket's own reply address (its bot answers mail), else null. */
  ticketReplyTo?: (tenantId: string, botId: string | null, ticketId: string) => Promise<string | null>
}) {
  const { db, clock, cipher, repo, privacy, email, queue, tenants, audit } = deps

  const decryptOrNull = (enc: string | null | undefined) => decrypt(cipher, enc)

  /** Entity counts of an original, for its audit event (the values themselves are never logged). */
  function countsOf(original: string, optional: readonly string[] | null | undefined): Record<string, number> {
    const out = entityCounts(original, optional)
    return Object.keys(out).length ? out : { UNKNOWN: 1 }
  }

  function identityOf(t: TicketView) {
    const claims = t.session_identity_enc ? readIdentity({ identity_enc: t.session_identity_enc }, cipher) : null
    if (claims?.user_id) return { id: claims.user_id, email: claims.email ?? null, name: claims.name ?? null, plan: claims.plan_tier ?? null }
    if (t.user_id) return { id: t.user_id, email: null, name: t.user_name, plan: null }
    return null
  }

  function present(t: TicketView, original: string | null) {
    return {
      id: t.id,
      ticket_number: t.ticket_number,
      session_id: t.session_id,
      bot_public_id: t.bot_public_id ?? null,
      status: t.status,
      priority: t.priority,
      trigger: t.trigger,
      primary_question: t.primary_question,
      primary_question_original: original,
      primary_question_original_available: t.primary_question_original_enc !== null,
      transcript: (t.transcript ?? []).map((m) => ({ role: m.role, content: m.content, created_at: new Date(m.created_at).toISOString() })),
      user_note: t.user_note,
      user_email: decryptOrNull(t.user_email_enc) ?? decryptOrNull(t.session_email_enc),
      user_name: t.user_name,
      user_id: t.user_id,
      identity: identityOf(t),
      evidence: Array.isArray(t.evidence) ? (t.evidence as Record<string, unknown>[]) : [],
      resolution_text: t.resolution_text,
      created_at: t.created_at.toISOString(),
      updated_at: t.updated_at.toISOString(),
      resolved_at: t.resolved_at ? t.resolved_at.toISOString() : null,
      assignee_user_id: t.assignee_user_id,
      first_response_at: t.first_response_at ? t.first_response_at.toISOString() : null,
      owner: t.session_owner ?? 'bot',
      language: t.session_language ?? null,
      assignee_name: t.session_owner === 'human' ? assigneeName(t) : null,
      unread_count: Number(t.unread_count ?? 0),
      visitor_gone: t.visitor_gone,
      channel: t.session_channel ?? 'api',
      subject: t.session_channel === 'email' ? (t.email_subject ?? null) : null,
    }
  }

  /** Presents tickets, decrypting originals when asked; every original shown leaves a PII event and an audit entry. */
  async function presentAll(tenantId: string, rows: TicketView[], opts: { includeOriginal: boolean; viewer: Viewer }) {
    if (opts.includeOriginal && !opts.viewer.canViewOriginal) throw forbidden(`Your role (${opts.viewer.role}) may not show original text unless granted`)
    const shown: NewPiiEvent[] = []
    let optional: string[] | null | undefined
    const out = []
    for (const t of rows) {
      const original = opts.includeOriginal ? decryptOrNull(t.primary_question_original_enc) : null
      if (original !== null) {
        optional ??= (await repo.tenantPrivacy(tenantId))?.pii_optional_types ?? []
        shown.push(
          ...piiEvents(countsOf(original, optional), {
            action: 'original_viewed',
            direction: 'ticket',
            ticketId: t.id,
            sessionId: t.session_id,
            actorUserId: opts.viewer.userId,
          }),
        )
        await audit.record(tenantId, {
          ...actorEntry(opts.viewer),
          action: 'showed_original',
          itemType: 'ticket',
          itemId: t.id,
          detail: { ticket_number: t.ticket_number },
        })
      }
      out.push(present(t, original))
    }
    if (shown.length) await privacy.insertEvents(tenantId, shown, clock.now())
    return out
  }

  async function ticketOr404(tenantId: string, ticketId: string, scope: BotScope = null) {
    const t = await repo.find(tenantId, ticketId, db, scope)
    if (!t) throw notFound('Ticket not found')
    return t
  }

  const dashboardLink = (ticketId: string) => (deps.dashboardUrl ? `${deps.dashboardUrl}/app/tickets/${ticketId}` : null)

  /**
   * An operator's reply: in a chat it is mailed at the end of the grace period unless seen (decideReplyMail); an
   * e-mail customer has no chat to see it in, so on an e-mail session it is mailed at once, in the message's own
   * transaction (the outbox's job wakes the worker at commit). Answers when it was mailed (null: not yet).
   */
  async function queueReplyMail(
    tenantId: string,
    m: { ticketId: string; sessionId: string; messageId: string; actorUserId: string | null },
    trx: Db,
  ): Promise<{ mailedAt: Date | null }> {
    const now = clock.now()
    const byEmail = (await repo.sessionChannel(tenantId, m.sessionId, trx)) === 'email'
    const dueAt = byEmail ? now : addSeconds(now, deps.graceSeconds)
    const r = await repo.insertReply(tenantId, { ...m, dueAt, now }, trx)
    if (byEmail) return { mailedAt: await mailAtOnce(tenantId, r.id, m, trx) }
    await queue.enqueue(
      'escalations.reply_mail',
      { tenantId, replyId: r.id },
      { tenantId, runAt: dueAt, dedupeKey: `operator-reply:${r.id}`, maxAttempts: 8 },
      trx,
    )
    return { mailedAt: null }
  }

  /**
   * An e-mail session's reply, as the member wrote it and signed with their name (the e-mail channel threads it
   * and adds the bot's signature): no chat notice around it. Null when no address is known for the session.
   */
  async function mailAtOnce(tenantId: string, replyId: string, m: { sessionId: string; messageId: string; actorUserId: string | null }, trx: Db) {
    const { sessionId, actorUserId } = m
    const r = await repo.lockReply(tenantId, replyId, trx)
    if (!r || r.mail_status !== 'pending') return null
    const now = clock.now()
    const to = decryptOrNull(r.user_email_enc) ?? decryptOrNull(r.visitor_email_enc)
    if (!to || r.reply_text == null) {
      await repo.decideReply(tenantId, replyId, 'no_email', now, trx)
      return null
    }
    const author = await repo.replyAuthor(tenantId, sessionId, actorUserId, trx)
    await repo.decideReply(tenantId, replyId, 'sent', now, trx)
    const mail = emailReplyMail({ ticket_number: r.ticket_number, reply: r.reply_text, author })
    // the reply's files (if any) are attached when the mail is sent
    const files = { tenantId, messageIds: [m.messageId] }
    await email.queue({ to, ...mail, files }, { tenantId, dedupeKey: `operator-reply-mail:${sessionId}:${replyId}`, sessionId }, trx)
    return now
  }

  return {
    /** Tickets of the viewer's bots; `assignee` is 'me', 'unassigned' or a member's id. */
    async list(
      tenantId: string,
      q: { status?: TicketStatus; assignee?: string; needsPerson?: boolean; q?: string; includeOriginal: boolean; limit: number; offset: number },
      viewer: Viewer,
    ) {
      const assignee = q.assignee === 'me' ? (viewer.userId ?? undefined) : q.assignee === 'unassigned' ? null : q.assignee
      const email = q.q === undefined ? null : searchedEmail(q.q)
      const filter = {
        status: q.status,
        assignee,
        scope: viewer.scope,
        needsPerson: q.needsPerson,
        q: q.q,
        ...(email ? { emailHash: cipher.emailHash(email) } : {}),
      }
      const [rows, total, gone] = await Promise.all([
        repo.list(tenantId, { ...filter, limit: q.limit, offset: q.offset }),
        repo.count(tenantId, filter),
        // the default view's one count, with its difference named (#52): how many of those need a person have left
        q.needsPerson ? repo.count(tenantId, { ...filter, visitorGone: true }) : undefined,
      ])
      const tickets = await presentAll(tenantId, rows, { includeOriginal: q.includeOriginal, viewer })
      return { tickets, total, ...(gone === undefined ? {} : { visitor_gone_total: gone }) }
    },

    /**
     * The ticket. Viewing changes nothing (#52, as in Chatwoot and Zendesk): an agent moving through the inbox's
     * panes must not leave tickets "In progress" with nobody on them; the first reply or a take does that.
     */
    async get(tenantId: string, ticketId: string, opts: { includeOriginal: boolean }, viewer: Viewer) {
      const t = await ticketOr404(tenantId, ticketId, viewer.scope)
      // the transcript is the conversation to date (what the visitor wrote after the hand-off too), not the copy
      // taken when the ticket opened; a ticket without a session keeps its copy
      const [notes, conversation] = t.session_id
        ? await Promise.all([
            repo.notes(tenantId, t.session_id),
            withFiles(deps.attachments, tenantId, await repo.conversation(tenantId, t.session_id, TICKET_TRANSCRIPT_LIMIT)),
          ])
        : [[], null]
      const shown = (await presentAll(tenantId, [t], { ...opts, viewer }))[0]!
      return {
        ...shown,
        transcript: conversation?.length ? conversation : shown.transcript,
        notes: notes.map((n) => ({
          id: n.id,
          author_name: n.author_email ? visibleMemberName(n.author_display_name, t.bot_name) : null,
          content: n.content,
          created_at: n.created_at.toISOString(),
        })),
      }
    },

    /**
     * Assigns the ticket (null unassigns). A member who may manage members assigns anyone of the workspace
     * who works on tickets and sees the ticket's bot; others (agents) only take a ticket that is free or
     * theirs, or give back their own. The assignee is mailed when someone else assigned it (unless it turned
     * the mail off); `ticket.assigned` is emitted in the same transaction.
     */
    async assign(tenantId: string, ticketId: string, assigneeUserId: string | null, viewer: Viewer) {
      const now = clock.now()
      await db.transaction().execute(async (trx) => {
        const t = await repo.lockWithSession(tenantId, ticketId, trx, viewer.scope)
        if (!t) throw notFound('Ticket not found')
        if (!roleMay(viewer.role, 'members')) {
          const free = t.assignee_user_id === null || t.assignee_user_id === viewer.userId
          if ((assigneeUserId !== null && assigneeUserId !== viewer.userId) || !free) {
            throw forbidden(`Your role (${viewer.role}) may only take a free ticket or give back your own`)
          }
        }
        if (t.assignee_user_id === assigneeUserId) return
        const member = assigneeUserId ? await repo.member(tenantId, assigneeUserId, trx) : null
        if (assigneeUserId) {
          if (!member) throw new ValidationError(['body', 'assignee_user_id'], 'Not a member of this workspace', 'invalid_assignee')
          if (!roleMay(member.role, 'tickets'))
            throw new ValidationError(['body', 'assignee_user_id'], `A ${member.role} does not work on tickets`, 'invalid_assignee')
          if (!inScope(memberOf(member).botIds, t.bot_id))
            throw new ValidationError(['body', 'assignee_user_id'], "This member does not see the ticket's bot", 'invalid_assignee')
        }
        await repo.setAssignee(tenantId, ticketId, assigneeUserId, now, trx)
        // taking the ticket takes the conversation; giving it back puts it in the queue again
        if (t.session_id && t.status !== 'resolved') {
          const change = assigneeUserId
            ? { to: 'human' as const, from: ['bot', 'queue', 'human'] as const, assigneeUserId, reassigned: true }
            : { to: 'queue' as const, from: ['human'] as const }
          await deps.live.changeOwner(
            tenantId,
            t.session_id,
            { ...change, by: { type: 'user', userId: viewer.userId }, reason: assigneeUserId ? 'assigned' : 'unassigned', ticketId },
            trx,
          )
        }
        const data = { ticket_id: t.id, ticket_number: t.ticket_number, assignee_user_id: assigneeUserId, assigned_by_user_id: viewer.userId }
        await deps.events.emit(tenantId, { type: 'ticket.assigned', botId: t.bot_id, ticketId: t.id, data }, trx)
        await audit.record(
          tenantId,
          { ...actorEntry(viewer), action: assigneeUserId ? 'assigned' : 'unassigned', itemType: 'ticket', itemId: t.id, detail: data },
          trx,
        )
        if (member && member.id !== viewer.userId && member.notify_on_assignment) {
          const by = viewer.userId ? ((await repo.member(tenantId, viewer.userId, trx))?.email ?? null) : null
          const mail = assignedMail(member.email, { ticket_number: t.ticket_number, question: t.primary_question, by, link: dashboardLink(t.id) })
          await email.queue(mail, { tenantId, dedupeKey: `ticket-assigned:${t.id}:${member.id}:${now.getTime()}` }, trx)
        }
      })
      return present(await ticketOr404(tenantId, ticketId), null)
    },

    /**
     * Resolves the ticket with the operator's answer: the text appears in the visitor's chat at once (an
     * assistant message with from_operator), and a durable job decides at the end of the grace period
     * whether it is mailed too (not when the visitor's read cursor has reached it).
     */
    async resolve(tenantId: string, ticketId: string, text: string, viewer: Viewer) {
      const actorUserId = viewer.userId
      const reply = text.trim()
      if (!reply) throw new ValidationError(['body', 'resolution_text'], 'String should have at least 1 character', 'string_too_short')
      const optional = (await repo.tenantPrivacy(tenantId))?.pii_optional_types ?? []
      const now = clock.now()
      let mailedAt: Date | null = null
      await db.transaction().execute(async (trx) => {
        const t = await repo.lockWithSession(tenantId, ticketId, trx, viewer.scope)
        if (!t) throw notFound('Ticket not found')
        if (t.session_id) {
          const messageId = randomUUID()
          await repo.insertOperatorMessage(tenantId, { id: messageId, sessionId: t.session_id, content: reply, authorUserId: actorUserId, now }, trx)
          ;({ mailedAt } = await queueReplyMail(tenantId, { ticketId, sessionId: t.session_id, messageId, actorUserId }, trx))
        }
        await repo.resolve(tenantId, ticketId, reply, now, trx)
        await deps.onResolved?.(tenantId, { ticketId, sessionId: t.session_id, question: t.primary_question, reply, since: t.created_at }, trx)
        // the bot answers again, with the person's part in its context (a closed chat stays closed)
        if (t.session_id) {
          await deps.live.changeOwner(
            tenantId,
            t.session_id,
            { to: 'bot', from: ['queue', 'human'], by: { type: 'user', userId: viewer.userId }, reason: 'resolved', ticketId },
            trx,
          )
        }
        await audit.record(
          tenantId,
          { ...actorEntry(viewer), action: 'resolved', itemType: 'ticket', itemId: ticketId, detail: { ticket_number: t.ticket_number } },
          trx,
        )
        // the reply reaches the visitor's chat only when the ticket came from one; payloads carry redacted text only
        const redacted = redactOperatorText(reply, optional)
        if (t.session_id) await deps.events.emit(tenantId, ticketEvent('ticket.replied', t, 'resolved', { reply: redacted }), trx)
        await deps.events.emit(tenantId, ticketEvent('ticket.resolved', t, 'resolved', { resolution_text: redacted }), trx)
      })
      return { ...present(await ticketOr404(tenantId, ticketId), null), reply_mailed_at: mailedAt ? (mailedAt as Date).toISOString() : null }
    },

    /** Erases the ticket's encrypted original question and the originals of its transcript's messages, for good. */
    async deleteOriginal(tenantId: string, ticketId: string, viewer: Viewer) {
      const actorUserId = viewer.userId
      const optional = (await repo.tenantPrivacy(tenantId))?.pii_optional_types ?? []
      const now = clock.now()
      return db.transaction().execute(async (trx) => {
        const t = await repo.lock(tenantId, ticketId, trx, viewer.scope)
        if (!t) throw notFound('Ticket not found')
        const audit: NewPiiEvent[] = []
        const base = { action: 'original_deleted' as const, ticketId, sessionId: t.session_id, actorUserId }
        let deleted = 0
        const original = decryptOrNull(t.primary_question_original_enc)
        if (await repo.eraseTicketOriginal(tenantId, ticketId, now, trx)) {
          deleted++
          audit.push(...piiEvents(original ? countsOf(original, optional) : { UNKNOWN: 1 }, { ...base, direction: 'ticket' }))
        }
        if (t.session_id) {
          const times = (t.transcript ?? []).map((m) => new Date(m.created_at).getTime()).filter((x) => Number.isFinite(x))
          const until = new Date(Math.max(t.created_at.getTime(), ...times))
          const erased = await repo.eraseMessageOriginals(tenantId, t.session_id, until, trx)
          deleted += erased.length
          const counts: Record<string, number> = {}
          for (const e of erased) {
            const c = e.pii_counts && Object.keys(e.pii_counts).length ? e.pii_counts : { UNKNOWN: 1 }
            for (const [k, v] of Object.entries(c)) counts[k] = (counts[k] ?? 0) + v
          }
          audit.push(...piiEvents(counts, { ...base, direction: 'message' }))
        }
        await privacy.insertEvents(tenantId, audit, now, trx)
        await deps.audit.record(
          tenantId,
          { ...actorEntry(viewer), action: 'deleted_original', itemType: 'ticket', itemId: ticketId, detail: { deleted_count: deleted } },
          trx,
        )
        return { deleted_count: deleted }
      })
    },

    /** Job: the support address learns of a new ticket (or of the e-mail a visitor left), once (notice-mail.job.ts). */
    sendNotification: createNoticeSender({ db, clock, cipher, repo, email, queue, tenants, dashboardLink, identityOf, ticketReplyTo: deps.ticketReplyTo }),

    decideReplyMail: createReplyMailDecider({ db, clock, cipher, repo, email, tenants }),

    queueReplyMail,

    repliesOf: (tenantId: string, ticketId: string) => repo.repliesOf(tenantId, ticketId),

    /** The ticket as the viewer sees it, without side effects (the live routes answer with it). */
    view: async (tenantId: string, ticketId: string, viewer: Viewer) => present(await ticketOr404(tenantId, ticketId, viewer.scope), null),
  }
}

/** The newest messages a ticket's page shows of its conversation. */
const TICKET_TRANSCRIPT_LIMIT = 500

const actorEntry = (v: Viewer) => ({ actorUserId: v.userId, ip: v.ip })

const assigneeName = (t: TicketView) => (t.assignee_email ? visibleMemberName(t.assignee_display_name, t.bot_name) : null)

export type EscalationsService = ReturnType<typeof createEscalationsService>
