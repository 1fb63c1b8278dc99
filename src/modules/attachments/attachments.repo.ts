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
  /** the sealed file (attachments.crypto.ts `sealPieces`): its ciphertext in `pieceCount` pieces, then its head */
  sealed: { pieces: Iterable<Uint8Array>; head(): Uint8Array }
  pieceCount: number
  text: string | null
  createdAt: Date
}

/** The attachments table; every method takes the tenant id first. */
export function createAttachmentsRepo(db: Db, kind: 'pglite' | 'postgres') {
  return {
    /**
     * A file and its sealed bytes, in pieces of CHUNK_BYTES, one statement each. On PostgreSQL one transaction: the file
     * is there whole or not at all, with one commit instead of one a piece (a 2 MB file waited 60 ms on seven).
     * On the embedded database a statement holds the event loop while it runs, so a large file written at once stalled
     * every other request; and not one transaction, for the same reason (it would hold the embedded database's one
     * connection throughout): the row comes first, and a failure on the way deletes it with the pieces written. The
     * visitor learns the file's id only once every piece is stored; a row left by a process that died on the way is
     * never claimed and goes by retention.
     */
    async insert(tenantId: string, a: NewAttachment): Promise<void> {
      if (kind === 'postgres') return db.transaction().execute((trx) => writeFile(trx, tenantId, a))
      try {
        await writeFile(db, tenantId, a)
      } catch (err) {
        await db
          .deleteFrom('attachments')
          .where('tenant_id', '=', tenantId)
          .where('id', '=', a.id)
          .execute()
          .catch(() => {})
        throw err
      }
    },

    /** A file's sealed bytes (its pieces read one statement each, as they were written); undefined when it is gone. */
    sealed(tenantId: string, id: string): Promise<Buffer | undefined> {
      return sealedBytes(db, tenantId, id)
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
        .select(META)
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .$if('sessionId' in where, (q) => q.where('session_id', '=', (where as { sessionId: string }).sessionId))
        .$if('scope' in where && (where as { scope: BotScope }).scope !== null, (q) =>
          q.where('bot_id', 'in', scopeIds((where as { scope: readonly string[] }).scope)),
        )
        .executeTakeFirst()
      const data = row && (await sealedBytes(db, tenantId, id))
      return row && data && { ...row, data }
    },

    /**
     * Gives the message `messageId` the session's unused attachments among `ids`, at most once (a second message
     * naming them gets none): their metadata and text, in no particular order (an image's bytes: `sealed`).
     */
    async claim(tenantId: string, sessionId: string, ids: readonly string[], messageId: string, trx: Db = db) {
      if (!ids.length) return []
      return trx
        .updateTable('attachments')
        .set({ message_id: messageId })
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('id', 'in', [...ids])
        .where('message_id', 'is', null)
        .returning([...META, 'text'])
        .execute()
    },

    /**
     * A retried mail's files (ids its job derives from the mail, so only this mail's turns ever claimed them), given
     * back from the message an earlier attempt took them for: that attempt failed (its question was kept without an
     * answer) or died, and the retry's message is the one that sends them. The ids still this session's.
     */
    async takeBack(tenantId: string, sessionId: string, ids: readonly string[]): Promise<string[]> {
      if (!ids.length) return []
      const rows = await db
        .updateTable('attachments')
        .set({ message_id: null })
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('id', 'in', [...ids])
        .returning('id')
        .execute()
      const left = new Set(rows.map((r) => r.id))
      return ids.filter((id) => left.has(id))
    },

    /**
     * A file already stored under `id`, whole (every piece there): its metadata. One its writer left unfinished (the
     * process died on the way) is deleted, to be stored again. Undefined when there is none.
     */
    async stored(tenantId: string, id: string): Promise<AttachmentMeta | undefined> {
      const row = await db
        .selectFrom('attachments')
        .select([...META, 'chunks'])
        .select((eb) =>
          eb
            .selectFrom('attachment_chunks')
            .select((c) => c.fn.countAll<string>().as('n'))
            .where('attachment_chunks.tenant_id', '=', tenantId)
            .whereRef('attachment_chunks.attachment_id', '=', 'attachments.id')
            .as('pieces'),
        )
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .executeTakeFirst()
      if (!row) return undefined
      if (Number(row.pieces ?? 0) === row.chunks) return { id: row.id, name: row.name, content_type: row.content_type, size: Number(row.size), kind: row.kind }
      await db.deleteFrom('attachments').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
      return undefined
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
        .select(['id', 'name', 'content_type'])
        .where('tenant_id', '=', tenantId)
        .where('message_id', 'in', [...messageIds])
        .orderBy('created_at')
        .orderBy('id')
        .execute()
      const out: { name: string; content_type: string; data: Buffer }[] = []
      for (const r of rows) {
        const data = await sealedBytes(db, tenantId, r.id)
        if (data) out.push({ name: r.name, content_type: r.content_type, data })
      }
      return out
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

/** The attachment's row, then its pieces and its head (attachments.repo `insert`). */
async function writeFile(db: Db, tenantId: string, a: NewAttachment): Promise<void> {
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
      data: new Uint8Array(0),
      // the head (seq 0) and the ciphertext's pieces
      chunks: a.pieceCount + 1,
      text: a.text,
      created_at: a.createdAt,
    })
    .execute()
  const piece = (seq: number, data: Uint8Array) => db.insertInto('attachment_chunks').values({ attachment_id: a.id, tenant_id: tenantId, seq, data }).execute()
  let seq = 0
  for (const data of a.sealed.pieces) {
    await piece(++seq, data)
    await turnOfTheLoop()
  }
  if (seq !== a.pieceCount) throw new Error(`attachment sealed in ${seq} pieces, not ${a.pieceCount}`)
  await piece(0, a.sealed.head())
}

/**
 * Between two pieces, the event loop's other work (a /health probe, another request's bytes): the embedded database
 * answers a statement without a turn of the loop (its promises settle at once), so a file's pieces, awaited one after
 * another, would otherwise run as one task as long as the whole file.
 */
const turnOfTheLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/** The most of a file's bytes one statement writes or reads (attachment_chunks). */
export const CHUNK_BYTES = 512 * 1024

async function sealedBytes(db: Db, tenantId: string, id: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('attachments').select(['chunks']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
  if (!row) return undefined
  if (row.chunks === 0) {
    // stored whole, before 1860_attachment_chunks
    const whole = await db.selectFrom('attachments').select('data').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    return whole && Buffer.from(whole.data)
  }
  const pieces: Uint8Array[] = []
  for (let seq = 0; seq < row.chunks; seq++) {
    const p = await db
      .selectFrom('attachment_chunks')
      .select('data')
      .where('tenant_id', '=', tenantId)
      .where('attachment_id', '=', id)
      .where('seq', '=', seq)
      .executeTakeFirst()
    // a piece missing: the file was deleted while it was read, or its writer died on the way
    if (!p) return undefined
    pieces.push(p.data)
    await turnOfTheLoop()
  }
  return Buffer.concat(pieces)
}
