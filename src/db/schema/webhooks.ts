import type { ColumnType, Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from './foundation.js'

export type WebhookKind = 'standard' | 'slack'
export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface WebhookEndpointsTable {
  id: Generated<string>
  tenant_id: string
  url: string
  description: Generated<string>
  events: Json<string[]>
  /** null: every bot of the workspace */
  bot_ids: ColumnType<string[] | null, string | null | undefined, string | null>
  kind: Generated<WebhookKind>
  enabled: Generated<boolean>
  disabled_reason: string | null
  /** `whsec_...`, encrypted with the context's cipher */
  secret_enc: string
  /** the secret before the last rotation, which also signs until `previous_secret_until` */
  previous_secret_enc: string | null
  previous_secret_until: NullableTimestamp
  /** the first failed attempt since the last success (five days of failures disable the endpoint) */
  failing_since: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}

/** The outbox: one row per event, written in the transaction of the change that caused it. */
export interface WebhookEventsTable {
  id: Generated<string>
  tenant_id: string
  type: string
  bot_id: string | null
  ticket_id: string | null
  /** the JSON body `{type, timestamp, data}` exactly as signed and sent */
  body: string
  created_at: Timestamp
}

export interface WebhookDeliveriesTable {
  id: Generated<string>
  seq: Generated<string>
  tenant_id: string
  endpoint_id: string
  event_id: string
  type: string
  ticket_id: string | null
  status: Generated<DeliveryStatus>
  attempts: Generated<number>
  /** position in the retry schedule since the delivery was (re)sent */
  retry_step: Generated<number>
  next_attempt_at: NullableTimestamp
  /** an attempt is in flight until then (a crashed worker's attempt is retried after it) */
  locked_until: NullableTimestamp
  last_status_code: number | null
  last_latency_ms: number | null
  last_error: string | null
  created_at: Timestamp
  updated_at: Timestamp
  finished_at: NullableTimestamp
}

export interface WebhookAttemptsTable {
  id: Generated<string>
  tenant_id: string
  delivery_id: string
  attempted_at: Timestamp
  status_code: number | null
  latency_ms: number
  response_excerpt: string | null
  error: string | null
  next_attempt_at: NullableTimestamp
}

export interface WebhooksTables {
  webhook_endpoints: WebhookEndpointsTable
  webhook_events: WebhookEventsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
}
