import { redactOperatorText } from '../shared/redaction.js'
import { languageName } from '../shared/language.js'
import { randomUUID } from 'node:crypto'
import type { ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { SessionOwner } from '../../db/schema/chat.js'
import type { Viewer } from '../../http/auth.js'
import type { Clock } from '../../lib/clock.js'
import { AppError, conflict, notFound, ValidationError } from '../../lib/errors.js'
import type { OperatorFilesPort } from '../attachments/attachments.port.js'
import type { AuditPort } from '../shared/audit.port.js'
import type { EventsPort, OutboundEvent } from '../shared/events.port.js'
import type { LiveMessage, LivePort, OwnerChange } from '../shared/live.port.js'
import { ownerWebhooks, TYPING_LAPSE_MS, typingCoalescer } from './live.fns.js'
import { createLiveLog } from './live.log.js'
import { ownerPatch, type LiveRepo, type NewLiveEvent, type OwnerPatch } from './live.repo.js'

/** A session row as repo.lockSession read it (locked for the rest of the transaction). */
type LockedSession = NonNullable<Awaited<ReturnType<LiveRepo['lockSession']>>>

/** An owner change's event on the live log: who has the conversation now, who moved it and why. */
function ownerEvent(
  sessionId: string,
  botId: string,
  c: { to: SessionOwner; by: OwnerChange['by']; reason: string; name: string | null; ticketId?: string | null | undefined },
  at: Date,
) {
  const by = c.by
  const data = {
    owner: c.to,
    assignee_name: c.name,
    by: by.type === 'user' ? { type: 'user', user_id: by.userId } : { type: by.type },
    reason: c.reason,
    ticket_id: c.ticketId ?? null,
  }
  return { sessionId, botId, type: 'owner' as const, data, at }
}

/** Change-feed topic of live events; key `<tenant id>/<session id>` (session empty for workspace-wide events). */
export const LIVE_TOPIC = 'live'

const sessionClosed = () => new AppError(409, 'session_closed', 'This conversation is closed', { coded: true })

export interface LiveServiceDeps {
  db: Db
  clock: Clock
  repo: LiveRepo
  changes: Pick<ChangeFeed, 'notice'>
  events: EventsPort
  audit: AuditPort
  /** The operator-reply mail (escalations): queued with the message, decided after the grace period. */
  onOperatorMessage?: (
    tenantId: string,
    m: { ticketId: string; sessionId: string; messageId: string; actorUserId: string | null },
    trx: Db,
  ) => Promise<{ mailedAt: Date | null } | undefined>
  /** A message sent from a suggested reply (assist): counted as used, in the message's transaction. */
  onSuggestionUsed?: (tenantId: string, u: { ticketId: string; suggestionId: string; messageId: string; content: string }, trx: Db) => Promise<void>
  /** Whether auto-assignment is on for the workspace (pickAgent may pick someone); absent: assumed on. */
  autoAssigns?: (tenantId: string) => Promise<boolean>
  /** Picks an online agent for a conversation entering the queue (auto-assignment); null for none. */
  pickAgent?: (tenantId: string, botId: string, trx: Db) => Promise<string | null>
  /** A person's conversation ended (an agent has room again): the queue is offered after the commit. */
  onCapacityFreed?: (tenantId: string, trx: Db) => Promise<void>
  /** A visitor wrote: they are here (presence.ts; a gone visitor is back). */
  onVisitorMessage?: (tenantId: string, sessionId: string, trx: Db) => Promise<void>
  /** An operator's message put into the visitor's language (languages/operator-translate.ts); absent: `translate` is refused. */
  translateForVisitor?: (tenantId: string, sessionId: string, text: string) => Promise<{ text: string; language: string; unchanged?: boolean }>
  /** An operator's files claimed by their reply (attachments module); absent: `attachment_ids` are refused. */
  operatorFiles?: OperatorFilesPort
}

/**
 * Who answers a conversation and what the people on it say: owner changes (each one an event with who and why,
 * and its webhook), operator messages and internal notes, typing. Every event is appended to the live log in
 * the transaction of the change and announced on the change feed, which wakes the streams at commit.
 */
export function createLiveService(deps: LiveServiceDeps) {
  const { db, clock, repo } = deps

  const notice = (tenantId: string, sessionId: string | null) => deps.changes.notice(LIVE_TOPIC, `${tenantId}/${sessionId ?? ''}`)
  // this service's own hot transactions (`logged`) write their events last: the tenant's seq lock is held briefly
  const log = createLiveLog({ notice })
  const logged = <T>(fn: (trx: Db) => Promise<T>) => db.transaction().execute(log.atEnd(fn))
  // a typist's repeated "on" (a keystroke each) makes one row per window, not one per call
  const typing = typingCoalescer()

  /**
   * Appends an event. `owner`: the event's session's new owner, written by the event's own statement when the event
   * is written now; when it waits for the end of the transaction, the owner is written at once, on its own.
   */
  async function append(tenantId: string, e: NewLiveEvent, trx: Db, owner?: OwnerPatch) {
    if (!log.defer(trx, tenantId, e)) await log.write(trx, tenantId, e, owner)
    else if (owner && e.sessionId) await repo.setOwner(tenantId, e.sessionId, owner.owner, owner.at, trx)
  }

  async function emit(tenantId: string, events: OutboundEvent[], trx: Db) {
    for (const e of events) await deps.events.emit(tenantId, e, trx)
  }

  const changeOwner: LivePort['changeOwner'] = async (tenantId, sessionId, change, trxIn, locked) => {
    const trx = trxIn as Db
    const s = locked ?? (await repo.lockSession(tenantId, sessionId, trx))
    if (!s) throw notFound('Session not found')
    return changeLockedOwner(tenantId, sessionId, s, change, trx)
  }

  /** changeOwner on a session row this transaction has locked already (no second lock round trip). */
  async function changeLockedOwner(tenantId: string, sessionId: string, s: Pick<LockedSession, 'owner' | 'bot_id'>, change: OwnerChange, trx: Db) {
    const from = s.owner as SessionOwner
    if (change.from && !change.from.includes(from)) return { from, to: from }
    let assignee = change.assigneeUserId ?? null
    let to = change.to
    let by = change.by
    let reason = change.reason
    if (to === 'queue' && !assignee && deps.pickAgent) {
      assignee = await deps.pickAgent(tenantId, s.bot_id, trx)
      if (assignee) {
        await repo.assignOpenTicket(tenantId, sessionId, assignee, clock.now(), trx)
        by = { type: 'system' }
        reason = `${reason}; auto_assigned`
      }
    }
    if (to === 'queue' && assignee) to = 'human'
    // the same owner again is no change, except a person-owned conversation passed to another member
    if (to === from && !(to === 'human' && change.reassigned)) return { from, to }
    const now = clock.now()
    if (from === 'human' && to !== 'human') await deps.onCapacityFreed?.(tenantId, trx)
    const name = to === 'human' && assignee ? await repo.memberName(tenantId, assignee, s.bot_id, trx) : null
    const event = ownerEvent(sessionId, s.bot_id, { to, by, reason, name, ticketId: change.ticketId }, now)
    // the owner is written with its event (one statement), before anything else of this transaction reads it; or
    // handed to the caller, whose next statement on the session row writes both (a turn's hand-off)
    if (change.collect && !log.buffered(trx)) change.collect(log.ownerEventWrite(tenantId, event, ownerPatch(to, now)))
    else await append(tenantId, event, trx, ownerPatch(to, now))
    await emit(tenantId, ownerWebhooks(from, to, { sessionId, botId: s.bot_id, ticketId: change.ticketId ?? null, assigneeUserId: assignee, reason }), trx)
    return { from, to }
  }

  const planOwnerChange: LivePort['planOwnerChange'] = async (tenantId, sessionId, change, s) => {
    const from = s.owner
    if (change.from && !change.from.includes(from)) return { from, to: from, write: null }
    const to = change.to
    // what only changeOwner does: a person named (their name read), a member's room freed, auto-assignment, webhooks
    if (to === 'human' || from === 'human' || change.assigneeUserId || change.reassigned) return null
    if (to === 'queue' && deps.pickAgent && (await deps.autoAssigns?.(tenantId)) !== false) return null
    if (to === from) return { from, to, write: null }
    if (
      ownerWebhooks(from, to, { sessionId, botId: s.bot_id, ticketId: null, assigneeUserId: null, reason: change.reason }).length &&
      (await deps.events.listens?.(tenantId)) !== false
    )
      return null
    const now = clock.now()
    const event = ownerEvent(sessionId, s.bot_id, { to, by: change.by, reason: change.reason, name: null, ticketId: change.ticketId }, now)
    return { from, to, write: log.ownerEventWrite(tenantId, event, ownerPatch(to, now)) }
  }

  const messagePosted: LivePort['messagePosted'] = async (tenantId, m, trxIn) => {
    const trx = trxIn as Db
    const s = await repo.lockSession(tenantId, m.sessionId, trx)
    if (!s) return
    if (m.role === 'user') await deps.onVisitorMessage?.(tenantId, m.sessionId, trx)
    const author = m.authorUserId ? await repo.memberName(tenantId, m.authorUserId, s.bot_id, trx) : null
    await lockedMessagePosted(tenantId, m, s, author, trx)
  }

  /** messagePosted on a session row this transaction has locked, with the author's name already read. */
  async function lockedMessagePosted(tenantId: string, m: LiveMessage, s: LockedSession, author: string | null, trx: Db) {
    await append(tenantId, { sessionId: m.sessionId, botId: s.bot_id, type: 'message', data: messageData(m, author, false), at: m.createdAt }, trx)
    await deps.events.emit(
      tenantId,
      {
        type: 'message.created',
        botId: s.bot_id,
        // payloads carry redacted text only: a visitor's is stored redacted, an operator's is redacted here (#33)
        data: {
          session_id: m.sessionId,
          message_id: m.id,
          role: m.role,
          from_operator: m.fromOperator,
          author_name: author,
          content: m.fromOperator ? redactOperatorText(m.content, await repo.optionalPiiTypes(tenantId, trx)) : m.content,
        },
      },
      trx,
    )
  }

  /** The session of a ticket, locked (session first, then the ticket: the order a turn's hand-off takes them in). */
  async function ticketSession(tenantId: string, ticketId: string, viewer: Viewer, trx: Db) {
    const peek = await repo.findTicket(tenantId, ticketId, viewer.scope, trx)
    if (!peek) throw notFound('Ticket not found')
    if (!peek.session_id) throw conflict('This ticket has no conversation', 'no_conversation')
    const session = await repo.lockSession(tenantId, peek.session_id, trx)
    const ticket = await repo.lockTicket(tenantId, ticketId, viewer.scope, trx)
    if (!session || !ticket) throw notFound('Ticket not found')
    return { ticket, session, sessionId: peek.session_id }
  }

  const userActor = (v: Viewer) => ({ type: 'user' as const, userId: v.userId })

  /** The operator's words in the visitor's language; the ticket is read (and scoped) first, without a lock. */
  async function translateFor(tenantId: string, ticketId: string, viewer: Viewer, text: string) {
    if (!deps.translateForVisitor) throw new AppError(400, 'translation_unavailable', 'Translation is not available here')
    const peek = await repo.findTicket(tenantId, ticketId, viewer.scope, db)
    if (!peek) throw notFound('Ticket not found')
    if (!peek.session_id) throw conflict('This ticket has no conversation', 'no_conversation')
    return deps.translateForVisitor(tenantId, peek.session_id, text)
  }

  return {
    changeOwner,
    planOwnerChange,
    messagePosted,

    /** A queued conversation offered to auto-assignment again (an agent came online); true when someone took it. */
    async offerQueued(tenantId: string, sessionId: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const s = await repo.lockSession(tenantId, sessionId, trx)
        if (s?.owner !== 'queue') return false
        const ticket = await repo.openTicketOf(tenantId, sessionId, trx)
        const r = await changeOwner(
          tenantId,
          sessionId,
          { to: 'queue', from: ['queue'], by: { type: 'system' }, reason: 'queued', ticketId: ticket?.id ?? null },
          trx,
        )
        return r.to === 'human'
      })
    },

    /** A workspace-wide event on the team's stream (office hours or a member's status changed). */
    async workspaceEvent(tenantId: string, type: 'availability', data: Record<string, unknown>): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await append(tenantId, { sessionId: null, botId: null, type, data, at: clock.now() }, trx)
      })
    },

    /**
     * Events for many sessions' widget streams at once (what waiting visitors are told of availability), chosen
     * inside the transaction that writes them, written together as its last statement.
     */
    async sessionEvents(
      tenantId: string,
      type: 'availability',
      choose: (trx: Db) => Promise<Array<{ sessionId: string; botId: string; data: Record<string, unknown> }>>,
    ): Promise<number> {
      return logged(async (trx) => {
        const list = await choose(trx)
        const at = clock.now()
        for (const e of list) await append(tenantId, { sessionId: e.sessionId, botId: e.botId, type, data: e.data, at }, trx)
        return list.length
      })
    },

    /** An operator's message into the visitor's chat (taking the conversation), or an internal note for the team only. */
    async postMessage(
      tenantId: string,
      ticketId: string,
      body: { content: string; internal: boolean; suggestion_id?: string; translate?: boolean; attachment_ids?: string[] },
      viewer: Viewer,
    ) {
      const written = body.content.trim()
      const fileIds = body.attachment_ids ?? []
      if (fileIds.length && (body.internal || !deps.operatorFiles))
        throw new ValidationError(['body', 'attachment_ids'], 'Files go with a reply, not an internal note', 'value_error')
      if (!written && !fileIds.length) throw new ValidationError(['body', 'content'], 'content must not be empty', 'string_too_short')
      let files: LiveMessage['attachments']
      // translated before the transaction (a model call never runs inside one); a failure sends nothing
      const asked = body.translate && !body.internal && written ? await translateFor(tenantId, ticketId, viewer, written) : null
      // words the model gave back unchanged are sent as written, with no note claiming a translation (#52)
      const translated = asked && !asked.unchanged ? asked : null
      const content = translated?.text ?? written
      const id = randomUUID()
      const now = clock.now()
      let author: string | null = null
      let mailedAt: Date | null = null
      await logged(async (trx) => {
        const { ticket, session, sessionId } = await ticketSession(tenantId, ticketId, viewer, trx)
        author = viewer.userId ? await repo.memberName(tenantId, viewer.userId, session.bot_id, trx) : null
        if (body.internal) {
          await repo.insertNote(tenantId, { id, sessionId, ticketId, content, authorUserId: viewer.userId, now }, trx)
          const m: LiveMessage = { id, sessionId, role: 'assistant', content, createdAt: now, fromOperator: true, authorUserId: viewer.userId }
          await append(tenantId, { sessionId, botId: session.bot_id, type: 'message', internal: true, data: messageData(m, author, true), at: now }, trx)
          return
        }
        if (session.owner === 'closed') throw sessionClosed()
        if (ticket.status === 'resolved') throw conflict('This ticket is resolved', 'ticket_resolved')
        await repo.insertOperatorMessage(tenantId, { id, sessionId, content, authorUserId: viewer.userId, now }, trx)
        if (fileIds.length) files = await deps.operatorFiles!.claim(tenantId, sessionId, fileIds, id, trx)
        if (translated) {
          // the original, for the team only: a note beside the message, a moment after it so the thread keeps the order
          const noteId = randomUUID()
          const at = new Date(now.getTime() + 1)
          await repo.insertNote(
            tenantId,
            { id: noteId, sessionId, ticketId, content: originalNote(written, translated.language), authorUserId: viewer.userId, now: at },
            trx,
          )
          const note: LiveMessage = {
            id: noteId,
            sessionId,
            role: 'assistant',
            content: originalNote(written, translated.language),
            createdAt: at,
            fromOperator: true,
            authorUserId: viewer.userId,
          }
          await append(tenantId, { sessionId, botId: session.bot_id, type: 'message', internal: true, data: messageData(note, author, true), at }, trx)
        }
        await repo.takeTicket(tenantId, ticketId, viewer.userId, now, trx)
        const assignee = ticket.assignee_user_id ?? viewer.userId
        // the session row is locked (ticketSession) and the author read: neither is done again below
        await changeLockedOwner(
          tenantId,
          sessionId,
          session,
          { to: 'human', assigneeUserId: assignee, by: userActor(viewer), reason: 'operator_message', ticketId },
          trx,
        )
        const m: LiveMessage = {
          id,
          sessionId,
          role: 'assistant',
          content,
          createdAt: now,
          fromOperator: true,
          authorUserId: viewer.userId,
          attachments: files,
        }
        await lockedMessagePosted(tenantId, m, session, author, trx)
        mailedAt = (await deps.onOperatorMessage?.(tenantId, { ticketId, sessionId, messageId: id, actorUserId: viewer.userId }, trx))?.mailedAt ?? null
        if (body.suggestion_id) await deps.onSuggestionUsed?.(tenantId, { ticketId, suggestionId: body.suggestion_id, messageId: id, content }, trx)
      })
      return {
        id,
        role: 'assistant' as const,
        from_operator: true as const,
        internal: body.internal,
        author_name: author,
        content,
        created_at: now.toISOString(),
        ...(body.internal ? {} : { mailed_at: mailedAt ? (mailedAt as Date).toISOString() : null }),
        ...(translated ? { original: written, language: translated.language } : {}),
        ...(asked ? { translated: !!translated } : {}),
        ...(files ? { attachments: files } : {}),
      }
    },

    /** The bot answers again; its next answer reads the person's part of the conversation as context. */
    async returnToBot(tenantId: string, ticketId: string, viewer: Viewer) {
      await db.transaction().execute(async (trx) => {
        const { session, sessionId } = await ticketSession(tenantId, ticketId, viewer, trx)
        if (session.owner === 'closed') throw sessionClosed()
        await changeOwner(tenantId, sessionId, { to: 'bot', by: userActor(viewer), reason: 'return_to_bot', ticketId }, trx)
        await deps.audit.record(
          tenantId,
          { actorUserId: viewer.userId, ip: viewer.ip, action: 'returned_to_bot', itemType: 'ticket', itemId: ticketId, detail: {} },
          trx,
        )
      })
    },

    /** Nobody answers any more: the visitor's next message is refused (session_closed). */
    async close(tenantId: string, ticketId: string, viewer: Viewer) {
      await db.transaction().execute(async (trx) => {
        const { sessionId } = await ticketSession(tenantId, ticketId, viewer, trx)
        await changeOwner(tenantId, sessionId, { to: 'closed', by: userActor(viewer), reason: 'closed', ticketId }, trx)
        await deps.audit.record(
          tenantId,
          { actorUserId: viewer.userId, ip: viewer.ip, action: 'closed_conversation', itemType: 'ticket', itemId: ticketId, detail: {} },
          trx,
        )
      })
    },

    /** An operator is typing (on a note: only the team sees it); a repeat of the same state soon after is not stored again. */
    async operatorTyping(tenantId: string, ticketId: string, body: { on: boolean; internal?: boolean }, viewer: Viewer) {
      const key = `${tenantId}/t:${ticketId}/${viewer.userId}/${!!body.internal}`
      if (typing.repeat(key, body.on, clock.now().getTime())) return
      await logged(async (trx) => {
        const { session, sessionId } = await ticketSession(tenantId, ticketId, viewer, trx)
        typing.noted(key, body.on, clock.now().getTime())
        await append(
          tenantId,
          { sessionId, botId: session.bot_id, type: 'typing', internal: !!body.internal, data: typingData('operator', body.on, clock.now()), at: clock.now() },
          trx,
        )
      })
    },

    /** The visitor is typing (the widget); a repeat of the same state soon after is not stored again. */
    async visitorTyping(tenantId: string, sessionId: string, on: boolean) {
      const key = `${tenantId}/s:${sessionId}`
      if (typing.repeat(key, on, clock.now().getTime())) return
      await logged(async (trx) => {
        const s = await repo.lockSession(tenantId, sessionId, trx)
        if (!s) throw notFound('Session not found')
        typing.noted(key, on, clock.now().getTime())
        await append(tenantId, { sessionId, botId: s.bot_id, type: 'typing', data: typingData('visitor', on, clock.now()), at: clock.now() }, trx)
      })
    },

    /** The visitor's read receipt reaches the team (and the visitor's other tabs). */
    async visitorRead(tenantId: string, sessionId: string, messageId: string) {
      await logged(async (trx) => {
        const s = await repo.lockSession(tenantId, sessionId, trx)
        if (!s || s.owner === 'bot') return
        await append(tenantId, { sessionId, botId: s.bot_id, type: 'read', data: { message_id: messageId }, at: clock.now() }, trx)
      })
    },
  }
}

/** A MessageResponse as both streams carry it. */
function messageData(m: LiveMessage, author: string | null, internal: boolean) {
  return {
    id: m.id,
    session_id: m.sessionId,
    role: m.role,
    content: m.content,
    created_at: m.createdAt.toISOString(),
    from_operator: m.fromOperator,
    author_name: author,
    internal,
    ...(m.attachments?.length ? { attachments: m.attachments } : {}),
  }
}

const typingData = (from: 'visitor' | 'operator', on: boolean, now: Date) => ({
  from,
  on,
  expires_at: new Date(now.getTime() + TYPING_LAPSE_MS).toISOString(),
})

export type LiveService = ReturnType<typeof createLiveService>
export type { OwnerChange }

/** The team's note beside a translated message: what the operator wrote (team-facing, not a visitor text). */
const originalNote = (text: string, language: string) => `Original (sent translated into ${languageName(language)}):\n${text}`
