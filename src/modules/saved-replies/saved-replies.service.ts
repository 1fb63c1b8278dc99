import type { Clock } from '../../lib/clock.js'
import { AppError, notFound } from '../../lib/errors.js'
import { SAVED_REPLIES_MAX, type SavedRepliesRepo, type SavedReplyRow } from './saved-replies.repo.js'

const present = (r: SavedReplyRow) => ({
  id: r.id,
  title: r.title,
  content: r.content,
  shortcut: r.shortcut,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
})

/** Saved replies (#39): owners, admins and editors manage them, agents read them to insert in the composer. */
export function createSavedRepliesService(deps: { repo: SavedRepliesRepo; clock: Clock }) {
  const { repo, clock } = deps
  return {
    async list(tenantId: string) {
      return { items: (await repo.list(tenantId)).map(present) }
    },

    async create(tenantId: string, body: { title: string; content: string; shortcut: string }, userId: string | null) {
      if ((await repo.count(tenantId)) >= SAVED_REPLIES_MAX)
        throw new AppError(409, 'limit_reached', `A workspace keeps at most ${SAVED_REPLIES_MAX} saved replies`)
      return present(await repo.insert(tenantId, { ...body, title: body.title.trim() || body.title, createdBy: userId, now: clock.now() }))
    },

    async update(tenantId: string, id: string, patch: { title?: string; content?: string; shortcut?: string }) {
      const row = await repo.update(tenantId, id, patch, clock.now())
      if (!row) throw notFound('Saved reply not found')
      return present(row)
    },

    async remove(tenantId: string, id: string) {
      if (!(await repo.remove(tenantId, id))) throw notFound('Saved reply not found')
    },
  }
}

export type SavedRepliesService = ReturnType<typeof createSavedRepliesService>
