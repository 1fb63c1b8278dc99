import { sql, type RawBuilder, type Selectable } from 'kysely'
import type { Db } from '../../db/client.js'
import type { ChatSessionsTable, SessionOwner, TicketPriority, TranscriptEntry } from '../../db/schema/chat.js'
import type { JobQueue } from '../../jobs/queue.js'
import type { Clock } from '../../lib/clock.js'
import { decryptOrNull, type Cipher } from '../../lib/crypto.js'
import { readIdentity } from '../shared/identity.js'
import type { LivePort, OwnerEventWrite } from '../shared/live.port.js'
import type { Redaction } from '../shared/redaction.js'
import { extractEmail, followUpText, isNegativeReply } from './escalations.fns.js'
import type { EscalationsRepo } from './escalations.repo.js'
import { handOffText, type HandOffKey } from './handoff.texts.js'
import { TRANSCRIPT_MESSAGES, transcriptEntry } from './tickets.fns.js'
import type { FollowUpWrite, HandOffState, TicketsRepo } from './tickets.repo.js'
import type { OpenTicketInput, TicketsService } from './tickets.service.js'

/**
 * The hand-off port: what the chat pipeline calls when a conversation goes to the support team. The
 * escalations module owns tickets, what the bot says when it hands over, and the follow-up after a
 * hand-off (asking for an e-mail, "anything else?"); the chat owns its messages and sessions and calls
 * these three functions, nothing else of this module.
 */
export interface HandOffPort {
  /**
   * Opens a ticket for the session, or adds to its open one, inside the caller's transaction (which holds
   * the session's row lock, so two hand-offs of one session cannot both open one). Returns what the bot says.
   */
  open(tenantId: string, input: HandOffInput, trx: Db): Promise<HandOffResult>
  /**
   * A turn's hand-off begins here, inside its transaction: the session's row locked and what `open` reads, in one
   * round trip; pass both to `open` (`locked`, `known`). `known` is null when it must be read under the lock.
   */
  lock(tenantId: string, sessionId: string, trx: Db): Promise<{ locked: Pick<Session, 'owner' | 'bot_id'> | undefined; known: HandOffState | null }>
  /**
   * A turn's hand-off planned for the turn's own statement (writeTurn's `handOff`): two round trips instead of a
   * transaction's five. What `open` reads is read without a lock, with the session row's version; the ticket's write,
   * the owner change and the follow-up are returned for the turn's write, which writes them, and the turn, only while
   * the row is still that version and the bot owns it. Null when the hand-off needs its transaction (`lock`, `open`):
   * a person owns the conversation, a resolved ticket reopens, auto-assignment or the workspace's webhooks are on.
   */
  plan(tenantId: string, input: PlanInput): Promise<PlannedHandOff | null>
  /** The visitor's message to a person while the session waits for an e-mail after a hand-off: an address goes on the ticket. */
  onAwaiting: AwaitingHandler
  /** The session's newest ticket number, for history views. */
  latestTicketNumber(tenantId: string, sessionId: string): Promise<string | null>
}

type Session = Selectable<ChatSessionsTable>

/** A turn's hand-off for `plan`: its transcript is the session's messages plus the turn's question; it follows up. */
export type PlanInput = Omit<HandOffInput, 'session' | 'locked' | 'known' | 'callerWritesSession' | 'transcript' | 'followUp' | 'awaitEmail'> & {
  session: HandOffInput['session'] & Pick<Session, 'owner' | 'bot_id'>
  transcript: { plus: TranscriptEntry[] }
  followUp: NonNullable<HandOffInput['followUp']>
  /**
   * The row version of a session the turn created (its insert's xmin): nothing to read, it has no ticket and no
   * message yet; the write still checks the version.
   */
  createdVersion?: string | null
}

/** What a session created by the turn has for a hand-off: nothing yet. */
const NOTHING_YET: HandOffState = { open: null, newest: null, messages: [], emailCandidates: [] }

