import type { Generated } from 'kysely'
import type { NullableJson, NullableTimestamp, Timestamp } from './foundation.js'

export type EmailMode = 'answer' | 'draft'
/**
 * What became of a message. In: queued (waiting for the worker), answered, handed_off (a ticket, the sender
 * told its number), delivered (to the person who owns the conversation), drafted (mode draft), ignored (a loop
 * guard; `reason` says which), failed. Out: reserved (counted against the sender's cap), sent.
 */
export type EmailStatus = 'queued' | 'answered' | 'handed_off' | 'delivered' | 'drafted' | 'ignored' | 'failed' | 'reserved' | 'sent'

export interface EmailAttachment {
  name: string
  type: string
  size: number
  /** stored as an attachment of the mail's message (issue 54): GET /attachments/{id}; absent: listed only */
  attachment_id?: string
}

export interface EmailChannelsTable {
  tenant_id: string
  bot_id: string
  enabled: Generated<boolean>
  mode: Generated<EmailMode>
  reply_from: string | null
  signature: string | null
  local_part: string
  /** SHA-256 of the webhook token (lookup); the token itself is in token_enc, for the settings screen. */
  token_hash: string
  token_enc: string
  /** the address of reply_from that its owner confirmed (a link mailed to it); reply_from is the sender only while it names this address */
  reply_from_verified: string | null
  /** the pending confirmation: SHA-256 of the single-use token, the address it was mailed to, its expiry */
  verify_token_hash: string | null
  verify_address: string | null
  verify_expires_at: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}

export interface EmailMessagesTable {
  id: Generated<string>
  tenant_id: string
  bot_id: string
  direction: 'in' | 'out'
  /** out: answer | notice (a ticket number) | operator */
  kind: string | null
  message_id: string
  /** out: the inbound message it answers */
  in_reply_to_id: string | null
  session_id: string | null
  /** the correspondent's address, encrypted; its hash counts the per-sender cap */
  sender_enc: string | null
  sender_hash: string | null
  /** out: keyed hash of the correspondent's normalised mailbox (mailboxOf), what the per-sender cap counts */
  mailbox_hash: string | null
  subject: string | null
  status: EmailStatus
  reason: string | null
  /** in: the raw MIME, encrypted, until the worker has handled it */
  raw_enc: string | null
  attachments: NullableJson<EmailAttachment[]>
  /** mode draft: the bot's suggested reply, encrypted */
  draft_enc: string | null
  ticket_number: string | null
  created_at: Timestamp
  processed_at: NullableTimestamp
}

export interface EmailSendersTable {
  tenant_id: string
  bot_id: string
  /** the normalised mailbox's hash (mailboxHash) since migration 1670; the exact address's before */
  sender_hash: string
  /** the conversation a capped sender's further mails go into (one ticket, not one per mail) */
  held_session_id: string | null
}

export interface EmailChannelTables {
  email_channels: EmailChannelsTable
  email_messages: EmailMessagesTable
  email_senders: EmailSendersTable
}
