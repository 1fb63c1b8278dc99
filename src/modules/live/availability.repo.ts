import { sql } from 'kysely'
import { NoticeCache, type ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { OfficeHoursValue } from '../../db/schema/foundation.js'
import { TENANTS_TOPIC } from '../tenants/tenants.repo.js'

export type LiveStatus = 'online' | 'away' | 'offline'

/** What waiting visitors were told: someone is there, or when the team is back. */
export interface Told {
  online: boolean
  nextOpenAt: Date | null
}

export interface AssignSettings {
  autoAssign: boolean
  /** Open conversations an agent is given at most. */
  capacity: number
}

/** Roles that answer conversations (the `tickets` permission). */
const ANSWERING = ['owner', 'admin', 'agent'] as const

/**
 * Who is there to answer: office hours, members' live status, the auto-assignment settings, the candidates
 * for a conversation and the conversations waiting for one, the recent first-reply times.
 */
export function createAvailabilityRepo(db: Db, changes?: ChangeFeed, clock?: { now(): Date }) {
  // every hand-off reads them (auto-assignment on?); they change through the tenant's settings, announced on TENANTS_TOPIC
  const settings = changes ? new NoticeCache<AssignSettings>(changes, TENANTS_TOPIC, { ttlMs: 60_000, max: 10_000, clock }) : null
  const loadSettings = async (tenantId: string, trx: Db): Promise<AssignSettings> => {
    const t = await trx.selectFrom('tenants').select(['auto_assign', 'agent_capacity']).where('id', '=', tenantId).executeTakeFirst()
    return { autoAssign: t?.auto_assign ?? false, capacity: t?.agent_capacity ?? 3 }
  }
  return {
    async officeHours(tenantId: string, trx: Db = db): Promise<OfficeHoursValue | null> {
      const t = await trx.selectFrom('tenants').select('office_hours').where('id', '=', tenantId).executeTakeFirst()
      return t?.office_hours ?? null
    },

    async setOfficeHours(tenantId: string, hours: OfficeHoursValue, now: Date): Promise<void> {
      await db
        .updateTable('tenants')
        .set({ office_hours: JSON.stringify(hours), updated_at: now })
        .where('id', '=', tenantId)
        .execute()
    },

    /** Auto-assignment's settings; with a change feed, cached per tenant. Read on the caller's executor (the embedded database's one connection). */
    assignSettings(tenantId: string, trx: Db = db): Promise<AssignSettings> {
      return settings ? settings.get(tenantId, () => loadSettings(tenantId, trx)) : loadSettings(tenantId, trx)
    },

    /** The member's status as last set (a heartbeat refreshes its time). */
    statusOf(tenantId: string, userId: string) {
      return db.selectFrom('users').select(['live_status', 'live_status_at']).where('tenant_id', '=', tenantId).where('id', '=', userId).executeTakeFirst()
    },

    /** Sets the member's status; returns the member (undefined when not a member of the workspace). */
    setStatus(tenantId: string, userId: string, status: LiveStatus, now: Date) {
      return db
        .updateTable('users')
        .set({ live_status: status, live_status_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', userId)
        .returning(['id', 'email', 'role', 'bot_ids', 'can_view_original', 'last_active_at', 'created_at', 'live_status'])
        .executeTakeFirst()
    },

    /**
     * Online members who may answer a conversation of `botId` (owners and admins are never limited to bots),
     * with how many open conversations each has (person-owned, ticket unresolved); fewest first, then the
     * longest online. Only members whose online status was set or refreshed since `onlineSince` count.
     */
    async candidates(tenantId: string, botId: string | null, onlineSince: Date, trx: Db = db) {
      const rows = await trx
        .selectFrom('users as u')
        .select((eb) => [
          'u.id',
          'u.role',
          'u.bot_ids',
          eb
            .selectFrom('escalation_tickets as t')
            .innerJoin('chat_sessions as s', (j) => j.onRef('s.id', '=', 't.session_id').onRef('s.tenant_id', '=', 't.tenant_id'))
            .select(sql<number>`count(*)::int`.as('n'))
            .whereRef('t.assignee_user_id', '=', 'u.id')
            .where('t.tenant_id', '=', tenantId)
            .where('t.status', 'in', ['open', 'in_progress'])
            .where('s.owner', '=', 'human')
            .as('open_count'),
        ])
        .where('u.tenant_id', '=', tenantId)
        .where('u.live_status', '=', 'online')
        // an online status lapses when its dashboard stopped sending the heartbeat (closed tab, lost network)
        .where('u.live_status_at', '>=', onlineSince)
        .where('u.role', 'in', [...ANSWERING])
        .orderBy('u.live_status_at')
        .orderBy('u.id')
        .execute()
      return rows
        .filter((r) => botId === null || r.role !== 'agent' || r.bot_ids === null || r.bot_ids.includes(botId))
        .map((r) => ({ id: r.id, open: Number(r.open_count ?? 0) }))
        .sort((a, b) => a.open - b.open)
    },

    /** Conversations waiting for a person, the longest waiting first. */
    queued(tenantId: string, limit: number, trx: Db = db) {
      return trx
        .selectFrom('chat_sessions')
        .select(['id', 'bot_id'])
        .where('tenant_id', '=', tenantId)
        .where('owner', '=', 'queue')
        .where('visitor_gone', '=', false)
        .orderBy('owner_since')
        .orderBy('id')
        .limit(limit)
        .execute()
    },

    /** Workspaces with a conversation waiting for a person (the availability sweep visits these). */
    async queuedTenants(limit: number): Promise<string[]> {
      const rows = await db.selectFrom('chat_sessions').select('tenant_id').distinct().where('owner', '=', 'queue').limit(limit).execute()
      return rows.map((r) => r.tenant_id)
    },

    /** What each bot's waiting visitors were last told (bots never told: absent). */
    async told(tenantId: string): Promise<Map<string, Told>> {
      const rows = await db.selectFrom('live_availability').select(['bot_id', 'online', 'next_open_at']).where('tenant_id', '=', tenantId).execute()
      return new Map(rows.map((r) => [r.bot_id, { online: r.online, nextOpenAt: r.next_open_at }]))
    },

    /**
     * Records what each bot's waiting visitors are told now; returns the bots whose record changed (a concurrent
     * teller that recorded the same thing first leaves nothing changed here), and with `tellNew` the bots that
     * had no record (without it, a first record is a silent baseline: the widget's config said the same).
     */
    async retell(tenantId: string, rows: Array<{ botId: string } & Told>, now: Date, tellNew: boolean, trx: Db): Promise<Set<string>> {
      const v = JSON.stringify(rows.map((r) => ({ bot_id: r.botId, online: r.online, next_open_at: r.nextOpenAt?.toISOString() ?? null })))
      const r = await sql<{ bot_id: string; had: boolean }>`
        WITH v AS (SELECT * FROM jsonb_to_recordset(${v}::jsonb) AS v(bot_id uuid, online boolean, next_open_at timestamptz)),
        prev AS (SELECT a.bot_id FROM live_availability a WHERE a.tenant_id = ${tenantId} AND a.bot_id IN (SELECT bot_id FROM v))
        INSERT INTO live_availability (tenant_id, bot_id, online, next_open_at, updated_at)
        SELECT ${tenantId}, v.bot_id, v.online, v.next_open_at, ${now} FROM v
        ON CONFLICT (tenant_id, bot_id) DO UPDATE
          SET online = EXCLUDED.online, next_open_at = EXCLUDED.next_open_at, updated_at = EXCLUDED.updated_at
          WHERE live_availability.online IS DISTINCT FROM EXCLUDED.online
             OR live_availability.next_open_at IS DISTINCT FROM EXCLUDED.next_open_at
        RETURNING bot_id, bot_id IN (SELECT bot_id FROM prev) AS had`.execute(trx)
      return new Set(r.rows.filter((x) => x.had || tellNew).map((x) => x.bot_id))
    },

    /** The conversations of `botIds` still waiting for a person, locked in id order (many rows, no deadlock). */
    lockQueued(tenantId: string, botIds: string[], limit: number, trx: Db) {
      return trx
        .selectFrom('chat_sessions')
        .select(['id', 'bot_id'])
        .where('tenant_id', '=', tenantId)
        .where('owner', '=', 'queue')
        .where('bot_id', 'in', botIds)
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .execute()
    },

    /** Seconds from each ticket's creation to its first operator reply (or resolution), over tickets since `since`. */
    async medianFirstReplySeconds(tenantId: string, since: Date): Promise<number | null> {
      const r = await sql<{ m: number | null }>`
        SELECT percentile_cont(0.5) WITHIN GROUP (
          ORDER BY extract(epoch FROM (least(coalesce(first_response_at, resolved_at), coalesce(resolved_at, first_response_at)) - created_at))
        ) AS m
        FROM escalation_tickets
        WHERE tenant_id = ${tenantId} AND created_at >= ${since}
          AND (first_response_at IS NOT NULL OR resolved_at IS NOT NULL)`.execute(db)
      const m = r.rows[0]?.m
      return m === null || m === undefined ? null : Math.max(0, Math.round(Number(m)))
    },
  }
}

export type AvailabilityRepo = ReturnType<typeof createAvailabilityRepo>