/** The ticket of a planned hand-off, written by the turn's own statement (writeTurn's `handOff`). */
export interface TicketWrite {
  /** The session row's version (xmin) the plan was read from. */
  sessionVersion: string
  /**
   * The ticket's CTEs (no leading comma): they read `hg` (one row, `ok`: the session's row, locked, is still that
   * version and the bot's) and define `t`, the ticket written (no row: the plan no longer held, write nothing).
   */
  ctes: RawBuilder<unknown>
  /** For the statement's final SELECT (always true). */
  sent: RawBuilder<boolean>
  /** Stands for a new ticket's number in the bot's words until the statement gives it (t.ticket_number); null: they have it. */
  placeholder: string | null
}

/** HandOffPort.plan's hand-off: what the turn's write writes, and its result once written. */
export interface PlannedHandOff {
  write: TicketWrite
  /** What the bot says; a new ticket's number is `write.placeholder` until written. */
  text: string
  /** The ticket as the turn's debug keeps it (a new one's number is the placeholder until written). */
  ticket: { number: string; created: boolean; priority: TicketPriority }
  ownerEvent: OwnerEventWrite | null
  sessionFollowUp: Pick<FollowUpWrite, 'email' | 'awaiting'> | null
  /** The hand-off once the statement wrote it (`ticketNumber`: t.ticket_number, as the statement returned it). */
  done(ticketNumber: string | null): HandOffResult
}

/** Stands for a new ticket's number in a planned hand-off's words (a private-use character: never in a template). */
const NUMBER_SLOT = '\uE000ticket\uE000'

/** The ticket's fields as tickets.service takes them (redacted texts), the session they come from, and how to word the hand-off. */
export interface HandOffInput extends Pick<OpenTicketInput, 'botId' | 'trigger' | 'primaryQuestion' | 'primaryQuestionOriginalEnc' | 'userNote' | 'evidence'> {
  session: Pick<Session, 'id' | 'identity_enc' | 'visitor_email_enc'>
  /**
   * The session's row as the caller's transaction locked it (its owner and bot): the owner change takes it
   * instead of locking the row a second time.
   */
  locked?: Pick<Session, 'owner' | 'bot_id'>
  /** What `lock` read with the row (the session's tickets, its last messages and e-mail candidates); read by `open` when absent. */
  known?: HandOffState | null
  /**
   * The caller's turn write updates the session row: the owner change's event and columns (`ownerEvent`) and the
   * follow-up's session columns (`sessionFollowUp`) are returned for it to write in this transaction, instead of by
   * statements of their own.
   */
  callerWritesSession?: boolean
  /**
   * The ticket's transcript (redacted messages); or `{ plus }`: the session's last TRANSCRIPT_MESSAGES messages,
   * read by the hand-off's own read, followed by `plus` (a turn's question, not stored yet).
   */
  transcript: TranscriptEntry[] | { plus: TranscriptEntry[] }
  language: string
  /** What the bot says when the ticket is new; adding to an open one says so instead. */
  say: Exclude<HandOffKey, 'existing'>
  /**
   * A turn's hand-off follows up on the visitor's question (its e-mail, if it wrote one, goes on the ticket;
   * without one the bot asks for it); null for a manual hand-off.
   */
  followUp: { question: Pick<Redaction, 'originalEnc'> } | null
  /**
   * A manual hand-off (the widget's button or its offline form) waits for an e-mail too when the ticket has
   * none, without asking in words: the widget's own form asks, and the next message with an address keeps it.
   */
  awaitEmail?: boolean
}

export interface HandOffResult {
  ticketId: string
  ticketNumber: string
  created: boolean
  priority: TicketPriority
  /** What the bot tells the visitor, in their language. */
  text: string
  /** Who has the conversation now: the queue, or a person at once (auto-assignment, a reopened ticket's assignee). */
  owner: SessionOwner
  /** With `callerWritesSession`: the owner change still to write (by the caller's next statement on the session row). */
  ownerEvent?: OwnerEventWrite
  /** With `callerWritesSession`: the session's follow-up still to write (what it waits for, an e-mail found in the conversation). */
  sessionFollowUp?: Pick<FollowUpWrite, 'email' | 'awaiting'>
}

