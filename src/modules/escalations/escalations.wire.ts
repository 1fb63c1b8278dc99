import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { EmailService } from '../email/email.service.js'
import type { PrivacyRepo } from '../privacy/privacy.repo.js'
import type { TenantsService } from '../tenants/tenants.service.js'
import { escalationsJobs } from './escalations.jobs.js'
import { createEscalationsRepo } from './escalations.repo.js'
import { escalationsRoutes } from './escalations.routes.js'
import { createEscalationsService } from './escalations.service.js'

/**
 * The operator side of tickets. Wired before the chat pipeline, which takes its two hooks: `awaiting`
 * (the visitor's messages after a hand-off) and `afterTicketCreated` (the notification job, enqueued in
 * the ticket's transaction).
 */
export function wireEscalations(
  ctx: AppContext,
  guards: Guards,
  deps: { tenants: Pick<TenantsService, 'notificationAddress'>; email: Pick<EmailService, 'queue'>; privacy: Pick<PrivacyRepo, 'insertEvents'> },
) {
  const { config } = ctx
  const escalations = createEscalationsService({
    db: ctx.db,
    clock: ctx.clock,
    cipher: ctx.cipher,
    repo: createEscalationsRepo(ctx.db),
    privacy: deps.privacy,
    email: deps.email,
    queue: ctx.queue,
    tenants: deps.tenants,
    graceSeconds: config.OPERATOR_REPLY_GRACE_SECONDS,
    dashboardUrl: config.FRONTEND_URL || config.PUBLIC_BASE_URL || null,
  })
  return {
    service: escalations,
    hooks: { awaiting: escalations.onAwaiting, afterTicketCreated: escalations.onTicketOpened },
    routes: escalationsRoutes({ guards, escalations }),
    jobs: escalationsJobs({ escalations }),
  }
}
