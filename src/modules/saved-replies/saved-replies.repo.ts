import type { Selectable } from 'kysely'
import type { Db } from '../../db/client.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { SavedRepliesTable } from '../../db/schema/inbox.js'
import { AppError } from '../../lib/errors.js'

export type SavedReplyRow = Selectable<SavedRepliesTable>

/** A workspace keeps at most this many saved replies (the list is one page). */
export const SAVED_REPLIES_MAX = 500

const duplicate = () => new AppError(409, 'shortcut_exists', 'A saved reply with this shortcut exists', { coded: true })

/** A workspace's saved replies; a shortcut taken twice is 409 shortcut_exists (the unique index decides). */
export function createSavedRepliesRepo(db: Db) {
  return {
    list(tenantId: string) {
      return db.selectFrom('saved_replies').selectAll().where('tenant_id', '=', tenantId).orderBy('shortcut').limit(SAVED_REPLIES_MAX).execute()
    },

    async count(tenantId: string): Promise<number> {
      const r = await db
        .selectFrom('saved_replies')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },

    async insert(tenantId: string, v: { title: string; content: string; shortcut: string; createdBy: string | null; now: Date }) {
      try {
        return await db
          .insertInto('saved_replies')
          .values({
            tenant_id: tenantId,
            title: v.title,
            content: v.content,
            shortcut: v.shortcut,
            created_by: v.createdBy,
            created_at: v.now,
            updated_at: v.now,
          })
          .returningAll()
          .executeTakeFirstOrThrow()
      } catch (err) {
        if (isUniqueViolation(err)) throw duplicate()
        throw err
      }
    },

    async update(tenantId: string, id: string, patch: { title?: string; content?: string; shortcut?: string }, now: Date) {
      try {
        return await db
          .updateTable('saved_replies')
          .set({ ...patch, updated_at: now })
          .where('tenant_id', '=', tenantId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst()
      } catch (err) {
        if (isUniqueViolation(err)) throw duplicate()
        throw err
      }
    },

    async remove(tenantId: string, id: string): Promise<boolean> {
      const r = await db.deleteFrom('saved_replies').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },
  }
}

export type SavedRepliesRepo = ReturnType<typeof createSavedRepliesRepo>
