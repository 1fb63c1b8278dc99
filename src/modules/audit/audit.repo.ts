import { sql } from 'kysely'
import type { Db } from '../../db/client.js'

export interface AuditFilter {
  member?: string
  action?: string
  from?: Date
  to?: Date
  after?: { at: Date; id: string }
  limit: number
}

/** The append-only audit log: insert, read newest first by keyset, and the retention sweep (the only delete). */
export function createAuditRepo(db: Db) {
  return {
    async insert(
      tenantId: string,
      e: { at: Date; actorUserId: string | null; ip: string | null; action: string; itemType: string; itemId: string | null; detail: Record<string, unknown> },
      trx: Db = db,
    ): Promise<void> {
      await trx
        .insertInto('audit_log')
        .values({
          tenant_id: tenantId,
          at: e.at,
          actor_user_id: e.actorUserId,
          // the address at the time, so the entry still names a member who has since been removed
          actor_email: e.actorUserId ? sql<string | null>`(SELECT email FROM users WHERE id = ${e.actorUserId})` : null,
          ip: e.ip,
          action: e.action,
          item_type: e.itemType,
          item_id: e.itemId,
          detail: JSON.stringify(e.detail),
        })
        .execute()
    },

    list(tenantId: string, f: AuditFilter) {
      let q = db
        .selectFrom('audit_log')
        .select(['id', 'at', 'actor_user_id', 'actor_email', 'ip', 'action', 'item_type', 'item_id', 'detail'])
        .where('tenant_id', '=', tenantId)
      if (f.member) q = q.where('actor_user_id', '=', f.member)
      if (f.action) q = q.where('action', '=', f.action)
      if (f.from) q = q.where('at', '>=', f.from)
      if (f.to) q = q.where('at', '<', f.to)
      if (f.after) {
        const { at, id } = f.after
        q = q.where((eb) => eb.or([eb('at', '<', at), eb.and([eb('at', '=', at), eb('id', '<', sql<string>`${id}::bigint`)])]))
      }
      return q.orderBy('at', 'desc').orderBy('id', 'desc').limit(f.limit).execute()
    },

    /** Deletes entries older than each tenant's retention (days; `defaultDays` for tenants without a setting). */
    async sweep(now: Date, defaultDays: number): Promise<number> {
      const r = await sql<{ n: number }>`
        WITH gone AS (
          DELETE FROM audit_log a
          WHERE a.at < ${now}::timestamptz - make_interval(days => COALESCE(
            (SELECT s.retention_days FROM pii_retention_settings s WHERE s.tenant_id = a.tenant_id), ${defaultDays}::int))
          RETURNING 1
        )
        SELECT count(*)::int AS n FROM gone`.execute(db)
      return r.rows[0]?.n ?? 0
    },
  }
}

export type AuditRepo = ReturnType<typeof createAuditRepo>
