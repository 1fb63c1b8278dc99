import type { Timestamp } from './foundation.js'

/** A visitor's file (1800_attachments): `data` is encrypted (attachments.crypto.ts), `text` redacted. */
export interface AttachmentsTable {
  id: string
  tenant_id: string
  bot_id: string
  session_id: string
  /** The message that took it; null until one does. */
  message_id: string | null
  name: string
  content_type: string
  kind: 'image' | 'document'
  size: number
  data: Uint8Array
  text: string | null
  created_at: Timestamp
}

export interface AttachmentsTables {
  attachments: AttachmentsTable
}
