import type { ColumnType, Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from './foundation.js'

export type ChatChannel = 'api' | 'widget' | 'email'
export type SessionMode = 'identified' | 'anonymous'
export type Feedback = 'none' | 'up' | 'down'
/** `email_draft`: an e-mail bot in draft mode wrote an answer that waits for a person (issue 52, item 4). */
export type TicketTrigger = 'user_request' | 'answer_rejected' | 'llm_unavailable' | 'low_similarity' | 'no_documents' | 'email_draft'
export type TicketStatus = 'open' | 'in_progress' | 'resolved'
export type TicketPriority = 'low' | 'medium' | 'high' | 'critical'
export type QuestionOutcome = 'answered' | 'caveat' | 'escalated' | 'refused'
export type PiiAction = 'redacted' | 'original_viewed' | 'original_deleted'
/** Who answers the visitor (1000_live): the bot, nobody yet (handed off), a person, or nobody ever again. */
export type SessionOwner = 'bot' | 'queue' | 'human' | 'closed'

export interface ChatSessionsTable {
  id: Generated<string>
  tenant_id: string
  bot_id: string
  channel: ChatChannel
  mode: Generated<SessionMode>
  /** Encrypted JSON of the identity-token claims (identified widget sessions). */
  identity_enc: string | null
  /** Encrypted e-mail a visitor left after an escalation. */
  visitor_email_enc: string | null
  /** Keyed hash of that e-mail, for an exact search (1665_email_search; Cipher.emailHash). */
  visitor_email_hash: ColumnType<string | null, string | null | undefined, string | null>
  locale: string | null
  /** Stored form of owner = closed (1000_live); the API presents chat_ended as owner != bot. */
  chat_ended: Generated<boolean>
  /** What the bot is waiting for from the visitor after an escalation ('email', 'anything_else'...). */
  awaiting: string | null
  /** The newest message the widget reported as read. */
  read_message_id: string | null
  message_count: Generated<number>
  /** Redacted. */
  last_question: string | null
  last_answer_preview: string | null
  created_at: Timestamp
  last_activity_at: Timestamp
  owner: Generated<SessionOwner>
  owner_since: NullableTimestamp
  /** The session's newest live event's session_seq. */
  live_seq: ColumnType<string, never, string>
  /** The session's language once known (1650_languages), and whether it was detected, chosen by the visitor or the fallback. */
  language: ColumnType<string | null, string | null | undefined, string | null>
  language_source: ColumnType<
    'detected' | 'visitor' | 'fallback' | null,
    'detected' | 'visitor' | 'fallback' | null | undefined,
    'detected' | 'visitor' | 'fallback' | null
  >
  /** When the visitor was last seen: an open widget stream refreshes it (1640_inbox). */
  visitor_seen_at: NullableTimestamp
  /** The visitor left a queued or person-owned conversation (1640_inbox): out of the queue until they come back. */
  visitor_gone: Generated<boolean>
}

export interface SourceRef {
  title: string
  url: string
}

export interface ChatMessagesTable {
  id: Generated<string>
  tenant_id: string
  session_id: string
  role: 'user' | 'assistant'
  /** Always the redacted text. */
  content: string
  /** AES-GCM of the original, only when redaction changed something. */
  content_original_enc: string | null
  /** Redacted entity counts by type ({EMAIL: 1}); never values. */
  pii_counts: Json<Record<string, number> | null> | null
  feedback: Generated<Feedback>
  ideal_answer: string | null
  from_operator: Generated<boolean>
  /** The member who wrote an operator message (1000_live). */
  author_user_id: Generated<string | null>
  /** Document ids the answer cited. */
  source_documents: Json<string[]>
  sources: Json<SourceRef[]>
  tokens_used: Generated<number>
  /** Stage timings, retrieval scores, decision. */
  debug: Json<Record<string, unknown> | null> | null
  created_at: Timestamp
}

export interface IdempotencyKeysTable {
  tenant_id: string
  /** SHA-256 of the client's key. */
  key: string
  request_hash: string
  status: 'running' | 'done'
  owner_token: string | null
  response: Json<unknown> | null
  /** The exact bytes of the first response, replayed as they were. */
  response_text: string | null
  created_at: Timestamp
  expires_at: Timestamp
}

export interface PiiEventsTable {
  id: Generated<string>
  tenant_id: string
  entity_type: string
  action: PiiAction
  direction: 'message' | 'ticket'
  count: number
  session_id: string | null
  ticket_id: string | null
  actor_user_id: string | null
  created_at: Timestamp
}

export interface TicketCountersTable {
  tenant_id: string
  last: number
}

export interface TranscriptEntry {
  role: string
  content: string
  created_at: string
}

export interface EscalationTicketsTable {
  id: Generated<string>
  tenant_id: string
  ticket_number: string
  seq: number
  session_id: string | null
  bot_id: string | null
  status: Generated<TicketStatus>
  priority: TicketPriority
  trigger: TicketTrigger
  /** Redacted. */
  primary_question: string
  primary_question_original_enc: string | null
  transcript: Json<TranscriptEntry[]>
  user_note: string | null
  user_email_enc: string | null
  /** Keyed hash of the ticket's e-mail, for an exact search (1665_email_search; Cipher.emailHash). */
  user_email_hash: ColumnType<string | null, string | null | undefined, string | null>
  user_name: string | null
  user_id: string | null
  /** The retrieval evidence at escalation time (top chunks with scores). */
  evidence: Json<unknown[]>
  resolution_text: string | null
  created_at: Timestamp
  updated_at: Timestamp
  resolved_at: NullableTimestamp
  assignee_user_id: Generated<string | null>
  /** the first operator reply or resolution (0600_team) */
  first_response_at: NullableTimestamp
  /** the session's visitor_gone, and since when (1640_inbox) */
  visitor_gone: Generated<boolean>
  visitor_gone_at: NullableTimestamp
}

export interface QuestionLogTable {
  id: Generated<string>
  tenant_id: string
  bot_id: string | null
  session_id: string | null
  message_id: string | null
  /** Redacted. */
  question: string
  outcome: QuestionOutcome
  trigger: TicketTrigger | null
  best_score: number | null
  feedback: Generated<Feedback>
  created_at: Timestamp
}

export interface LexicalTermsTable {
  tenant_id: string
  term: string
  df: number
}

export interface LexicalCorpusTable {
  tenant_id: string
  n_chunks: number
  total_len: number
  langs: string[]
  n_embedded: number
  version: number
}

/** An operator's internal note on a conversation: never in chat_messages, never shown to the visitor. */
export interface ConversationNotesTable {
  id: Generated<string>
  tenant_id: string
  session_id: string
  ticket_id: string | null
  author_user_id: string | null
  content: string
  created_at: Timestamp
}

export interface LiveCountersTable {
  tenant_id: string
  last: ColumnType<string, string | number, string | number>
}

/** What the visitors waiting for a person of a bot were last told about availability (the sweep compares with it). */
export interface LiveAvailabilityTable {
  tenant_id: string
  bot_id: string
  online: boolean
  next_open_at: Date | null
  updated_at: Date
}

/** One event of the live streams; seq per tenant (team stream), session_seq per session (widget stream). bigints read as text. */
export interface LiveEventsTable {
  tenant_id: string
  seq: ColumnType<string, string | number, never>
  session_id: string | null
  session_seq: ColumnType<string | null, string | number | null, never>
  bot_id: string | null
  type: string
  internal: Generated<boolean>
  data: Json<Record<string, unknown>>
  created_at: Timestamp
}

export interface ChatTables {
  chat_sessions: ChatSessionsTable
  chat_messages: ChatMessagesTable
  idempotency_keys: IdempotencyKeysTable
  pii_events: PiiEventsTable
  ticket_counters: TicketCountersTable
  escalation_tickets: EscalationTicketsTable
  question_log: QuestionLogTable
  lexical_terms: LexicalTermsTable
  lexical_corpus: LexicalCorpusTable
  conversation_notes: ConversationNotesTable
  live_counters: LiveCountersTable
  live_availability: LiveAvailabilityTable
  live_events: LiveEventsTable
}
