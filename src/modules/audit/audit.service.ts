import type { Db } from '../../db/client.js'
import { badRequest } from '../../lib/errors.js'
import type { Clock } from '../../lib/clock.js'
import type { AuditPort } from '../shared/audit.port.js'
import { boundDetail, decodeCursor, encodeCursor } from './audit.fns.js'
import type { AuditRepo } from './audit.repo.js'

/**
 * The stored audit log: the `AuditPort` every module records through (inside its own transaction when it
 * passes one), the filtered newest-first reading of the dashboard, and the retention sweep.
 */
export function createAuditService(deps: { clock: Clock; repo: AuditRepo; defaultRetentionDays: number }) {
  const { clock, repo } = deps

  const port: AuditPort = {
    async record(tenantId, e, trx) {
      await repo.insert(
        tenantId,
        {
          at: clock.now(),
          actorUserId: e.actorUserId,
          ip: e.ip ? e.ip.slice(0, 64) : null,
          action: e.action.slice(0, 64),
          itemType: e.itemType.slice(0, 64),
          itemId: e.itemId ? e.itemId.slice(0, 200) : null,
          detail: boundDetail(e.detail),
        },
        trx as Db | undefined,
      )
    },
  }

  return {
    port,

    async list(tenantId: string, q: { member?: string; action?: string; from?: string; to?: string; cursor?: string; limit: number }) {
      const after = q.cursor ? decodeCursor(q.cursor) : undefined
      if (after === null) throw badRequest('Invalid cursor: pass the next_cursor of the previous page', 'invalid_cursor')
      const from = q.from ? new Date(q.from) : undefined
      const to = q.to ? new Date(q.to) : undefined
      if (from && to && from > to) throw badRequest('from must not be after to', 'invalid_range')
      const rows = await repo.list(tenantId, { member: q.member, action: q.action, from, to, after, limit: q.limit + 1 })
      const page = rows.slice(0, q.limit)
      const last = page[page.length - 1]
      return {
        items: page.map((r) => ({
          id: String(r.id),
          at: r.at.toISOString(),
          actor_user_id: r.actor_user_id,
          actor_email: r.actor_email,
          ip: r.ip,
          action: r.action,
          item_type: r.item_type,
          item_id: r.item_id,
          detail: r.detail ?? {},
        })),
        next_cursor: rows.length > q.limit && last ? encodeCursor(last.at, String(last.id)) : null,
      }
    },

    /** The daily job: entries older than the tenant's retention (its PII retention setting, or the default) go. */
    sweep: () => repo.sweep(clock.now(), deps.defaultRetentionDays),
  }
}

export type AuditService = ReturnType<typeof createAuditService>
