import type { Db } from '../../../db/client.js'
import type { Clock } from '../../../lib/clock.js'
import type { PrivacyRepo } from './privacy.repo.js'

const DAY_MS = 86_400_000

/**
 * The tenant's view of its PII audit trail and its retention. A manual retention run also becomes the
 * tenant's retention for the daily job, so "keep 90 days" stays true after the click.
 */
export function createPrivacyService(deps: { db: Db; clock: Clock; repo: PrivacyRepo; defaultRetentionDays: number }) {
  const { db, clock, repo } = deps
  return {
    async listEvents(tenantId: string, page: { limit: number; offset: number }) {
      const [rows, total] = await Promise.all([repo.listEvents(tenantId, page.limit, page.offset), repo.countEvents(tenantId)])
      return {
        items: rows.map((r) => ({
          id: r.id,
          entity_type: r.entity_type,
          action: r.action,
          direction: r.direction,
          count: r.count,
          session_id: r.session_id,
          ticket_id: r.ticket_id,
          actor_user_id: r.actor_user_id,
          created_at: r.created_at.toISOString(),
        })),
        total,
      }
    },

    async applyRetention(tenantId: string, retentionDays: number) {
      const now = clock.now()
      const deleted = await db.transaction().execute(async (trx) => {
        await repo.setRetention(tenantId, retentionDays, now, trx)
        return repo.deleteOlderThan(tenantId, new Date(now.getTime() - retentionDays * DAY_MS), trx)
      })
      return { deleted_count: deleted }
    },

    /** The daily job: every tenant's own retention, or the default. */
    applyRetentionAll: () => repo.applyRetentionAll(clock.now(), deps.defaultRetentionDays),
  }
}

export type PrivacyService = ReturnType<typeof createPrivacyService>
