import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import { systemClock } from '../../lib/clock.js'
import type { EmailService } from '../mailer/mailer.service.js'
import type { AuditPort } from '../shared/audit.port.js'
import type { EventsPort } from '../shared/events.port.js'
import { createDelivery, createOutbox } from './webhooks.delivery.js'
import { DELIVERY_TIMEOUT_MS } from './webhooks.fns.js'
import { webhooksJobs } from './webhooks.jobs.js'
import { createWebhooksRepo } from './webhooks.repo.js'
import { webhooksRoutes } from './webhooks.routes.js'
import { createSender, type WebhookSender } from './webhooks.sender.js'
import { createWebhooksService } from './webhooks.service.js'

/**
 * Outbound webhooks: the outbox every module emits to (wired first, passed to the others), the endpoints'
 * routes and the delivery job. URLs pass the crawler's SSRF rules, under the same setting.
 */
export function wireWebhooks(ctx: AppContext, guards: Guards, deps: { audit: AuditPort; email: Pick<EmailService, 'queue'>; sender?: WebhookSender }) {
  const { db, clock, cipher, queue, config } = ctx
  const repo = createWebhooksRepo(db, ctx.database.changes, clock)
  const events: EventsPort = createOutbox({ db, repo, queue, clock })
  const sender =
    deps.sender ??
    createSender({
      allowPrivateNetworks: config.CRAWLER_ALLOW_PRIVATE_NETWORKS,
      timeoutMs: DELIVERY_TIMEOUT_MS,
      userAgent: `SupportBotWebhooks/0.1${config.PUBLIC_BASE_URL ? ` (+${config.PUBLIC_BASE_URL})` : ''}`,
    })
  const dashboardUrl = config.FRONTEND_URL || config.PUBLIC_BASE_URL || null
  const delivery = createDelivery({ db, repo, queue, clock, wallClock: systemClock, cipher, sender, email: deps.email, dashboardUrl })
  const webhooks = createWebhooksService({ db, clock, cipher, repo, queue, audit: deps.audit, allowPrivateNetworks: config.CRAWLER_ALLOW_PRIVATE_NETWORKS })
  return {
    events,
    routes: webhooksRoutes({ guards, webhooks, onClose: () => sender.close() }),
    jobs: webhooksJobs({ delivery, repo, clock }),
  }
}
