import type { RawBuilder } from 'kysely'
import type { SessionOwner } from '../../db/schema/chat.js'

/**
 * Who answers a conversation, as the modules that move it see it (the live module implements it): the chat
 * (a visitor's message to a person), the escalations module (a hand-off, an assignment, a resolution). Every
 * call runs inside the caller's transaction, so an owner change, its event and its webhook commit with the
 * change that caused it.
 */
export type { SessionOwner }

/** Who made a change: a member, the visitor, or the service itself (a hand-off verdict, auto-assignment). */
export type ChangeActor = { type: 'user'; userId: string | null } | { type: 'visitor' } | { type: 'system' }

export interface OwnerChange {
  to: SessionOwner
  by: ChangeActor
  /** Why, for the log (a hand-off's trigger, 'assigned', 'resolved', 'return_to_bot', 'closed' ...). */
  reason: string
  /** The member a person-owned conversation is with (the ticket's assignee); null for none. */
  assigneeUserId?: string | null
  /** Only from these owners; otherwise nothing changes (a closed chat stays closed). */
  from?: readonly SessionOwner[]
  /** The ticket the change is about, for the events. */
  ticketId?: string | null
  /** A person-owned conversation passed to another member: an event even though the owner stays human. */
  reassigned?: boolean
  /**
   * The change's event and the session's owner columns are not written by the change: they are handed here, for
   * the caller's next statement on the session row (a turn's write) to write, in the same transaction. Nothing is
   * handed when the owner does not change.
   */
  collect?: (write: OwnerEventWrite) => void
}

/**
 * An owner change's session columns and live event, written by another statement's UPDATE of the session row
 * (`sessionSet`, which also advances the session's live seq; the UPDATE is the CTE named by `ctes`' argument and
 * returns `live_seq`) and CTEs after it (the change notice, the workspace's seq, the event, selected as `le`).
 */
export interface OwnerEventWrite {
  sessionSet: RawBuilder<unknown>
  chatEnded: boolean
  /** The session waits for nothing more (`awaiting` cleared): the statement's own `awaiting` gives way to this. */
  clearAwaiting: boolean
  ctes: (sessionCte: string) => RawBuilder<unknown>
}

export interface LiveMessage {
  id: string
  sessionId: string
  role: 'user' | 'assistant'
  content: string
  createdAt: Date
  fromOperator: boolean
  authorUserId?: string | null
  /** an operator's files sent with it (issue 54): in the message's event, for the visitor and the team */
  attachments?: { id: string; name: string; content_type: string; size: number; kind: 'image' | 'document' }[]
}

export interface LivePort {
  /**
   * Moves the session's owner; returns the owner before and after (equal when nothing changed). `locked`: the
   * session's row as the caller's transaction has locked it already (its owner and bot), so it is not locked again.
   */
  changeOwner(
    tenantId: string,
    sessionId: string,
    change: OwnerChange,
    trx: unknown,
    locked?: { owner: SessionOwner; bot_id: string },
  ): Promise<{ from: SessionOwner; to: SessionOwner }>
  /**
   * An owner change planned for another statement on the session row (a turn's hand-off written in one statement),
   * from the row as read without a lock (`s`: its owner and bot): `write` is its columns and event (null: no
   * change). Null when the change needs statements of its own (a person named, auto-assignment or the workspace's
   * webhooks on): make it with `changeOwner` in a transaction then.
   */
  planOwnerChange(
    tenantId: string,
    sessionId: string,
    change: Omit<OwnerChange, 'collect'>,
    s: { owner: SessionOwner; bot_id: string },
  ): Promise<{ from: SessionOwner; to: SessionOwner; write: OwnerEventWrite | null } | null>
  /** A message of a person-owned conversation (the visitor's, or an operator's) reaches both streams. */
  messagePosted(tenantId: string, message: LiveMessage, trx: unknown): Promise<void>
}

/** Tests and tools without the live module: nothing moves, nothing is streamed. */
export const noLive: LivePort = {
  async changeOwner(_t, _s, change) {
    return { from: change.to, to: change.to }
  },
  async planOwnerChange(_t, _s, change) {
    return { from: change.to, to: change.to, write: null }
  },
  async messagePosted() {},
}
