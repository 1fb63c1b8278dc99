import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'

export const AuditEntryOut = Type.Object({
  id: Type.String(),
  at: DateTime,
  actor_user_id: Nullable(Uuid),
  /** the member's address when the entry was written (kept after the member is removed); null for the system */
  actor_email: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  action: Type.String({ description: 'signed_in, created, updated, deleted, exported, showed_original, rotated_key, invited, role_changed, removed, ...' }),
  item_type: Type.String(),
  item_id: Nullable(Type.String()),
  detail: Type.Record(Type.String(), Type.Unknown()),
})

export const AuditLogQuery = Type.Object({
  member: Type.Optional(Uuid),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z_.]+$' })),
  from: Type.Optional(DateTime),
  to: Type.Optional(DateTime),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
})

export const AuditLogPage = Type.Object({ items: Type.Array(AuditEntryOut), next_cursor: Nullable(Type.String()) })
