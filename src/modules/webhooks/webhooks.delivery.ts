import { Webhook } from 'standardwebhooks'
import type { Db } from '../../db/client.js'
import type { JobQueue } from '../../jobs/queue.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import type { Cipher } from '../../lib/crypto.js'
import type { EmailService } from '../mailer/mailer.service.js'
import type { EventType, EventsPort } from '../shared/events.port.js'
import { FAILING_DISABLE_SECONDS, eventBody, judgeStatus, nextRetrySeconds, slackMessage } from './webhooks.fns.js'
import type { ClaimedDelivery, WebhooksRepo } from './webhooks.repo.js'
import type { WebhookSender } from './webhooks.sender.js'

type Executor = Parameters<JobQueue['enqueue']>[3]

/** An attempt holds its delivery this long: longer than the 10 s timeout, shorter than a job's lease. */
const ATTEMPT_LOCK_SECONDS = 15

export const enqueueDelivery = (queue: Pick<JobQueue, 'enqueue'>, tenantId: string, deliveryId: string, trx: Executor, runAt?: Date) =>
  queue.enqueue('webhooks.deliver', { tenantId, deliveryId }, { tenantId, runAt, maxAttempts: 10 }, trx)

/**
 * The outbox behind the EventsPort: the event and a delivery per endpoint that takes it are written on the
 * caller's transaction, with their delivery jobs, so an event exists exactly when its change committed.
 */
export function createOutbox(deps: {
  db: Db
  repo: Pick<WebhooksRepo, 'fanOut' | 'hasEndpoints'>
  queue: Pick<JobQueue, 'enqueue'>
  clock: Clock
}): EventsPort {
  return {
    async emit(tenantId, event, trx) {
      const executor = (trx as Db | undefined) ?? deps.db
      // no endpoint, no event: the outbox statement would write nothing (cached, see WEBHOOKS_TOPIC)
      if (!(await deps.repo.hasEndpoints(tenantId, executor))) return
      const now = deps.clock.now()
      const body = eventBody(event.type, now, event.data)
      const sid = event.data.session_id
      const channelOf = typeof sid === 'string' && event.data.channel === undefined ? sid : null
      const rows = await deps.repo.fanOut(tenantId, { type: event.type, botId: event.botId, ticketId: event.ticketId ?? null, body, now, channelOf }, executor)
      // a delivery behind an earlier pending one of its ticket gets its job when that one ends
      for (const r of rows) if (!r.blocked) await enqueueDelivery(deps.queue, tenantId, r.id, executor)
    },
    listens: (tenantId) => deps.repo.hasEndpoints(tenantId),
  }
}

export interface DeliveryDeps {
  db: Db
  repo: WebhooksRepo
  queue: Pick<JobQueue, 'enqueue'>
  clock: Clock
  /** The time written into `webhook-timestamp`: the receiver compares it with its own wall clock. */
  wallClock: Clock
  cipher: Pick<Cipher, 'decrypt'>
  sender: WebhookSender
  email: Pick<EmailService, 'queue'>
  /** The dashboard's origin, for links in Slack messages and mails; null for none. */
  dashboardUrl: string | null
}

/** Standard Webhooks headers; within 24 h of a rotation both secrets sign (space-separated `v1,` signatures). */
export function signedHeaders(
  d: Pick<ClaimedDelivery, 'event_id' | 'secret_enc' | 'previous_secret_enc' | 'previous_secret_until'>,
  body: string,
  at: Date,
  now: Date,
  cipher: Pick<Cipher, 'decrypt'>,
) {
  const secrets = [cipher.decrypt(d.secret_enc)]
  if (d.previous_secret_enc && d.previous_secret_until && d.previous_secret_until.getTime() > now.getTime()) secrets.push(cipher.decrypt(d.previous_secret_enc))
  const signature = secrets.map((s) => new Webhook(s).sign(d.event_id, at, body)).join(' ')
  return { 'webhook-id': d.event_id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature }
}

function requestBody(d: ClaimedDelivery, dashboardUrl: string | null): string {
  if (d.kind !== 'slack') return d.body
  const parsed = JSON.parse(d.body) as { type: EventType; data: Record<string, unknown> }
  return JSON.stringify(slackMessage(parsed.type, parsed.data ?? {}, dashboardUrl))
}

