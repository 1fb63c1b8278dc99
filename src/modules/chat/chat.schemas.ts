import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'
import { AttachmentIds, AttachmentList } from '../attachments/attachments.schemas.js'

/** Who answers a conversation (live conversation): chat_ended is owner != bot, for clients written before it. */
export const Owner = Type.Union([Type.Literal('bot'), Type.Literal('queue'), Type.Literal('human'), Type.Literal('closed')])

export const MAX_QUESTION_CHARS = 1000

export const ChatRequest = Type.Object({
  /** may be empty when `attachment_ids` are sent (a message of files alone) */
  question: Type.String({ maxLength: MAX_QUESTION_CHARS }),
  session_id: Type.Optional(Nullable(Uuid)),
  bot_public_id: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  attachment_ids: Type.Optional(AttachmentIds),
})

const SourceRef = Type.Object({ title: Type.String(), url: Type.String() })

export const ChatTurnResponse = Type.Object({
  text: Type.String(),
  session_id: Uuid,
  message_id: Uuid,
  chat_ended: Type.Boolean(),
  ticket_number: Type.Optional(Type.String()),
  delivered_to_operator: Type.Boolean(),
  source_documents: Type.Array(Uuid),
  sources: Type.Array(SourceRef),
  tokens_used: Type.Integer(),
  owner: Owner,
  pending_action: Type.Optional(
    Type.Object(
      {
        call_id: Uuid,
        action: Type.String(),
        summary: Type.String(),
        arguments: Type.Record(Type.String(), Type.Unknown()),
      },
      { description: 'a write action waiting for the visitor: POST /chat/{session_id}/actions/{call_id}/confirm' },
    ),
  ),
})

export const ActionCallParams = Type.Object({ session_id: Uuid, call_id: Uuid })
export const ConfirmActionBody = Type.Object({ approve: Type.Boolean() })
export const ConfirmActionResponse = Type.Object({
  status: Type.String({ description: 'ok | http_error | timeout | refused | blocked | cancelled (or pending/running)' }),
  text: Type.Optional(Type.String({ description: 'what the bot said about the outcome (also in the conversation); absent on a replay' })),
})

export const EscalateTriggerSchema = Type.Union([Type.Literal('user_request'), Type.Literal('answer_rejected'), Type.Literal('llm_unavailable')])

export const EscalateRequest = Type.Object({
  user_note: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
  trigger: Type.Optional(EscalateTriggerSchema),
  failure_type: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  original_user_message: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
})

export const EscalateResponse = Type.Object({
  message: Type.String(),
  ticket_number: Type.String(),
  chat_ended: Type.Boolean(),
  delivered_to_operator: Type.Boolean(),
  owner: Owner,
})

export const SessionParams = Type.Object({ session_id: Uuid })
export const MessageParams = Type.Object({ message_id: Uuid })

export const Page = (max: number, dflt: number) =>
  Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: max, default: dflt }),
    offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  })

/** The session's language once known (#40): detected from a clear message, chosen by the visitor, or the fallback. */
export const SessionLanguage = {
  language: Nullable(Type.String()),
  language_source: Nullable(Type.Union([Type.Literal('detected'), Type.Literal('visitor'), Type.Literal('fallback')])),
}

const Channel = Type.Union([Type.Literal('widget'), Type.Literal('api'), Type.Literal('email')])

export const SessionListItem = Type.Object({
  session_id: Uuid,
  bot_public_id: Type.String(),
  /** where the conversation came in (#38): the widget, POST /chat, or e-mail */
  channel: Channel,
  /** an e-mail conversation's subject (its first mail's, redacted as stored); null for other channels (#52) */
  subject: Type.Optional(Nullable(Type.String())),
  mode: Type.String(),
  message_count: Type.Integer(),
  last_question: Nullable(Type.String()),
  last_answer_preview: Nullable(Type.String()),
  last_activity: DateTime,
  chat_ended: Type.Boolean(),
  ticket_number: Nullable(Type.String()),
  owner: Owner,
  assignee_name: Nullable(Type.String()),
  /** the visitor left a queued or person-owned conversation (no open widget, no message for VISITOR_GONE_MINUTES) */
  visitor_gone: Type.Boolean(),
  ...SessionLanguage,
})
/** The conversation list's query: a page, a search, one channel (additions beyond the contract, #38 and #39). */
export const SessionListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  channel: Type.Optional(Channel),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: "search: a ticket number or a visitor's e-mail address exactly, or words of the conversation's messages (full-text, prefixes)",
    }),
  ),
})
export const ChatSessionListResponse = Type.Object({ sessions: Type.Array(SessionListItem), total: Type.Integer() })

