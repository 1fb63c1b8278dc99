import type { ColumnType, Generated } from 'kysely'
import type { Role } from '../../http/permissions.js'
import type { Json, NullableJson, NullableTimestamp, Timestamp } from './foundation.js'

export interface InvitationsTable {
  id: Generated<string>
  tenant_id: string
  email: string
  role: Role
  /** null: every bot */
  bot_ids: NullableJson<string[]>
  can_view_original: Generated<boolean>
  token_hash: string
  /** expired is derived from expires_at */
  status: Generated<'pending' | 'accepted' | 'revoked'>
  invited_by_user_id: string | null
  expires_at: Timestamp
  accepted_at: NullableTimestamp
  revoked_at: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}

export interface AuditLogTable {
  /** int8, read as text */
  id: ColumnType<string, never, never>
  tenant_id: string
  at: Timestamp
  actor_user_id: string | null
  actor_email: string | null
  ip: string | null
  action: string
  item_type: string
  item_id: string | null
  detail: Json<Record<string, unknown>>
}

export interface TeamTables {
  invitations: InvitationsTable
  audit_log: AuditLogTable
}