/** One attempt of one delivery (the `webhooks.deliver` job), and what follows it, committed together. */
export function createDelivery(deps: DeliveryDeps) {
  const { db, repo, queue, clock } = deps

  /** The delivery reached its end: the next pending event of the same ticket to the same endpoint may go. */
  async function wakeNext(tenantId: string, d: Pick<ClaimedDelivery, 'endpoint_id' | 'ticket_id'>, trx: Db) {
    if (!d.ticket_id) return
    const next = await repo.nextOfTicket(tenantId, d.endpoint_id, d.ticket_id, trx)
    if (next) await enqueueDelivery(queue, tenantId, next.id, trx)
  }

  async function disable(tenantId: string, endpointId: string, reason: string, now: Date, trx: Db) {
    await repo.updateEndpoint(tenantId, endpointId, { enabled: false, disabled_reason: reason }, now, trx)
    await repo.failPendingOfEndpoint(tenantId, endpointId, `endpoint disabled: ${reason}`, now, trx)
  }

  async function mailOwners(tenantId: string, d: ClaimedDelivery, trx: Db) {
    const link = deps.dashboardUrl ? `${deps.dashboardUrl}/app/integrations` : null
    for (const to of await repo.ownerEmails(tenantId, trx)) {
      await deps.email.queue(
        {
          to,
          subject: 'A webhook endpoint was disabled after failing for 5 days',
          text: [
            `Deliveries to ${d.url} have failed for 5 days, so the endpoint was disabled and its pending events were marked failed.`,
            'Fix the receiver, enable the endpoint again and use "Resend failed" to send what it missed.',
            ...(link ? ['', link] : []),
          ].join('\n'),
        },
        { tenantId, dedupeKey: `webhook-disabled:${d.endpoint_id}:${d.failing_since?.getTime() ?? 0}` },
        trx,
      )
    }
  }

  return {
    async deliver(tenantId: string, deliveryId: string): Promise<void> {
      const now = clock.now()
      const d = await repo.claim(tenantId, deliveryId, now, addSeconds(now, ATTEMPT_LOCK_SECONDS))
      if (!d) {
        const row = await repo.findDelivery(tenantId, deliveryId)
        if (row?.status !== 'pending') return // finished, or gone with its endpoint
        // in flight elsewhere, or left by a crashed attempt: the queue tries again after the lock lapses
        if (row.locked_until && row.locked_until.getTime() > now.getTime()) throw new Error('delivery attempt in flight')
        // not due yet (a job that ran early): a job at its time, so a pending delivery never stays without one
        if (row.next_attempt_at && row.next_attempt_at.getTime() > now.getTime()) await enqueueDelivery(queue, tenantId, deliveryId, db, row.next_attempt_at)
        return // or waiting for an earlier event of its ticket, whose end wakes it
      }
      if (!d.enabled) {
        await db.transaction().execute(async (trx) => {
          await repo.failWithoutAttempt(tenantId, d.id, 'endpoint disabled', now, trx)
          await wakeNext(tenantId, d, trx)
        })
        return
      }
      const body = requestBody(d, deps.dashboardUrl)
      const out = await deps.sender.send(d.url, signedHeaders(d, body, deps.wallClock.now(), now, deps.cipher), body)
      const at = clock.now()
      const verdict = judgeStatus(out.status)
      const wait = verdict === 'retry' ? nextRetrySeconds(d.retry_step) : null
      const nextAttemptAt = wait === null ? null : addSeconds(at, wait)
      const status = verdict === 'delivered' ? 'delivered' : nextAttemptAt ? 'pending' : 'failed'
      const error = out.error ?? (verdict === 'delivered' ? null : `HTTP ${out.status}`)
      await db.transaction().execute(async (trx) => {
        await repo.recordAttempt(
          tenantId,
          { deliveryId: d.id, at, statusCode: out.status, latencyMs: out.latencyMs, excerpt: out.excerpt, error, nextAttemptAt },
          trx,
        )
        await repo.settleDelivery(
          tenantId,
          d.id,
          { status, nextAttemptAt, retryStep: d.retry_step + 1, statusCode: out.status, latencyMs: out.latencyMs, error, now: at },
          trx,
        )
        if (verdict === 'delivered') {
          if (d.failing_since) await repo.updateEndpoint(tenantId, d.endpoint_id, { failing_since: null }, at, trx)
        } else if (verdict === 'gone') {
          await disable(tenantId, d.endpoint_id, 'The endpoint answered 410 Gone', at, trx)
        } else if (!d.failing_since) {
          await repo.updateEndpoint(tenantId, d.endpoint_id, { failing_since: at }, at, trx)
        } else if (at.getTime() - d.failing_since.getTime() >= FAILING_DISABLE_SECONDS * 1000) {
          await disable(tenantId, d.endpoint_id, 'Deliveries failed for 5 days', at, trx)
          await mailOwners(tenantId, d, trx)
          return
        }
        if (status === 'pending') await enqueueDelivery(queue, tenantId, d.id, trx, nextAttemptAt!)
        else await wakeNext(tenantId, d, trx)
      })
    },
  }
}

export type Delivery = ReturnType<typeof createDelivery>