/**
 * Runs for a visitor's message to a person while the session waits for an e-mail (session.awaiting): says
 * nothing (the bot never posts while a person owns the conversation), only keeps an address for the ticket.
 */
export type AwaitingHandler = (ctx: {
  tenantId: string
  session: Pick<Session, 'id' | 'awaiting'>
  /** The visitor's message, redacted, with its encrypted original. */
  message: Pick<Redaction, 'text' | 'originalEnc'>
}) => Promise<{ emailSaved: boolean }>

export type NotifyKind = 'opened' | 'email_added'

/** The support address learns of a ticket (or of a visitor's e-mail): a job that commits with the change that needs it. */
export function enqueueTicketNotification(queue: Pick<JobQueue, 'enqueue'>, tenantId: string, ticketId: string, kind: NotifyKind, trx: Db) {
  return queue.enqueue('escalations.notify', { tenantId, ticketId, kind }, { tenantId, dedupeKey: `ticket-notify:${kind}:${ticketId}`, maxAttempts: 8 }, trx)
}

/**
 * enqueueTicketNotification's 'opened' job, written by the new ticket's own statement (`ticket`: its CTE): the same
 * kind, payload, dedupe key and attempts, with no round trip of its own.
 */
export function openedNotificationSql(queue: Pick<JobQueue, 'enqueueSql'>, tenantId: string, ticket: string) {
  const t = sql.ref(`${ticket}.id`)
  return queue.enqueueSql('escalations.notify', ticket, sql`jsonb_build_object('tenantId', ${tenantId}::text, 'ticketId', ${t}::text, 'kind', 'opened')`, {
    tenantId,
    dedupeKey: sql<string>`'ticket-notify:opened:' || ${t}::text`,
    maxAttempts: 8,
  })
}

export interface HandOffDeps {
  db: Db
  clock: Clock
  cipher: Pick<Cipher, 'encrypt' | 'decrypt' | 'emailHash'>
  tickets: Pick<TicketsService, 'open' | 'plan'>
  ticketsRepo: Pick<TicketsRepo, 'latestNumberForSession' | 'handOffState' | 'lockWithHandOffState' | 'handOffSnapshot'>
  repo: Pick<EscalationsRepo, 'lockSession' | 'latestForSession' | 'setSessionAwaiting' | 'setTicketEmail'>
  queue: Pick<JobQueue, 'enqueue'>
  live: Pick<LivePort, 'changeOwner' | 'planOwnerChange'>
}

export function createHandOff(deps: HandOffDeps): HandOffPort {
  return {
    open: (tenantId, input, trx) => openHandOff(deps, tenantId, input, trx),
    lock: async (tenantId, sessionId, trx) => {
      const r = await deps.ticketsRepo.lockWithHandOffState(tenantId, sessionId, { messages: TRANSCRIPT_MESSAGES, emails: true }, trx)
      return { locked: r.locked, known: r.state }
    },
    plan: (tenantId, input) => planHandOff(deps, tenantId, input),
    onAwaiting: (ctx) => onAwaiting(deps, ctx),
    latestTicketNumber: (tenantId, sessionId) => deps.ticketsRepo.latestNumberForSession(tenantId, sessionId),
  }
}

