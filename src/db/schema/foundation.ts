import type { ColumnType, Generated } from 'kysely'
import type { Role } from '../../http/permissions.js'

/** A timestamptz column: read as Date, written as Date or left to its default. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
/** jsonb: written as a JSON string (node-postgres would turn a JS array into a SQL array), read parsed. */
export type Json<T> = ColumnType<T, string | undefined, string>
export type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>

export interface UsersTable {
  id: Generated<string>
  email: string
  password_hash: string
  is_verified: Generated<boolean>
  tenant_id: string | null
  token_version: Generated<number>
  /** the role in the workspace of tenant_id (0600_team) */
  role: Generated<Role>
  /** the bots the member is limited to; null: all */
  bot_ids: NullableJson<string[]>
  can_view_original: Generated<boolean>
  notify_on_assignment: Generated<boolean>
  last_active_at: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
  /** How the member is named to visitors (1000_live); null: the e-mail's local part. */
  display_name: Generated<string | null>
  live_status: Generated<'online' | 'away' | 'offline'>
  live_status_at: NullableTimestamp
}

export interface TenantsTable {
  id: Generated<string>
  name: string
  owner_user_id: string
  is_active: Generated<boolean>
  llm_key_enc: string | null
  llm_key_hint: string | null
  support_email: string | null
  kyc_secret_enc: string | null
  kyc_secret_hint: string | null
  kyc_prev_secret_enc: string | null
  kyc_prev_valid_until: NullableTimestamp
  pii_optional_types: Json<string[]>
  l2_email: string | null
  escalation_language: string | null
  created_at: Timestamp
  updated_at: Timestamp
  /** {timezone, weekly, holidays} (1000_live); null: always open. */
  office_hours: NullableJson<OfficeHoursValue>
  auto_assign: Generated<boolean>
  agent_capacity: Generated<number>
  /** a run of the evaluations after the knowledge changes, at most hourly (1400_evals_auto_run) */
  evals_auto_run: Generated<boolean>
}

export interface AuthTokensTable {
  id: Generated<string>
  user_id: string
  purpose: 'verify_email' | 'reset_password'
  token_hash: string
  expires_at: Timestamp
  used_at: NullableTimestamp
  created_at: Timestamp
}

export interface ApiKeysTable {
  id: Generated<string>
  tenant_id: string
  key_hash: string
  key_hint: string
  status: 'active' | 'revoking' | 'revoked'
  revoked_reason: string | null
  created_at: Timestamp
  expires_at: NullableTimestamp
  revoked_at: NullableTimestamp
  last_used_at: NullableTimestamp
}

export interface BotsTable {
  id: Generated<string>
  tenant_id: string
  name: string
  public_id: string
  is_active: Generated<boolean>
  link_safety_enabled: Generated<boolean>
  allowed_domains: Json<string[]>
  agent_instructions: string | null
  website_url: string | null
  disclosure_level: Generated<'detailed' | 'standard' | 'corporate'>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface JobsTable {
  id: Generated<string>
  kind: string
  payload: Json<unknown>
  tenant_id: string | null
  status: 'queued' | 'running' | 'done' | 'failed'
  attempts: Generated<number>
  max_attempts: number
  run_at: Timestamp
  locked_by: string | null
  locked_until: NullableTimestamp
  last_error: string | null
  dedupe_key: string | null
  created_at: Timestamp
  updated_at: Timestamp
  finished_at: NullableTimestamp
}

export interface FoundationTables {
  users: UsersTable
  tenants: TenantsTable
  auth_tokens: AuthTokensTable
  api_keys: ApiKeysTable
  bots: BotsTable
  jobs: JobsTable
}

/** A workspace's office hours (1000_live): local times in `timezone`; day 0 is Sunday. */
export interface OfficeHoursValue {
  timezone: string
  weekly: { day: number; start: string; end: string }[]
  holidays: string[]
}
