import type { Generated } from 'kysely'
import type { NullableTimestamp, Timestamp } from './foundation.js'

export type ReplyMailStatus = 'pending' | 'sent' | 'read' | 'no_email'

export interface TicketNotificationsTable {
  tenant_id: string
  ticket_id: string
  /** 'opened', 'email_added'. */
  kind: string
  created_at: Generated<Date>
}

export interface OperatorRepliesTable {
  id: Generated<string>
  tenant_id: string
  ticket_id: string
  session_id: string | null
  /** The from_operator message delivered into the visitor's chat. */
  message_id: string | null
  actor_user_id: string | null
  /** End of the grace period: the mail is decided then. */
  due_at: Timestamp
  mail_status: Generated<ReplyMailStatus>
  decided_at: NullableTimestamp
  created_at: Timestamp
}

export interface PiiRetentionSettingsTable {
  tenant_id: string
  retention_days: number
  updated_at: Timestamp
}

export interface EscalationsTables {
  ticket_notifications: TicketNotificationsTable
  operator_replies: OperatorRepliesTable
  pii_retention_settings: PiiRetentionSettingsTable
}
