import type { Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from './foundation.js'

/** One row of facts per conversation (see migrations/0800_analytics.ts and modules/analytics/analytics.fns.ts). */
export interface AnalyticsConversationsTable {
  session_id: string
  tenant_id: string
  bot_id: string
  channel: string
  started_at: Timestamp
  /** The 15-minute UTC slot of started_at. */
  slot: Timestamp
  last_message_at: Timestamp
  messages: number
  questions: number
  bot_up: number
  bot_down: number
  op_up: number
  op_down: number
  tokens: number
  model_hist: Json<Record<string, number>>
  tickets: number
  first_response_s: number | null
  resolve_s: number | null
  /** The final outcome (pending is decided at read time from last_message_at). */
  outcome: string
  refreshed_at: Timestamp
}

export interface AnalyticsRollupTable {
  tenant_id: string
  /** q: 15-minute slot, h: hour, d: UTC day (see migrations/0800_analytics.ts). */
  grain: 'q' | 'h' | 'd'
  bot_id: string
  channel: string
  slot: Timestamp
  /** UTC hour of day of slot. */
  hod: number
  conversations: number
  questions: number
  handed_off: number
  resolved_confirmed: number
  resolved_assumed: number
  unresolved: number
  bot_up: number
  bot_down: number
  op_up: number
  op_down: number
  tokens: number
  model_hist: Json<Record<string, number>>
}

export interface AnalyticsDirtyTable {
  tenant_id: string
  session_id: string
  marked_at: Timestamp
}

export interface AnalyticsStateTable {
  id: number
  watermark: Timestamp
}

export type ExportKind = 'conversations' | 'messages' | 'tickets' | 'questions'
export type ExportFormat = 'csv' | 'jsonl'
export type ExportStatus = 'queued' | 'running' | 'done' | 'failed'

export interface AnalyticsExportsTable {
  id: Generated<string>
  tenant_id: string
  kind: ExportKind
  format: ExportFormat
  range_from: string
  range_to: string
  tz: string
  bot_ids: Json<string[] | null> | null
  status: Generated<ExportStatus>
  progress: Generated<number>
  rows: Generated<number>
  file_name: string | null
  error: string | null
  created_by: string | null
  created_at: Timestamp
  finished_at: NullableTimestamp
  expires_at: NullableTimestamp
}

export interface AnalyticsTables {
  analytics_conversations: AnalyticsConversationsTable
  analytics_rollup: AnalyticsRollupTable
  analytics_dirty: AnalyticsDirtyTable
  analytics_state: AnalyticsStateTable
  analytics_exports: AnalyticsExportsTable
}
