import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'
import { INSTRUCTION_CHARS } from './assist.fns.js'

export const AssistTicketParams = Type.Object({ id: Uuid })

export const SuggestBody = Type.Object(
  {
    instruction: Type.Optional(Type.String({ maxLength: INSTRUCTION_CHARS, description: 'how to write this reply, e.g. "shorter", "more formal" (one line)' })),
  },
  { additionalProperties: false },
)

export const SuggestResponse = Type.Object({
  id: Uuid,
  text: Type.String(),
  cited: Type.Array(Type.Object({ n: Type.Integer(), document_id: Nullable(Uuid), title: Type.String(), url: Nullable(Type.String()) })),
  language: Type.String(),
  based_on_message_id: Nullable(Uuid),
})

/** GET /escalations/{id}/draft: the answer an e-mail bot in draft mode wrote and did not send, or null. */
export const WaitingDraftResponse = Type.Object({
  draft: Nullable(
    Type.Object({
      id: Uuid,
      text: Type.String(),
      cited: Type.Array(Type.Object({ n: Type.Integer(), document_id: Nullable(Uuid), title: Type.String(), url: Nullable(Type.String()) })),
      language: Type.String(),
      based_on_message_id: Nullable(Uuid),
      created_at: DateTime,
    }),
  ),
})

export const SummaryResponse = Type.Object({
  summary: Type.String(),
  language: Type.String(),
  message_count: Type.Integer(),
  generated_at: DateTime,
})

/** GET /analytics/summary's `assist`. */
export const AssistFigures = Type.Object({
  suggestions: Type.Integer(),
  used: Type.Integer(),
  used_unedited: Type.Integer(),
  summaries: Type.Integer(),
})
