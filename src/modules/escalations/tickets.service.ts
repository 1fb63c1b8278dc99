import { randomUUID } from 'node:crypto'
import { sql, type RawBuilder } from 'kysely'
import type { TicketPriority, TicketTrigger, TranscriptEntry } from '../../db/schema/chat.js'
import type { Db } from '../../db/client.js'
import type { Clock } from '../../lib/clock.js'
import { decryptOrNull, type Cipher } from '../../lib/crypto.js'
import { ticketPriority } from './tickets.fns.js'
import {
  appendCtes,
  insertCtes,
  type AlsoWritten,
  type FollowUpWrite,
  type HandOffState,
  type NewTicket,
  type TicketRow,
  type TicketsRepo,
} from './tickets.repo.js'

/** What an identified visitor's token told us (claims are already capped in length). */
export interface TicketIdentity {
  user_id?: string | null
  email?: string | null
  name?: string | null
  plan_tier?: string | null
}

export interface OpenTicketInput {
  sessionId: string | null
  botId: string | null
  trigger: TicketTrigger
  /** Redacted. */
  primaryQuestion: string
  primaryQuestionOriginalEnc: string | null
  /** Redacted messages. */
  transcript: TranscriptEntry[]
  userNote?: string | null
  identity?: TicketIdentity | null
  /** An e-mail the visitor left, already encrypted. */
  visitorEmailEnc?: string | null
  evidence?: unknown[]
}

/**
 * A hand-off in a conversation whose ticket was resolved less than this long ago reopens that ticket (with its
 * number, history and assignee) instead of opening another: what help desks do when a customer writes back.
 */
export const REOPEN_WINDOW_MS = 7 * 24 * 3600 * 1000

/**
 * Ticket creation (the /escalations endpoints and notifications live in their own module and build on
 * the same table). `afterCreate` runs inside the creating transaction: enqueue notifications there, so a
 * ticket and its notification commit together.
 */
