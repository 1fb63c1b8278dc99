import { randomBytes } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import type { Db } from '../../db/client.js'
import type { DeliveryStatus, WebhookKind } from '../../db/schema/webhooks.js'
import type { JobQueue } from '../../jobs/queue.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import type { Cipher } from '../../lib/crypto.js'
import { conflict, notFound, ValidationError } from '../../lib/errors.js'
import { judgeAddress, literalAddressProblem } from '../documents/sources/crawler/ssrf.js'
import type { AuditPort } from '../shared/audit.port.js'
import type { EventType } from '../shared/events.port.js'
import { enqueueDelivery } from './webhooks.delivery.js'
import { eventBody, endpointUrlProblem, PREVIOUS_SECRET_SECONDS, RETENTION_DAYS } from './webhooks.fns.js'
import type { EndpointPatch, EndpointRow, WebhooksRepo } from './webhooks.repo.js'
import { MAX_ENDPOINTS } from './webhooks.schemas.js'

/** Who acts, for the audit log. */
export interface Actor {
  userId: string | null
  ip: string | null
}

export interface EndpointInput {
  url?: string
  events?: EventType[]
  description?: string
  bot_ids?: string[] | null
  enabled?: boolean
  kind?: WebhookKind
}

/** How an endpoint leaves the service: never its secrets or failure bookkeeping. */
export function presentEndpoint(e: EndpointRow) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events as EventType[],
    bot_ids: e.bot_ids,
    enabled: e.enabled,
    kind: e.kind,
    disabled_reason: e.disabled_reason,
    created_at: e.created_at.toISOString(),
  }
}

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`
const RESEND_FAILED_MAX = 10_000

/**
 * Endpoints (URL through the crawler's SSRF rules, secrets encrypted, rotation with 24 h of overlap), the
 * test event, the delivery log and resending. Deliveries themselves are webhooks.delivery.ts, in the worker.
 */
export function createWebhooksService(deps: {
  db: Db
  clock: Clock
  cipher: Pick<Cipher, 'encrypt'>
  repo: WebhooksRepo
  queue: Pick<JobQueue, 'enqueue'>
  audit: AuditPort
  allowPrivateNetworks: boolean
  /** Resolves a host name for the check at creation (the connection is checked again at each delivery). */
  resolve?: (host: string) => Promise<string[]>
}) {
  const { db, clock, cipher, repo, queue, audit } = deps
  const resolve = deps.resolve ?? (async (host: string) => (await lookup(host, { all: true })).map((a) => a.address))

  /** 422 for a URL webhooks may not call: bad shape, or a private, loopback or otherwise non-public address. */
  async function checkUrl(url: string): Promise<void> {
    const refuse = (msg: string) => new ValidationError(['body', 'url'], msg, 'value_error')
    const shape = endpointUrlProblem(url)
    if (shape) throw refuse(shape)
    const literal = literalAddressProblem(url, deps.allowPrivateNetworks)
    if (literal) throw refuse(`The URL points to ${literal.describe()}, which webhooks may not reach`)
    if (deps.allowPrivateNetworks) return
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
    let addresses: string[]
    try {
      addresses = await resolve(host)
    } catch {
      throw refuse("The URL's host name does not resolve")
    }
    for (const a of addresses) {
      const problem = judgeAddress(a)
      if (problem) throw refuse(`The URL's host name resolves to ${problem.describe()}, which webhooks may not reach`)
    }
  }

  async function checkBots(tenantId: string, ids: string[] | null | undefined): Promise<void> {
    if (!ids) return
    const own = await repo.ownBots(tenantId, ids)
    const unknown = ids.find((id) => !own.has(id))
    if (unknown) throw new ValidationError(['body', 'bot_ids'], `No bot ${unknown} in this workspace`, 'value_error')
  }

  async function endpointOr404(tenantId: string, id: string) {
    const e = await repo.findEndpoint(tenantId, id)
    if (!e) throw notFound('Webhook endpoint not found')
    return e
  }

  const enabledOr409 = (e: EndpointRow) => {
    if (!e.enabled) throw conflict('The endpoint is disabled; enable it first', 'endpoint_disabled')
  }

  return {
    list: async (tenantId: string) => (await repo.listEndpoints(tenantId)).map(presentEndpoint),

    async create(tenantId: string, input: EndpointInput & { url: string; events: EventType[] }, actor: Actor) {
      if ((await repo.countEndpoints(tenantId)) >= MAX_ENDPOINTS)
        throw conflict(`A workspace has at most ${MAX_ENDPOINTS} webhook endpoints`, 'too_many_endpoints')
      await checkUrl(input.url)
      await checkBots(tenantId, input.bot_ids)
      const secret = newSecret()
      const row = await repo.insertEndpoint(tenantId, {
        url: input.url,
        description: input.description?.trim() ?? '',
        events: input.events,
        botIds: input.bot_ids ?? null,
        kind: input.kind ?? 'standard',
        secretEnc: cipher.encrypt(secret),
        now: clock.now(),
      })
      await audit.record(tenantId, { actorUserId: actor.userId, ip: actor.ip, action: 'created', itemType: 'webhook_endpoint', itemId: row.id })
      return { ...presentEndpoint(row), secret }
    },

    async update(tenantId: string, id: string, input: EndpointInput, actor: Actor) {
      await endpointOr404(tenantId, id)
      if (input.url !== undefined) await checkUrl(input.url)
      await checkBots(tenantId, input.bot_ids)
      const patch: EndpointPatch = {}
      if (input.url !== undefined) patch.url = input.url
      if (input.events !== undefined) patch.events = input.events
      if (input.description !== undefined) patch.description = input.description.trim()
      if (input.bot_ids !== undefined) patch.bot_ids = input.bot_ids
      if (input.enabled !== undefined) {
        patch.enabled = input.enabled
        // enabled again: a fresh start (the five days of failures count from the next failure)
        if (input.enabled) Object.assign(patch, { disabled_reason: null, failing_since: null })
        else patch.disabled_reason = 'Disabled by a member of the workspace'
      }
      const now = clock.now()
      const row = await db.transaction().execute(async (trx) => {
        const r = await repo.updateEndpoint(tenantId, id, patch, now, trx)
        if (r && input.enabled === false) await repo.failPendingOfEndpoint(tenantId, id, 'endpoint disabled', now, trx)
        await audit.record(tenantId, { actorUserId: actor.userId, ip: actor.ip, action: 'updated', itemType: 'webhook_endpoint', itemId: id }, trx)
        return r
      })
      if (!row) throw notFound('Webhook endpoint not found')
      return presentEndpoint(row)
    },

    async remove(tenantId: string, id: string, actor: Actor): Promise<void> {
      if (!(await repo.deleteEndpoint(tenantId, id))) throw notFound('Webhook endpoint not found')
      await audit.record(tenantId, { actorUserId: actor.userId, ip: actor.ip, action: 'deleted', itemType: 'webhook_endpoint', itemId: id })
    },

    /** A new secret, shown once; the old one goes on signing beside it for 24 h, so receivers can switch without loss. */
    async rotateSecret(tenantId: string, id: string, actor: Actor) {
      const e = await endpointOr404(tenantId, id)
      const secret = newSecret()
      const now = clock.now()
      await db.transaction().execute(async (trx) => {
        await repo.updateEndpoint(
          tenantId,
          id,
          { secret_enc: cipher.encrypt(secret), previous_secret_enc: e.secret_enc, previous_secret_until: addSeconds(now, PREVIOUS_SECRET_SECONDS) },
          now,
          trx,
        )
        await audit.record(tenantId, { actorUserId: actor.userId, ip: actor.ip, action: 'rotated_key', itemType: 'webhook_endpoint', itemId: id }, trx)
      })
      return { secret }
    },

    /** A `webhook.test` event to this endpoint only, whatever events it takes. */
    async sendTest(tenantId: string, id: string) {
      const e = await endpointOr404(tenantId, id)
      enabledOr409(e)
      const now = clock.now()
      const data = { endpoint_id: id, message: 'This is a test event from your support bot.' }
      const deliveryId = await db.transaction().execute(async (trx) => {
        const d = await repo.insertDirect(
          tenantId,
          id,
          { type: 'webhook.test', botId: null, ticketId: null, body: eventBody('webhook.test', now, data), now },
          trx,
        )
        await enqueueDelivery(queue, tenantId, d, trx)
        return d
      })
      return { delivery_id: deliveryId }
    },

    async deliveries(tenantId: string, endpointId: string, q: { status?: DeliveryStatus; cursor?: string; limit: number }) {
      await endpointOr404(tenantId, endpointId)
      const rows = await repo.listDeliveries(tenantId, endpointId, { status: q.status, before: q.cursor, limit: q.limit })
      return {
        items: rows.map((r) => ({
          id: r.id,
          event_id: r.event_id,
          type: r.type as EventType,
          status: r.status,
          attempts: r.attempts,
          last_status_code: r.last_status_code,
          last_latency_ms: r.last_latency_ms,
          next_attempt_at: r.next_attempt_at?.toISOString() ?? null,
          created_at: r.created_at.toISOString(),
        })),
        next_cursor: rows.length === q.limit ? rows[rows.length - 1]!.seq : null,
      }
    },

    async attempts(tenantId: string, deliveryId: string) {
      if (!(await repo.findDelivery(tenantId, deliveryId))) throw notFound('Delivery not found')
      const rows = await repo.attemptsOf(tenantId, deliveryId)
      return {
        items: rows.map((a) => ({
          attempted_at: a.attempted_at.toISOString(),
          status_code: a.status_code,
          latency_ms: a.latency_ms,
          response_excerpt: a.response_excerpt,
          error: a.error,
          next_attempt_at: a.next_attempt_at?.toISOString() ?? null,
        })),
      }
    },

    /** Sends one delivery again (same event, same webhook-id), from the start of the retry schedule. */
    async resend(tenantId: string, deliveryId: string) {
      const d = await repo.findDelivery(tenantId, deliveryId)
      if (!d) throw notFound('Delivery not found')
      enabledOr409((await repo.findEndpoint(tenantId, d.endpoint_id))!)
      await db.transaction().execute(async (trx) => {
        if (await repo.resend(tenantId, deliveryId, clock.now(), trx)) await enqueueDelivery(queue, tenantId, deliveryId, trx)
      })
      return { delivery_id: deliveryId }
    },

    /** Sends again every failed delivery of the endpoint created since `since` (within the 30 days kept). */
    async resendFailed(tenantId: string, endpointId: string, since: Date) {
      enabledOr409(await endpointOr404(tenantId, endpointId))
      const now = clock.now()
      if (since.getTime() > now.getTime()) throw new ValidationError(['body', 'since'], 'since is in the future', 'value_error')
      const floor = addSeconds(now, -RETENTION_DAYS * 86400)
      return db.transaction().execute(async (trx) => {
        const ids = await repo.resendFailed(tenantId, endpointId, since < floor ? floor : since, now, RESEND_FAILED_MAX, trx)
        for (const id of ids) await enqueueDelivery(queue, tenantId, id, trx)
        return { resent: ids.length }
      })
    },
  }
}

export type WebhooksService = ReturnType<typeof createWebhooksService>
