import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'

export const LiveTicketParams = Type.Object({ ticket_id: Uuid })

export const OperatorMessageBody = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: 8000 }),
    internal: Type.Boolean({ default: false, description: 'a note for the team only: never reaches the visitor' }),
    suggestion_id: Type.Optional(Uuid),
    translate: Type.Optional(
      Type.Boolean({
        description:
          "send the workspace model's translation into the session's language (#40); the original stays with the team as a note beside it. 409 visitor_language_unknown before the language is known, 502 translation_failed (nothing sent)",
      }),
    ),
  },
  { additionalProperties: false },
)

export const OperatorMessageResponse = Type.Object({
  id: Uuid,
  role: Type.Literal('assistant'),
  from_operator: Type.Literal(true),
  internal: Type.Boolean(),
  author_name: Nullable(Type.String()),
  content: Type.String(),
  created_at: DateTime,
  /** Sent messages: when the mail carrying it left for the customer's inbox (an e-mail ticket: at once), null while not mailed */
  mailed_at: Type.Optional(Nullable(DateTime)),
  /** With `translate`: the message as the operator wrote it (kept for the team), and the language it was sent in. */
  original: Type.Optional(Type.String()),
  language: Type.Optional(Type.String()),
})

export const TypingBody = Type.Object(
  { on: Type.Boolean(), internal: Type.Optional(Type.Boolean({ description: 'typing a note: only the team sees it' })) },
  { additionalProperties: false },
)

/** Where a reconnecting stream starts: the last seq it saw (Last-Event-ID wins over it). */
export const TeamEventsQuery = Type.Object({ after: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })) })
