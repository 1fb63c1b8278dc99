import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../../http/schemas.js'

export const PiiEventsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
})

export const PiiEvent = Type.Object({
  id: Uuid,
  entity_type: Type.String(),
  action: Type.Union([Type.Literal('redacted'), Type.Literal('original_viewed'), Type.Literal('original_deleted')]),
  direction: Type.Union([Type.Literal('message'), Type.Literal('ticket')]),
  count: Type.Integer(),
  session_id: Nullable(Uuid),
  ticket_id: Nullable(Uuid),
  actor_user_id: Nullable(Uuid),
  created_at: DateTime,
})

export const PiiEventList = Type.Object({ items: Type.Array(PiiEvent), total: Type.Integer() })

export const RetentionQuery = Type.Object({
  retention_days: Type.Integer({ minimum: 1, maximum: 3650, default: 365 }),
})

export const RetentionResult = Type.Object({ deleted_count: Type.Integer() })
