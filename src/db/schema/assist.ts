import type { Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from './foundation.js'

export type AssistKind = 'suggestion' | 'summary'

export interface AssistCitation {
  n: number
  document_id: string | null
  title: string
  url: string | null
}

/** A suggested reply or a summary written by the model for a person on a ticket (1630_assist). */
export interface AssistDraftsTable {
  id: string
  tenant_id: string
  kind: AssistKind
  ticket_id: string
  session_id: string
  bot_id: string | null
  /** The member who asked. */
  user_id: string | null
  text: string
  language: string
  cited: Json<AssistCitation[]>
  /** The conversation's newest message when it was written. */
  based_on_message_id: string | null
  /** The conversation's messages when it was written (with based_on_message_id: the summary's cache key). */
  message_count: number
  /** The person's instruction ("shorter"), bounded. */
  instruction: string | null
  /** Model tokens it cost (counted in the workspace's token usage). */
  tokens: number
  model_ms: number | null
  used_at: NullableTimestamp
  used_message_id: string | null
  /** Sent exactly as suggested (whitespace aside). */
  used_unedited: boolean | null
  /** The conversation moved on while it was written: answered 409, never shown (its tokens still count). */
  stale: Generated<boolean>
  created_at: Timestamp
}

export interface AssistTables {
  assist_drafts: AssistDraftsTable
}
