import { sql } from 'kysely'
import type { Db } from '../../../db/client.js'
import type { PiiAction } from '../../../db/schema/chat.js'

export interface NewPiiEvent {
  entityType: string
  action: PiiAction
  direction: 'message' | 'ticket'
  count: number
  sessionId?: string | null
  ticketId?: string | null
  actorUserId?: string | null
}

/** The PII audit trail (pii_events, written by the chat pipeline and by operator actions) and its retention. */
export function createPrivacyRepo(db: Db) {
  return {
    async insertEvents(tenantId: string, events: NewPiiEvent[], now: Date, trx: Db = db): Promise<void> {
      if (events.length === 0) return
      await trx
        .insertInto('pii_events')
        .values(
          events.map((e) => ({
            tenant_id: tenantId,
            entity_type: e.entityType.slice(0, 40),
            action: e.action,
            direction: e.direction,
            count: e.count,
            session_id: e.sessionId ?? null,
            ticket_id: e.ticketId ?? null,
            actor_user_id: e.actorUserId ?? null,
            created_at: now,
          })),
        )
        .execute()
    },

    /** Newest first; ties broken by id so pages never overlap. */
    /** The workspace's optional PII types (for redacting operator-written text in its copies). */
    async optionalTypes(tenantId: string): Promise<string[]> {
      const t = await db.selectFrom('tenants').select('pii_optional_types').where('id', '=', tenantId).executeTakeFirst()
      return (t?.pii_optional_types as string[] | null) ?? []
    },

    listEvents(tenantId: string, limit: number, offset: number) {
      return db
        .selectFrom('pii_events')
        .select(['id', 'entity_type', 'action', 'direction', 'count', 'session_id', 'ticket_id', 'actor_user_id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute()
    },

    countEvents(tenantId: string) {
      return db
        .selectFrom('pii_events')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },

    async deleteOlderThan(tenantId: string, cutoff: Date, trx: Db = db): Promise<number> {
      const r = await trx.deleteFrom('pii_events').where('tenant_id', '=', tenantId).where('created_at', '<', cutoff).executeTakeFirst()
      return Number(r.numDeletedRows)
    },

    async setRetention(tenantId: string, days: number, now: Date, trx: Db = db): Promise<void> {
      await trx
        .insertInto('pii_retention_settings')
        .values({ tenant_id: tenantId, retention_days: days, updated_at: now })
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ retention_days: days, updated_at: now }))
        .execute()
    },

    /** Every tenant at once: events older than the tenant's retention (or `defaultDays`) go. */
    async applyRetentionAll(now: Date, defaultDays: number): Promise<number> {
      const r = await sql`
        DELETE FROM pii_events e
        WHERE e.created_at < ${now}::timestamptz - make_interval(days => COALESCE(
          (SELECT r.retention_days FROM pii_retention_settings r WHERE r.tenant_id = e.tenant_id), ${defaultDays}::int))
      `.execute(db)
      return Number(r.numAffectedRows ?? 0)
    },
  }
}

export type PrivacyRepo = ReturnType<typeof createPrivacyRepo>
