import { AttachmentList } from '../attachments/attachments.schemas.js'
import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'

export const TicketStatusSchema = Type.Union([Type.Literal('open'), Type.Literal('in_progress'), Type.Literal('resolved')])

export const OwnerSchema = Type.Union([Type.Literal('bot'), Type.Literal('queue'), Type.Literal('human'), Type.Literal('closed')])

export const TicketParams = Type.Object({ ticket_id: Uuid })

export const TicketQuery = Type.Object({ include_original: Type.Boolean({ default: false }) })

export const TicketListQuery = Type.Object({
  status: Type.Optional(TicketStatusSchema),
  include_original: Type.Boolean({ default: false }),
  assignee: Type.Optional(
    Type.Union([Type.Literal('me'), Type.Literal('unassigned'), Uuid], {
      description: "the inbox's Mine (me), Unassigned, or one member's tickets (a user id); without it: all",
    }),
  ),
  needs_person: Type.Optional(
    Type.Boolean({
      description: "the inbox's default view: open, or in progress with nobody assigned, not in a closed conversation; oldest first, visitors who left last",
    }),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: "search: a ticket number or a visitor's e-mail address exactly, or words of the question, the note and the transcript (full-text, prefixes)",
    }),
  ),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 100 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
})

const TranscriptEntry = Type.Object({
  role: Type.String(),
  content: Type.String(),
  created_at: DateTime,
  /** an operator's message: when its mail left for the visitor's inbox (null: not mailed, e.g. read in the chat) */
  mailed_at: Type.Optional(Nullable(DateTime)),
  /** the files a visitor's message sent (GET /attachments/{id}); absent in a ticket's stored copy */
  attachments: Type.Optional(AttachmentList),
})

const Identity = Type.Object({ id: Type.String(), email: Nullable(Type.String()), name: Nullable(Type.String()), plan: Nullable(Type.String()) })

/** One retrieval hit that led to the hand-off (ids and scores, no text), or the integration's failure_type. */
const EvidenceItem = Type.Object(
  {
    chunk_id: Type.Optional(Nullable(Type.String())),
    faq_id: Type.Optional(Nullable(Type.String())),
    document_id: Type.Optional(Nullable(Type.String())),
    title: Type.Optional(Type.String()),
    confidence: Type.Optional(Nullable(Type.Number())),
    bm25: Type.Optional(Nullable(Type.Number())),
    lexical: Type.Optional(Nullable(Type.Number())),
    vector: Type.Optional(Nullable(Type.Number())),
    rrf: Type.Optional(Nullable(Type.Number())),
    failure_type: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)

export const TicketNote = Type.Object({ id: Uuid, author_name: Nullable(Type.String()), content: Type.String(), created_at: DateTime })

export const EscalationTicket = Type.Object({
  id: Uuid,
  ticket_number: Type.String(),
  session_id: Nullable(Uuid),
  bot_public_id: Nullable(Type.String()),
  status: TicketStatusSchema,
  priority: Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('critical')]),
  trigger: Type.Union([
    Type.Literal('user_request'),
    Type.Literal('answer_rejected'),
    Type.Literal('llm_unavailable'),
    Type.Literal('low_similarity'),
    Type.Literal('no_documents'),
    // an e-mail bot in draft mode: its answer waits on the ticket as a suggested reply (issue 52)
    Type.Literal('email_draft'),
  ]),
  primary_question: Type.String(),
  primary_question_original: Nullable(Type.String()),
  primary_question_original_available: Type.Boolean(),
  transcript: Type.Array(TranscriptEntry),
  user_note: Nullable(Type.String()),
  user_email: Nullable(Type.String()),
  user_name: Nullable(Type.String()),
  user_id: Nullable(Type.String()),
  identity: Nullable(Identity),
  evidence: Type.Array(EvidenceItem),
  resolution_text: Nullable(Type.String()),
  created_at: DateTime,
  updated_at: DateTime,
  resolved_at: Nullable(DateTime),
  assignee_user_id: Nullable(Uuid),
  /** the first operator reply or resolution */
  first_response_at: Nullable(DateTime),
  /** who answers the ticket's conversation: bot, queue, human or closed */
  owner: OwnerSchema,
  /** the conversation's language once known (#40): what an operator's message may be translated into */
  language: Type.Optional(Nullable(Type.String())),
  /** the member who has the conversation while its owner is human */
  assignee_name: Nullable(Type.String()),
  /** the visitor's messages since the team last wrote in the conversation */
  unread_count: Type.Integer(),
  /** the visitor left (no open widget and no message for VISITOR_GONE_MINUTES): out of the queue until they come back */
  visitor_gone: Type.Boolean(),
  /** where the conversation came from: the widget, the API or e-mail (a ticket without a conversation: api) */
  channel: Type.Union([Type.Literal('widget'), Type.Literal('api'), Type.Literal('email')]),
  /** an e-mail conversation's subject (its first mail's, redacted as stored); null for other channels */
  subject: Nullable(Type.String()),
  /** internal notes on the conversation, oldest first (the single ticket only; never shown to the visitor) */
  notes: Type.Optional(Type.Array(TicketNote)),
  /** resolving: when the reply was mailed (an e-mail ticket's goes at once; a chat's after the grace period, so null here) */
  reply_mailed_at: Type.Optional(Nullable(DateTime)),
})

export const EscalationList = Type.Object({
  tickets: Type.Array(EscalationTicket),
  total: Type.Integer(),
  /** with needs_person: how many of `total` are conversations whose visitor left (the rest are still waiting) */
  visitor_gone_total: Type.Optional(Type.Integer()),
})

export const AssignRequest = Type.Object(
  { assignee_user_id: Nullable(Uuid) },
  { additionalProperties: false, description: 'a member with ticket permission (agents: only themselves); null unassigns' },
)

export const ResolveRequest = Type.Object({ resolution_text: Type.String({ minLength: 1, maxLength: 8000 }) })

export const DeleteOriginalResponse = Type.Object({ deleted_count: Type.Integer() })
