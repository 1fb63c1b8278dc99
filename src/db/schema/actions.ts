import type { Generated } from 'kysely'
import type { Json, NullableJson, Timestamp } from './foundation.js'

export type ActionMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
export type ActionKind = 'read' | 'write'
export type ParameterSource = 'model' | 'visitor' | 'secret' | 'constant'
export type CallStatus = 'pending' | 'running' | 'ok' | 'http_error' | 'timeout' | 'refused' | 'blocked' | 'cancelled'

export interface ActionParameter {
  name: string
  source: ParameterSource
  schema: Record<string, unknown>
  claim: string | null
  value: string | number | boolean | null
  required: boolean
}

export interface ActionsTable {
  id: Generated<string>
  tenant_id: string
  name: string
  description: Generated<string>
  method: ActionMethod
  url: string
  headers: Json<Record<string, string>>
  body_template: string | null
  parameters: Json<ActionParameter[]>
  kind: ActionKind
  /** null: every bot of the workspace */
  bot_ids: NullableJson<string[]>
  enabled: Generated<boolean>
  response_fields: Json<string[]>
  timeout_ms: number
  /** `{name: value}` as JSON, encrypted with the context's cipher; null when the action has none */
  secrets_enc: string | null
  /** `{name: last four characters}`, for the masks */
  secret_hints: Json<Record<string, string>>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface ActionCallsTable {
  id: Generated<string>
  seq: Generated<string>
  tenant_id: string
  action_id: string
  session_id: string | null
  bot_id: string | null
  status: CallStatus
  http_status: number | null
  latency_ms: number | null
  /** the arguments with visitor values and PII masked, for the log */
  arguments: Json<Record<string, unknown>>
  /** the model's arguments, encrypted, kept while a write waits for approval */
  arguments_enc: string | null
  summary: Generated<string>
  /** the response body as the log keeps it: redacted, cut */
  response_excerpt: string | null
  error: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface ActionSettingsTable {
  tenant_id: string
  /** `whsec_...`, encrypted: signs outbound calls and the X-Visitor-Token */
  secret_enc: string
  created_at: Timestamp
  updated_at: Timestamp
}

export interface ActionsTables {
  actions: ActionsTable
  action_calls: ActionCallsTable
  action_settings: ActionSettingsTable
}
