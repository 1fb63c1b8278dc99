import type { Generated } from 'kysely'
import type { Timestamp } from './foundation.js'

/** A workspace's saved reply (1640_inbox): inserted in the composer by typing "/" and its shortcut. */
export interface SavedRepliesTable {
  id: Generated<string>
  tenant_id: string
  title: string
  content: string
  /** ^[a-z0-9-]{1,32}$, unique per workspace */
  shortcut: string
  created_by: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface InboxTables {
  saved_replies: SavedRepliesTable
}