export function createTicketsService(deps: {
  clock: Clock
  cipher: Pick<Cipher, 'encrypt' | 'decrypt' | 'emailHash'>
  repo: TicketsRepo
  afterCreate?: (tenantId: string, ticket: TicketRow, trx: Db) => Promise<void>
  /** Written by a new ticket's own statement (its notification job: no round trip of its own); `written` runs after it. */
  createdWrites?: (tenantId: string) => AlsoWritten & { written: () => void }
  /**
   * Whether `afterCreate` writes nothing for the workspace (its webhooks: no endpoint): a new ticket can then be
   * planned for another statement (`plan`). Absent: never.
   */
  createdQuiet?: (tenantId: string) => Promise<boolean>
  /** Runs inside the transaction that reopened a resolved ticket. */
  afterReopen?: (tenantId: string, ticket: TicketRow, trx: Db) => Promise<void>
}) {
  const { clock, cipher, repo } = deps

  /** A new ticket's fields from the hand-off's input. */
  function newTicket(input: OpenTicketInput, now: Date): NewTicket {
    const id = input.identity ?? null
    // the address in clear only for its search hash (1665_email_search): the visitor's own, else the identity's
    const email = (input.visitorEmailEnc ? decryptOrNull(cipher, input.visitorEmailEnc) : null) ?? id?.email ?? null
    return {
      sessionId: input.sessionId,
      botId: input.botId,
      priority: ticketPriority(input.trigger, id?.plan_tier),
      trigger: input.trigger,
      primaryQuestion: input.primaryQuestion.slice(0, 4000),
      primaryQuestionOriginalEnc: input.primaryQuestionOriginalEnc,
      transcript: input.transcript,
      userNote: input.userNote?.slice(0, 4000) ?? null,
      userEmailEnc: input.visitorEmailEnc ?? (id?.email ? cipher.encrypt(id.email) : null),
      userEmailHash: email ? cipher.emailHash(email) : null,
      userName: id?.name ?? null,
      userId: id?.user_id ?? null,
      evidence: input.evidence ?? [],
      now,
    }
  }

  /** The session's resolved ticket that a hand-off now reopens (resolved within REOPEN_WINDOW_MS), if any. */
  function reopens(state: Pick<HandOffState, 'newest'>, now: Date) {
    const since = new Date(now.getTime() - REOPEN_WINDOW_MS)
    return state.newest?.status === 'resolved' && state.newest.resolved_at && state.newest.resolved_at >= since ? state.newest : null
  }

  return {
    /**
     * Opens a ticket for the session, or adds to the one it already has open (created: false). Call
     * inside a transaction that holds the session row lock, so two escalations of one session cannot
     * both open one.
     */
    async open(
      tenantId: string,
      input: OpenTicketInput,
      trx: Db,
      /** The session's tickets as the caller read them in this transaction (handOffState); read here when absent. */
      known?: Pick<HandOffState, 'open' | 'newest'>,
      /** A hand-off's follow-up, decided from the e-mail the ticket has (encrypted; null: none) and written by the ticket's statement. */
      followUp?: (ticketEmailEnc: string | null) => FollowUpWrite,
    ): Promise<{ ticket: TicketRow; created: boolean; followUp?: FollowUpWrite }> {
      const now = clock.now()
      if (input.sessionId) {
        const state = known ?? (await repo.handOffState(tenantId, input.sessionId, { messages: 0, emails: false }, trx))
        const patch = { transcript: input.transcript, userNote: input.userNote ?? null, now }
        if (state.open) {
          const f = followUp?.(state.open.user_email_enc)
          const ticket = await repo.appendToTicket(tenantId, state.open.id, patch, trx, f)
          return { ticket, created: false, ...(f ? { followUp: f } : {}) }
        }
        // the same conversation needs help again soon after its ticket was resolved: that ticket reopens
        const resolved = reopens(state, now)
        const f = resolved ? followUp?.(resolved.user_email_enc) : undefined
        const reopened = resolved && (await repo.reopen(tenantId, resolved.id, patch, trx, f))
        if (reopened) {
          await deps.afterReopen?.(tenantId, reopened, trx)
          return { ticket: reopened, created: false, ...(f ? { followUp: f } : {}) }
        }
      }
      const also = deps.createdWrites?.(tenantId)
      const fields = newTicket(input, now)
      const f = followUp?.(fields.userEmailEnc)
      const ticket = await repo.insertNumbered(tenantId, fields, trx, f, also)
      also?.written()
      await deps.afterCreate?.(tenantId, ticket, trx)
      return { ticket, created: true, ...(f ? { followUp: f } : {}) }
    },

    /**
     * `open` planned from a read made before the session's lock (handOffSnapshot), as CTEs for the caller's statement:
     * the ticket is written only when `when` holds (the caller's check that the session's row is still the version
     * read), and an open ticket only while its row is the version read too. Null when the ticket needs more than
     * that statement: a resolved ticket reopens, or a new ticket's `afterCreate` writes (`createdQuiet` says not).
     */
    async plan(
      tenantId: string,
      input: OpenTicketInput & { sessionId: string },
      state: Pick<HandOffState, 'open' | 'newest'>,
      when: RawBuilder<boolean>,
      followUp?: (ticketEmailEnc: string | null) => FollowUpWrite,
    ): Promise<PlannedTicket | null> {
      const now = clock.now()
      if (state.open) {
        const o = state.open
        const f = followUp?.(o.user_email_enc)
        const patch = { transcript: input.transcript, userNote: input.userNote ?? null, now }
        return {
          created: false,
          ctes: appendCtes(tenantId, o.id, patch, f, { when, version: o.version }),
          sent: sql<boolean>`true`,
          written: () => {},
          ticket: {
            id: o.id,
            ticket_number: o.ticket_number,
            priority: o.priority,
            assignee_user_id: o.assignee_user_id,
            user_email_enc: f?.email?.enc ?? o.user_email_enc,
          },
          ...(f ? { followUp: f } : {}),
        }
      }
      if (reopens(state, now) || !(await deps.createdQuiet?.(tenantId))) return null
      const fields = newTicket(input, now)
      const f = followUp?.(fields.userEmailEnc)
      const also = deps.createdWrites?.(tenantId)
      const id = randomUUID()
      return {
        created: true,
        ctes: insertCtes(tenantId, { ...fields, id }, f, also, when),
        sent: also?.sent ?? sql<boolean>`true`,
        written: () => also?.written(),
        ticket: { id, ticket_number: null, priority: fields.priority, assignee_user_id: null, user_email_enc: f?.email?.enc ?? fields.userEmailEnc },
        ...(f ? { followUp: f } : {}),
      }
    },
  }
}

/** A ticket's write planned for another statement (TicketsService.plan). */
export interface PlannedTicket {
  created: boolean
  /** CTEs (no leading comma) defining `t`, the ticket written (RETURNING *); no row when the plan no longer held. */
  ctes: RawBuilder<unknown>
  /** For the statement's final SELECT (always true): what `ctes` also wrote sends its notices. */
  sent: RawBuilder<boolean>
  /** Runs once the statement has run. */
  written: () => void
  /** The ticket as written; a new one's number is given by the statement (t.ticket_number). */
  ticket: { id: string; ticket_number: string | null; priority: TicketPriority; assignee_user_id: string | null; user_email_enc: string | null }
  followUp?: FollowUpWrite
}

export type TicketsService = ReturnType<typeof createTicketsService>
