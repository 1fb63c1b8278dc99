import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import { scopeIds, type BotScope } from '../shared/bot-scope.js'
import type { AttachmentKind } from './attachments.fns.js'

/** What is shown of an attachment everywhere (never its bytes or text). */
export interface AttachmentMeta {
  id: string
  name: string
  content_type: string
  size: number
  kind: AttachmentKind
}

const META = ['id', 'name', 'content_type', 'size', 'kind'] as const

export interface NewAttachment extends AttachmentMeta {
  botId: string
  sessionId: string
  /** encrypted bytes (attachments.crypto.ts) */
  data: Uint8Array
  text: string | null
  createdAt: Date
}

/** The attachments table; every method takes the tenant id first. */
export function createAttachmentsRepo(db: Db) {
  return {
    async insert(tenantId: string, a: NewAttachment): Promise<void> {
      await db
        .insertInto('attachments')
        .values({
          id: a.id,
          tenant_id: tenantId,
          bot_id: a.botId,
          session_id: a.sessionId,
          name: a.name,
          content_type: a.content_type,
          kind: a.kind,
          size: a.size,
          data: bytesIn(a.data),
          text: a.text,
          created_at: a.createdAt,
        })
        .execute()
    },

    async countForSession(tenantId: string, sessionId: string): Promise<number> {
      const r = await db
        .selectFrom('attachments')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .executeTakeFirst()
      return Number(r?.n ?? 0)
    },

    /** One file with its bytes: the visitor's own (their session) or a member's (the bots in scope); undefined otherwise. */
    async findFile(tenantId: string, id: string, where: { sessionId: string } | { scope: BotScope }) {
      const row = await db
        .selectFrom('attachments')
        .select([...META, bytesOut('data')])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .$if('sessionId' in where, (q) => q.where('session_id', '=', (where as { sessionId: string }).sessionId))
        .$if('scope' in where && (where as { scope: BotScope }).scope !== null, (q) =>
          q.where('bot_id', 'in', scopeIds((where as { scope: readonly string[] }).scope)),
        )
        .executeTakeFirst()
      return row && { ...row, data: Buffer.from(row.data, 'base64') }
    },

    /**
     * Gives the message `messageId` the session's unused attachments among `ids`, at most once (a second message
     * naming them gets none): their metadata, text and, for images, the encrypted bytes, in no particular order.
     */
    async claim(tenantId: string, sessionId: string, ids: readonly string[], messageId: string, trx: Db = db) {
      if (!ids.length) return []
      const rows = await trx
        .updateTable('attachments')
        .set({ message_id: messageId })
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('id', 'in', [...ids])
        .where('message_id', 'is', null)
        .returning([...META, 'text', sql<string | null>`CASE WHEN kind = 'image' THEN encode(data, 'base64') END`.as('data')])
        .execute()
      return rows.map((r) => ({ ...r, data: r.data === null ? null : Buffer.from(r.data, 'base64') }))
    },

    /** Those of `ids` that are still this session's and unsent (a retried mail's files, stored by its first attempt). */
    async unsent(tenantId: string, sessionId: string, ids: readonly string[]): Promise<string[]> {
      if (!ids.length) return []
      const rows = await db
        .selectFrom('attachments')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('id', 'in', [...ids])
        .where('message_id', 'is', null)
        .execute()
      const left = new Set(rows.map((r) => r.id))
      return ids.filter((id) => left.has(id))
    },

    /** A ticket's conversation and bot, within the member's bots; undefined otherwise (an operator's upload). */
    ticketSession(tenantId: string, ticketId: string, scope: BotScope) {
      return db
        .selectFrom('escalation_tickets')
        .select(['session_id', 'bot_id'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .$if(scope !== null, (q) => q.where('bot_id', 'in', scopeIds(scope!)))
        .executeTakeFirst()
    },

    /** The files (with their encrypted bytes) these messages sent, in upload order: a mail carries them. */
    async filesOfMessages(tenantId: string, messageIds: readonly string[]) {
      if (!messageIds.length) return []
      const rows = await db
        .selectFrom('attachments')
        .select(['name', 'content_type', bytesOut('data')])
        .where('tenant_id', '=', tenantId)
        .where('message_id', 'in', [...messageIds])
        .orderBy('created_at')
        .orderBy('id')
        .execute()
      return rows.map((r) => ({ ...r, data: Buffer.from(r.data, 'base64') }))
    },

    async release(tenantId: string, messageId: string): Promise<void> {
      await db.updateTable('attachments').set({ message_id: null }).where('tenant_id', '=', tenantId).where('message_id', '=', messageId).execute()
    },

    /** The attachments of these messages, by message id, in upload order. */
    async byMessages(tenantId: string, messageIds: readonly string[]): Promise<Map<string, AttachmentMeta[]>> {
      const out = new Map<string, AttachmentMeta[]>()
      if (!messageIds.length) return out
      const rows = await db
        .selectFrom('attachments')
        .select([...META, 'message_id'])
        .where('tenant_id', '=', tenantId)
        .where('message_id', 'in', [...messageIds])
        .orderBy('created_at')
        .orderBy('id')
        .execute()
      for (const { message_id, ...m } of rows) {
        const list = out.get(message_id!) ?? []
        list.push({ ...m, size: Number(m.size) })
        out.set(message_id!, list)
      }
      return out
    },

    /** Every workspace at once: files older than the retention, and files no message took within a day. */
    async deleteExpired(now: Date, retentionDays: number): Promise<number> {
      const kept = new Date(now.getTime() - retentionDays * 86_400_000)
      const unsent = new Date(now.getTime() - 86_400_000)
      const r = await db
        .deleteFrom('attachments')
        .where((eb) => eb.or([eb('created_at', '<', kept), eb.and([eb('message_id', 'is', null), eb('created_at', '<', unsent)])]))
        .executeTakeFirst()
      return Number(r.numDeletedRows ?? 0)
    },

    /** A workspace's attachments and their bytes (its usage). */
    async usage(tenantId: string): Promise<{ count: number; bytes: number }> {
      const r = await db
        .selectFrom('attachments')
        .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.coalesce(eb.fn.sum<string>('size'), sql<string>`0`).as('bytes')])
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst()
      return { count: Number(r?.n ?? 0), bytes: Number(r?.bytes ?? 0) }
    },
  }
}

export type AttachmentsRepo = ReturnType<typeof createAttachmentsRepo>

/**
 * A file's bytes cross to the database as base64 text, decoded there: the embedded database's driver turns a
 * bytea parameter or result into hex through an array of one string per byte (hundreds of MB for a 10 MB file,
 * past a 320 MB heap); one base64 string is a third larger than the bytes, on both databases.
 */
const bytesIn = (bytes: Uint8Array) => sql<Uint8Array>`decode(${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}, 'base64')`
const bytesOut = (column: 'data') => sql<string>`encode(${sql.ref(column)}, 'base64')`.as(column)
