import type { Generated } from 'kysely'
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
  /** the sealed file (chunks 0, before 1860) or empty: its pieces are in attachment_chunks */
  data: Uint8Array
  text: string | null
  created_at: Timestamp
  /** how many pieces attachment_chunks holds (1860); 0: the file is in `data` */
  chunks: Generated<number>
}

/** A piece of a stored file, in order of `seq` (1860_attachment_chunks). */
export interface AttachmentChunksTable {
  attachment_id: string
  tenant_id: string
  seq: number
  data: Uint8Array
}

export interface AttachmentsTables {
  attachments: AttachmentsTable
  attachment_chunks: AttachmentChunksTable
}