export async function openHandOff(deps: HandOffDeps, tenantId: string, input: HandOffInput, trx: Db): Promise<HandOffResult> {
  const { session } = input
  // one round trip for what the hand-off reads: the session's tickets, its messages for the transcript, e-mails it holds
  const readTranscript = !Array.isArray(input.transcript)
  const follows = !!(input.followUp || input.awaitEmail)
  const state =
    input.known ?? (await deps.ticketsRepo.handOffState(tenantId, session.id, { messages: readTranscript ? TRANSCRIPT_MESSAGES : 0, emails: follows }, trx))
  const transcript = Array.isArray(input.transcript) ? input.transcript : [...state.messages.map(transcriptEntry), ...input.transcript.plus]
  const { ticket, created, followUp } = await deps.tickets.open(
    tenantId,
    ticketInput(deps, input, transcript),
    trx,
    state,
    follows
      ? (ticketEmailEnc) =>
          followUpWrite(deps.cipher, {
            sessionId: session.id,
            ticketEmailEnc,
            candidates: [input.followUp?.question.originalEnc ?? null, ...state.emailCandidates],
            sessionByCaller: !!input.callerWritesSession,
          })
      : undefined,
  )
  const text = saying(input, created, ticket.ticket_number, follows && !!input.followUp && !ticket.user_email_enc)
  // the conversation goes to the team (a reopened ticket's assignee has it at once)
  let ownerEvent: OwnerEventWrite | undefined
  const moved = await deps.live.changeOwner(
    tenantId,
    session.id,
    {
      to: 'queue',
      from: ['bot', 'queue'],
      assigneeUserId: ticket.assignee_user_id,
      by: input.followUp ? { type: 'system' } : { type: 'visitor' },
      reason: input.trigger,
      ticketId: ticket.id,
      ...(input.callerWritesSession ? { collect: (w: OwnerEventWrite) => (ownerEvent = w) } : {}),
    },
    trx,
    input.locked,
  )
  return {
    ticketId: ticket.id,
    ticketNumber: ticket.ticket_number,
    created,
    priority: ticket.priority,
    text,
    owner: moved.to,
    ...(ownerEvent ? { ownerEvent } : {}),
    ...(followUp?.sessionByCaller ? { sessionFollowUp: { email: followUp.email, awaiting: followUp.awaiting } } : {}),
  }
}

/** The ticket's fields from a hand-off's input. */
const ticketInput = (deps: Pick<HandOffDeps, 'cipher'>, input: Omit<HandOffInput, 'transcript'>, transcript: TranscriptEntry[]): OpenTicketInput => ({
  sessionId: input.session.id,
  botId: input.botId,
  trigger: input.trigger,
  primaryQuestion: input.primaryQuestion,
  primaryQuestionOriginalEnc: input.primaryQuestionOriginalEnc,
  transcript,
  userNote: input.userNote ?? null,
  identity: readIdentity(input.session, deps.cipher),
  visitorEmailEnc: input.session.visitor_email_enc,
  evidence: input.evidence ?? [],
})

/** What the bot says: the ticket opened or added to; and, when it follows up on a ticket without an e-mail, the ask for one. */
function saying(input: Pick<HandOffInput, 'say' | 'language'>, created: boolean, ticketNumber: string, askEmail: boolean) {
  const text = handOffText(created ? input.say : 'existing', input.language, ticketNumber)
  // the session now waits for an e-mail when the ticket still has none (an address found in the conversation is on it already)
  return askEmail ? `${text} ${followUpText('ask_email', input.language)}` : text
}

