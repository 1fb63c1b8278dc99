import { defineJob } from '../../jobs/types.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import type { Delivery } from './webhooks.delivery.js'
import { RETENTION_DAYS } from './webhooks.fns.js'
import type { WebhooksRepo } from './webhooks.repo.js'

export interface DeliverJob {
  tenantId: string
  deliveryId: string
}

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** One attempt of one webhook delivery; the delivery's own schedule (not the queue's backoff) decides retries. */
    'webhooks.deliver': DeliverJob
    /** Recurring: deletes finished deliveries and their events after 30 days. */
    'webhooks.sweep': Record<string, never>
  }
}

export const webhooksJobs = (deps: { delivery: Delivery; repo: Pick<WebhooksRepo, 'sweepAllTenants'>; clock: Clock }) => [
  defineJob({
    kind: 'webhooks.deliver',
    // a job only fails for the database or a lock left by a crashed attempt: short retries
    backoffSeconds: (attempt) => Math.min(60, 5 * attempt),
    async handler({ tenantId, deliveryId }) {
      await deps.delivery.deliver(tenantId, deliveryId)
    },
  }),
  defineJob({
    kind: 'webhooks.sweep',
    everySeconds: 3600,
    maxAttempts: 1,
    async handler() {
      await deps.repo.sweepAllTenants(addSeconds(deps.clock.now(), -RETENTION_DAYS * 86400))
    },
  }),
]