export const LogQuery = Type.Object({ include_original: Type.Boolean({ default: false }) })

const Role = Type.Union([Type.Literal('user'), Type.Literal('assistant')])
const FeedbackValue = Type.Union([Type.Literal('none'), Type.Literal('up'), Type.Literal('down')])

/** An action call of the turn (actions module): no secret; arguments as the call log keeps them (PII redacted, visitor values named). */
const TranscriptActionCall = Type.Object({
  id: Uuid,
  action: Nullable(Type.String({ description: 'the action name; null once the action is deleted' })),
  status: Type.String({ description: 'pending | running | ok | http_error | timeout | refused | blocked | cancelled' }),
  http_status: Nullable(Type.Integer()),
  latency_ms: Nullable(Type.Integer()),
  arguments: Type.Record(Type.String(), Type.Unknown()),
  created_at: DateTime,
})

export const ChatMessageLogItem = Type.Object({
  id: Uuid,
  session_id: Uuid,
  role: Role,
  content: Type.String(),
  content_original: Nullable(Type.String()),
  content_original_available: Type.Boolean(),
  feedback: FeedbackValue,
  ideal_answer: Nullable(Type.String()),
  created_at: DateTime,
  from_operator: Type.Boolean(),
  /** The member who wrote an operator message (display name, else the e-mail's local part); null for others. */
  author_name: Nullable(Type.String()),
  source_documents: Type.Array(Type.String()),
  /** The documents the answer cited, by title, with their public address when they have one. */
  cited_documents: Type.Array(Type.Object({ id: Uuid, title: Type.String(), url: Nullable(Type.String()) })),
  sources: Type.Array(SourceRef),
  tokens_used: Type.Integer(),
  /** Stage timings (ms), guard and decision outcomes, retrieval scores: no message text. */
  debug: Nullable(Type.Record(Type.String(), Type.Unknown())),
  /** The action calls this message's turn made (a write: under the message that tells its outcome, once approved). */
  action_calls: Type.Array(TranscriptActionCall),
  /** an operator's message: when its mail left for the visitor (an e-mail ticket's at once; null: not mailed) */
  mailed_at: Type.Optional(Nullable(DateTime)),
  /** The files the visitor sent with this message (GET /attachments/{id}). */
  attachments: AttachmentList,
})
export const ChatMessageLogResponse = Type.Object({ session_id: Uuid, messages: Type.Array(ChatMessageLogItem) })

export const DeleteOriginalResponse = Type.Object({ deleted_count: Type.Integer() })

export const MessageFeedbackRequest = Type.Object({
  feedback: FeedbackValue,
  ideal_answer: Type.Optional(Nullable(Type.String({ maxLength: 8000 }))),
})
export const MessageFeedbackResponse = Type.Object({ id: Uuid, feedback: FeedbackValue, ideal_answer: Nullable(Type.String()) })

export const BadAnswerItem = Type.Object({
  message_id: Uuid,
  session_id: Uuid,
  question: Nullable(Type.String()),
  answer: Type.String(),
  ideal_answer: Nullable(Type.String()),
  created_at: DateTime,
})
export const BadAnswerListResponse = Type.Object({ items: Type.Array(BadAnswerItem), total: Type.Integer() })

export const MessageResponse = Type.Object({
  id: Uuid,
  role: Role,
  content: Type.String(),
  created_at: DateTime,
  from_operator: Type.Boolean(),
  /** the member who wrote an operator message */
  author_name: Nullable(Type.String()),
})
export const ChatHistoryResponse = Type.Object({
  session_id: Uuid,
  messages: Type.Array(MessageResponse),
  chat_ended: Type.Boolean(),
  ticket_number: Nullable(Type.String()),
  owner: Owner,
  assignee_name: Nullable(Type.String()),
  /** the visitor left a queued or person-owned conversation (no open widget, no message for VISITOR_GONE_MINUTES) */
  visitor_gone: Type.Boolean(),
  ...SessionLanguage,
})