/** HandOffPort.plan: `open` and the owner change, planned from a read without a lock for the turn's own statement. */
async function planHandOff(deps: HandOffDeps, tenantId: string, input: PlanInput): Promise<PlannedHandOff | null> {
  const { session } = input
  const snap = input.createdVersion
    ? { session: { owner: session.owner, bot_id: session.bot_id, version: input.createdVersion }, state: NOTHING_YET }
    : await deps.ticketsRepo.handOffSnapshot(tenantId, session.id, { messages: TRANSCRIPT_MESSAGES, emails: true })
  if (!snap || snap.session.owner !== 'bot') return null
  const { state } = snap
  const transcript = [...state.messages.map(transcriptEntry), ...input.transcript.plus]
  const planned = await deps.tickets.plan(
    tenantId,
    { ...ticketInput(deps, input, transcript), sessionId: session.id },
    state,
    sql<boolean>`(SELECT ok FROM hg)`,
    (ticketEmailEnc) =>
      followUpWrite(deps.cipher, {
        sessionId: session.id,
        ticketEmailEnc,
        candidates: [input.followUp.question.originalEnc, ...state.emailCandidates],
        sessionByCaller: true,
      }),
  )
  if (!planned) return null
  const { ticket, created } = planned
  const change = await deps.live.planOwnerChange(
    tenantId,
    session.id,
    { to: 'queue', from: ['bot', 'queue'], assigneeUserId: ticket.assignee_user_id, by: { type: 'system' }, reason: input.trigger, ticketId: ticket.id },
    snap.session,
  )
  if (!change) return null
  const placeholder = ticket.ticket_number === null ? NUMBER_SLOT : null
  const text = saying(input, created, ticket.ticket_number ?? NUMBER_SLOT, !ticket.user_email_enc)
  const f = planned.followUp
  return {
    write: { sessionVersion: snap.session.version, ctes: planned.ctes, sent: planned.sent, placeholder },
    text,
    ticket: { number: ticket.ticket_number ?? NUMBER_SLOT, created, priority: ticket.priority },
    ownerEvent: change.write,
    sessionFollowUp: f ? { email: f.email, awaiting: f.awaiting } : null,
    done(ticketNumber) {
      planned.written()
      const number = ticket.ticket_number ?? ticketNumber ?? ''
      return { ticketId: ticket.id, ticketNumber: number, created, priority: ticket.priority, text: text.replace(NUMBER_SLOT, number), owner: change.to }
    },
  }
}

/**
 * A hand-off's follow-up, written by its ticket's own statement (inside the turn's transaction, before the
 * notification job can read the ticket): a ticket without an e-mail takes one the visitor already wrote in this
 * conversation (`candidates`: the encrypted originals of the turn's question and of its last visitor messages,
 * newest first; kept encrypted, redacted in the text), and the session keeps it too; then the session waits for an
 * e-mail when there still is none, else for the answer to "anything else?". The visitor's next message goes to
 * `onAwaiting`.
 */
function followUpWrite(
  cipher: HandOffDeps['cipher'],
  p: { sessionId: string; ticketEmailEnc: string | null; candidates: Array<string | null>; sessionByCaller: boolean },
): FollowUpWrite {
  let found: { enc: string; hash: string } | null = null
  if (!p.ticketEmailEnc) {
    for (const enc of p.candidates) {
      const email = extractEmail(decryptOrNull(cipher, enc) ?? '')
      if (!email) continue
      found = { enc: cipher.encrypt(email), hash: cipher.emailHash(email) }
      break
    }
  }
  return { sessionId: p.sessionId, email: found, awaiting: p.ticketEmailEnc || found ? null : 'email', sessionByCaller: p.sessionByCaller }
}

async function onAwaiting(deps: HandOffDeps, { tenantId, session, message }: Parameters<AwaitingHandler>[0]) {
  const { db, clock, cipher, repo } = deps
  if (session.awaiting !== 'email') return { emailSaved: false }
  const original = message.originalEnc ? (decryptOrNull(cipher, message.originalEnc) ?? message.text) : message.text
  const address = extractEmail(original)
  if (address) {
    const now = clock.now()
    const email = { enc: cipher.encrypt(address), hash: cipher.emailHash(address) }
    await db.transaction().execute(async (trx) => {
      await repo.lockSession(tenantId, session.id, trx)
      const ticket = await repo.latestForSession(tenantId, session.id, trx)
      await repo.setSessionAwaiting(tenantId, session.id, null, trx, email)
      if (ticket) {
        await repo.setTicketEmail(tenantId, ticket.id, email, now, trx)
        await enqueueTicketNotification(deps.queue, tenantId, ticket.id, 'email_added', trx)
      }
    })
    return { emailSaved: true }
  }
  // "no": the visitor will read the team's reply in the chat
  if (isNegativeReply(message.text)) await repo.setSessionAwaiting(tenantId, session.id, null)
  return { emailSaved: false }
}
