import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'
import { AttachmentList } from '../attachments/attachments.schemas.js'

export const LiveTicketParams = Type.Object({ ticket_id: Uuid })

export const OperatorMessageBody = Type.Object(
  {
    content: Type.String({ maxLength: 8000, description: 'may be empty when `attachment_ids` are sent (a reply of files alone)' }),
    internal: Type.Boolean({ default: false, description: 'a note for the team only: never reaches the visitor' }),
    suggestion_id: Type.Optional(Uuid),
    attachment_ids: Type.Optional(
      Type.Array(Uuid, {
        maxItems: 5,
        uniqueItems: true,
        description: 'files uploaded to this ticket (POST /escalations/{ticket_id}/attachments) and not yet sent; not with internal',
      }),
    ),
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
  /** the files sent with it */
  attachments: Type.Optional(AttachmentList),
  /** Sent messages: when the mail carrying it left for the customer's inbox (an e-mail ticket: at once), null while not mailed */
  mailed_at: Type.Optional(Nullable(DateTime)),
  /** With `translate`: the message as the operator wrote it (kept for the team), and the language it was sent in. */
  original: Type.Optional(Type.String()),
  language: Type.Optional(Type.String()),
  /** With `translate`: false when the model gave the words back unchanged and they were sent as written (no note). */
  translated: Type.Optional(Type.Boolean()),
})

export const TypingBody = Type.Object(
  { on: Type.Boolean(), internal: Type.Optional(Type.Boolean({ description: 'typing a note: only the team sees it' })) },
  { additionalProperties: false },
)

/** Where a reconnecting stream starts: the last seq it saw (Last-Event-ID wins over it). */
export const TeamEventsQuery = Type.Object({ after: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })) })
