import { sql, type Selectable } from 'kysely'
import { NoticeCache, type ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { DeliveryStatus, WebhookDeliveriesTable, WebhookEndpointsTable, WebhookKind } from '../../db/schema/webhooks.js'

export type EndpointRow = Selectable<WebhookEndpointsTable>
export type DeliveryRow = Selectable<WebhookDeliveriesTable>

export interface NewEndpoint {
  url: string
  description: string
  events: string[]
  botIds: string[] | null
  kind: WebhookKind
  secretEnc: string
  now: Date
}

export interface EndpointPatch {
  url?: string
  description?: string
  events?: string[]
  bot_ids?: string[] | null
  enabled?: boolean
  disabled_reason?: string | null
  failing_since?: Date | null
  secret_enc?: string
  previous_secret_enc?: string | null
  previous_secret_until?: Date | null
}

export interface EmittedEvent {
  type: string
  botId: string | null
  ticketId: string | null
  body: string
  now: Date
  /**
   * The conversation the event belongs to when its data names one but not its channel: `data.channel` is then
   * added from the session (widget|api|email), read only when an endpoint takes the event.
   */
  channelOf?: string | null
}

/** What the delivery job reads of a claimed delivery: its endpoint and its event's body. */
export interface ClaimedDelivery {
  id: string
  seq: string
  endpoint_id: string
  event_id: string
  type: string
  ticket_id: string | null
  retry_step: number
  url: string
  kind: WebhookKind
  enabled: boolean
  secret_enc: string
  previous_secret_enc: string | null
  previous_secret_until: Date | null
  failing_since: Date | null
  body: string
}

/** Endpoints of the tenant that take an event of this type and bot (a bot-limited endpoint takes only its bots' events). */
const matching = (tenantId: string, type: string, botId: string | null) => sql`
  e.tenant_id = ${tenantId}::uuid AND e.enabled AND e.events @> jsonb_build_array(${type}::text)
  AND (e.bot_ids IS NULL OR (${botId}::text IS NOT NULL AND e.bot_ids @> jsonb_build_array(${botId}::text)))`

/** Announced (key: the tenant id) when a tenant's endpoint is added or removed. */
export const WEBHOOKS_TOPIC = 'webhooks'

/**
 * Webhook endpoints, deliveries and events; every method takes the tenant id first. With a change feed, whether a
 * tenant has any endpoint at all is cached (WEBHOOKS_TOPIC notices), so the events a turn emits for a workspace
 * without webhooks (most of them) cost no statement.
 */
export function createWebhooksRepo(db: Db, changes?: ChangeFeed, clock?: { now(): Date }) {
  const endpoints = (trx: Db) => trx.selectFrom('webhook_endpoints')
  const anyCache = changes ? new NoticeCache<boolean>(changes, WEBHOOKS_TOPIC, { ttlMs: 60_000, max: 10_000, clock }) : null
  const anyEndpoint = (tenantId: string, trx: Db) =>
    endpoints(trx)
      .select('id')
      .where('tenant_id', '=', tenantId)
      .limit(1)
      .executeTakeFirst()
      .then((r) => r !== undefined)
  const announce = async (tenantId: string) => {
    await changes?.announce(db, WEBHOOKS_TOPIC, tenantId)
  }
  return {
    /**
     * Whether the tenant has an endpoint (enabled or not); false means no event of its can be delivered. Read on the
     * caller's executor: inside a transaction on the embedded database, the pool's only connection is that one.
     */
    hasEndpoints(tenantId: string, trx: Db = db): Promise<boolean> {
      return anyCache ? anyCache.get(tenantId, () => anyEndpoint(tenantId, trx)) : anyEndpoint(tenantId, trx)
    },

    listEndpoints(tenantId: string) {
      return endpoints(db).selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute()
    },

    findEndpoint(tenantId: string, id: string, trx: Db = db) {
      return endpoints(trx).selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    },

    countEndpoints(tenantId: string) {
      return endpoints(db)
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },

    async insertEndpoint(tenantId: string, e: NewEndpoint) {
      const row = await db
        .insertInto('webhook_endpoints')
        .values({
          tenant_id: tenantId,
          url: e.url,
          description: e.description,
          events: JSON.stringify(e.events),
          bot_ids: e.botIds ? JSON.stringify(e.botIds) : null,
          kind: e.kind,
          secret_enc: e.secretEnc,
          disabled_reason: null,
          previous_secret_enc: null,
          previous_secret_until: null,
          failing_since: null,
          created_at: e.now,
          updated_at: e.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
      await announce(tenantId)
      return row
    },

    updateEndpoint(tenantId: string, id: string, p: EndpointPatch, now: Date, trx: Db = db) {
      const { events, bot_ids, ...rest } = p
      return trx
        .updateTable('webhook_endpoints')
        .set({
          ...rest,
          ...(events !== undefined ? { events: JSON.stringify(events) } : {}),
          ...(bot_ids !== undefined ? { bot_ids: bot_ids === null ? null : JSON.stringify(bot_ids) } : {}),
          updated_at: now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst()
    },

    async deleteEndpoint(tenantId: string, id: string): Promise<boolean> {
      const r = await db.deleteFrom('webhook_endpoints').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
      await announce(tenantId)
      return Number(r.numDeletedRows) > 0
    },

    /** Which of these ids are bots of the tenant. */
    async ownBots(tenantId: string, ids: string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set()
      const rows = await db.selectFrom('bots').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute()
      return new Set(rows.map((r) => r.id))
    },

    /**
     * The outbox write: the event and one pending delivery per matching endpoint, in one statement on the
     * caller's transaction. Nothing is written when no endpoint takes the event. `blocked`: an earlier event of
     * the same ticket is still pending for that endpoint, so this delivery waits for it (whose end wakes it).
     * Those earlier deliveries are locked: one that is settling right now either commits first (and is seen
     * finished here) or waits for this transaction (and then sees the new delivery to wake).
     */
    async fanOut(tenantId: string, e: EmittedEvent, trx: Db): Promise<{ id: string; blocked: boolean }[]> {
      const { rows } = await sql<{ id: string; blocked: boolean }>`
        WITH ev AS (
          INSERT INTO webhook_events (tenant_id, type, bot_id, ticket_id, body, created_at)
          SELECT ${tenantId}::uuid, ${e.type}, ${e.botId}::uuid, ${e.ticketId}::uuid, ${bodyWithChannel(tenantId, e)}, ${e.now}
          WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE ${matching(tenantId, e.type, e.botId)})
          RETURNING id
        ), prev AS (
          SELECT p.endpoint_id FROM webhook_deliveries p
          WHERE p.ticket_id = ${e.ticketId}::uuid AND p.status = 'pending' AND p.tenant_id = ${tenantId}::uuid
          FOR UPDATE
        ), ins AS (
          INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, type, ticket_id, next_attempt_at, created_at, updated_at)
          SELECT ${tenantId}::uuid, e.id, ev.id, ${e.type}, ${e.ticketId}::uuid, ${e.now}, ${e.now}, ${e.now}
          FROM ev, webhook_endpoints e WHERE ${matching(tenantId, e.type, e.botId)}
          ORDER BY e.created_at, e.id
          RETURNING id, endpoint_id
        )
        SELECT ins.id, EXISTS (SELECT 1 FROM prev WHERE prev.endpoint_id = ins.endpoint_id) AS blocked FROM ins`.execute(trx)
      return rows
    },

    /** An event for one endpoint only (the test button), whatever events it takes. */
    async insertDirect(tenantId: string, endpointId: string, e: EmittedEvent, trx: Db): Promise<string> {
      const ev = await trx
        .insertInto('webhook_events')
        .values({ tenant_id: tenantId, type: e.type, bot_id: e.botId, ticket_id: e.ticketId, body: e.body, created_at: e.now })
        .returning('id')
        .executeTakeFirstOrThrow()
      const d = await trx
        .insertInto('webhook_deliveries')
        .values({
          tenant_id: tenantId,
          endpoint_id: endpointId,
          event_id: ev.id,
          type: e.type,
          ticket_id: e.ticketId,
          next_attempt_at: e.now,
          created_at: e.now,
          updated_at: e.now,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
      return d.id
    },

    /** A page of an endpoint's deliveries, newest first; the cursor is the last row's `seq`. */
    listDeliveries(tenantId: string, endpointId: string, q: { status?: DeliveryStatus; before?: string; limit: number }) {
      let query = db
        .selectFrom('webhook_deliveries')
        .select([
          'id',
          sql<string>`seq::text`.as('seq'),
          'event_id',
          'type',
          'status',
          'attempts',
          'last_status_code',
          'last_latency_ms',
          'next_attempt_at',
          'created_at',
        ])
        .where('tenant_id', '=', tenantId)
        .where('endpoint_id', '=', endpointId)
      if (q.status) query = query.where('status', '=', q.status)
      if (q.before) query = query.where(sql<boolean>`seq < ${q.before}::bigint`)
      return query.orderBy('seq', 'desc').limit(q.limit).execute()
    },

    attemptsOf(tenantId: string, deliveryId: string) {
      return db
        .selectFrom('webhook_attempts')
        .select(['attempted_at', 'status_code', 'latency_ms', 'response_excerpt', 'error', 'next_attempt_at'])
        .where('tenant_id', '=', tenantId)
        .where('delivery_id', '=', deliveryId)
        .orderBy('id')
        .limit(100)
        .execute()
    },

    findDelivery(tenantId: string, id: string, trx: Db = db) {
      return trx.selectFrom('webhook_deliveries').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    },

    /**
     * Takes the delivery for one attempt: it is pending, due, not in flight, and no earlier delivery of the
     * same ticket to the same endpoint is still pending (those go first). Undefined when it cannot run now.
     */
    async claim(tenantId: string, id: string, now: Date, lockUntil: Date): Promise<ClaimedDelivery | undefined> {
      const { rows } = await sql<ClaimedDelivery>`
        WITH c AS (
          UPDATE webhook_deliveries d SET locked_until = ${lockUntil}, updated_at = ${now}
          WHERE d.tenant_id = ${tenantId}::uuid AND d.id = ${id}::uuid AND d.status = 'pending' AND d.next_attempt_at <= ${now}
            AND (d.locked_until IS NULL OR d.locked_until < ${now})
            AND (d.ticket_id IS NULL OR NOT EXISTS (
              SELECT 1 FROM webhook_deliveries p
              WHERE p.endpoint_id = d.endpoint_id AND p.ticket_id = d.ticket_id AND p.status = 'pending' AND p.seq < d.seq))
          RETURNING d.id, d.seq, d.endpoint_id, d.event_id, d.type, d.ticket_id, d.retry_step
        )
        SELECT c.id, c.seq::text AS seq, c.endpoint_id, c.event_id, c.type, c.ticket_id, c.retry_step,
               e.url, e.kind, e.enabled, e.secret_enc, e.previous_secret_enc, e.previous_secret_until, e.failing_since, ev.body
        FROM c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN webhook_events ev ON ev.id = c.event_id`.execute(db)
      return rows[0]
    },

    recordAttempt(
      tenantId: string,
      a: {
        deliveryId: string
        at: Date
        statusCode: number | null
        latencyMs: number
        excerpt: string | null
        error: string | null
        nextAttemptAt: Date | null
      },
      trx: Db,
    ) {
      return trx
        .insertInto('webhook_attempts')
        .values({
          tenant_id: tenantId,
          delivery_id: a.deliveryId,
          attempted_at: a.at,
          status_code: a.statusCode,
          latency_ms: a.latencyMs,
          response_excerpt: a.excerpt,
          error: a.error,
          next_attempt_at: a.nextAttemptAt,
        })
        .execute()
    },

    /** After an attempt: pending again with its next attempt time, or finished (delivered / failed). */
    settleDelivery(
      tenantId: string,
      id: string,
      s: {
        status: DeliveryStatus
        nextAttemptAt: Date | null
        retryStep: number
        statusCode: number | null
        latencyMs: number | null
        error: string | null
        now: Date
      },
      trx: Db,
    ) {
      return trx
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          status: s.status,
          attempts: eb('attempts', '+', 1),
          retry_step: s.retryStep,
          next_attempt_at: s.nextAttemptAt,
          locked_until: null,
          last_status_code: s.statusCode,
          last_latency_ms: s.latencyMs,
          last_error: s.error,
          updated_at: s.now,
          finished_at: s.status === 'pending' ? null : s.now,
        }))
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .execute()
    },

    /** A pending delivery of a disabled endpoint fails without an attempt (a resend brings it back). */
    failWithoutAttempt(tenantId: string, id: string, reason: string, now: Date, trx: Db = db) {
      return trx
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', locked_until: null, next_attempt_at: null, last_error: reason, updated_at: now, finished_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .execute()
    },

    /** Every pending delivery of an endpoint that was disabled fails at once (their jobs then find nothing to do). */
    failPendingOfEndpoint(tenantId: string, endpointId: string, reason: string, now: Date, trx: Db = db) {
      return trx
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', locked_until: null, next_attempt_at: null, last_error: reason, updated_at: now, finished_at: now })
        .where('tenant_id', '=', tenantId)
        .where('endpoint_id', '=', endpointId)
        .where('status', '=', 'pending')
        .execute()
    },

    /** The earliest pending delivery of the ticket to the endpoint: the one that may go next. */
    nextOfTicket(tenantId: string, endpointId: string, ticketId: string, trx: Db) {
      return trx
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('endpoint_id', '=', endpointId)
        .where('ticket_id', '=', ticketId)
        .where('status', '=', 'pending')
        .orderBy('seq')
        .limit(1)
        .executeTakeFirst()
    },

    /** Sends a delivery again from the start of the retry schedule, keeping its event (and so its webhook-id). */
    resend(tenantId: string, id: string, now: Date, trx: Db) {
      return trx
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', retry_step: 0, next_attempt_at: now, locked_until: null, finished_at: null, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('status', '<>', 'pending')
        .returning('id')
        .executeTakeFirst()
    },

    async resendFailed(tenantId: string, endpointId: string, since: Date, now: Date, limit: number, trx: Db): Promise<string[]> {
      const { rows } = await sql<{ id: string }>`
        UPDATE webhook_deliveries SET status = 'pending', retry_step = 0, next_attempt_at = ${now}, locked_until = NULL, finished_at = NULL, updated_at = ${now}
        WHERE id IN (
          SELECT id FROM webhook_deliveries
          WHERE tenant_id = ${tenantId}::uuid AND endpoint_id = ${endpointId}::uuid AND status = 'failed' AND created_at >= ${since}
          ORDER BY seq LIMIT ${limit})
        RETURNING id`.execute(trx)
      return rows.map((r) => r.id)
    },

    /** The addresses told when an endpoint is disabled: the workspace's owners (team workspace roles). */
    async ownerEmails(tenantId: string, trx: Db = db): Promise<string[]> {
      const rows = await trx.selectFrom('users').select('email').where('tenant_id', '=', tenantId).where('role', '=', 'owner').orderBy('email').execute()
      return rows.map((r) => r.email)
    },

    /** Retention, across tenants: finished deliveries and events older than the cutoff (never a pending one). */
    async sweepAllTenants(before: Date): Promise<{ deliveries: number; events: number }> {
      const d = await db.deleteFrom('webhook_deliveries').where('status', '<>', 'pending').where('finished_at', '<', before).executeTakeFirst()
      const e = await db
        .deleteFrom('webhook_events')
        .where('created_at', '<', before)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'webhook_events.id'))))
        .executeTakeFirst()
      return { deliveries: Number(d.numDeletedRows), events: Number(e.numDeletedRows) }
    },
  }
}

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>

/**
 * The event's body, with `"channel"` appended to its data when `channelOf` names a session: the JSON text is kept as
 * built (its last two characters close data and the body), so what is signed is what eventBody wrote plus one field.
 */
function bodyWithChannel(tenantId: string, e: EmittedEvent) {
  if (!e.channelOf || !e.body.endsWith('}}') || e.body.endsWith('{}}')) return sql`${e.body}`
  const head = `${e.body.slice(0, -2)},"channel":`
  return sql`${head} || COALESCE((SELECT to_json(s.channel)::text FROM chat_sessions s WHERE s.id = ${e.channelOf}::uuid AND s.tenant_id = ${tenantId}::uuid), 'null') || '}}'`
}
