import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { EmailService } from '../mailer/mailer.service.js'
import type { AuditPort } from '../shared/audit.port.js'
import type { EventsPort } from '../shared/events.port.js'
import type { LivePort } from '../shared/live.port.js'
import type { PrivacyRepo } from '../tenants/privacy/privacy.repo.js'
import type { TenantsService } from '../tenants/tenants.service.js'
import { escalationsJobs } from './escalations.jobs.js'
import { createEscalationsRepo } from './escalations.repo.js'
import { escalationsRoutes } from './escalations.routes.js'
import { createEscalationsService } from './escalations.service.js'
import { createHandOff, openedNotificationSql } from './handoff.js'
import { createTicketsRepo } from './tickets.repo.js'
import { ticketEvent } from './tickets.fns.js'
import { createTicketsService } from './tickets.service.js'

/**
 * Tickets: their creation, the hand-off port the chat pipeline calls (wired before it), and the operator
 * side. A new ticket's notification job is enqueued in the ticket's own transaction.
 */
export function wireEscalations(
  ctx: AppContext,
  guards: Guards,
  deps: {
    tenants: Pick<TenantsService, 'notificationAddress'>
    email: Pick<EmailService, 'queue'>
    privacy: Pick<PrivacyRepo, 'insertEvents'>
    audit: AuditPort
    events: EventsPort
    /** The live conversation: a hand-off, an assignment and a resolution move who answers the visitor. */
    live: LivePort
    onResolved?: Parameters<typeof createEscalationsService>[0]['onResolved']
    /** the files of the visitor's messages, in a ticket's thread */
    attachments?: Parameters<typeof createEscalationsService>[0]['attachments']
    /** the Reply-To of a team notice: the ticket's own reply address (e-mail channel), null without one */
    ticketReplyTo?: Parameters<typeof createEscalationsService>[0]['ticketReplyTo']
  },
) {
  const { config, db, clock, cipher, queue } = ctx
  const repo = createEscalationsRepo(db)
  const ticketsRepo = createTicketsRepo(db)
  const tickets = createTicketsService({
    clock,
    cipher,
    repo: ticketsRepo,
    // the team's notification of a new ticket is written by the ticket's own statement (enqueueTicketNotification's job)
    createdWrites: (tenantId) => openedNotificationSql(queue, tenantId, 't'),
    // afterCreate's only write is the webhook event: none without an endpoint
    createdQuiet: async (tenantId) => (await deps.events.listens?.(tenantId)) === false,
    afterCreate: (tenantId, ticket, trx) => deps.events.emit(tenantId, ticketEvent('ticket.created', ticket, ticket.status), trx),
    afterReopen: (tenantId, ticket, trx) => deps.events.emit(tenantId, ticketEvent('ticket.reopened', ticket, ticket.status), trx),
  })
  const handOff = createHandOff({ db, clock, cipher, tickets, ticketsRepo, repo, queue, live: deps.live })
  const escalations = createEscalationsService({
    db: ctx.db,
    clock: ctx.clock,
    cipher: ctx.cipher,
    repo,
    privacy: deps.privacy,
    email: deps.email,
    queue: ctx.queue,
    tenants: deps.tenants,
    events: deps.events,
    graceSeconds: config.OPERATOR_REPLY_GRACE_SECONDS,
    dashboardUrl: config.FRONTEND_URL || config.PUBLIC_BASE_URL || null,
    audit: deps.audit,
    live: deps.live,
    onResolved: deps.onResolved,
    attachments: deps.attachments,
    ticketReplyTo: deps.ticketReplyTo,
  })
  return {
    service: escalations,
    handOff,
    /** The question of the session's latest ticket (redacted; a hand-off without a chat message has only this). */
    ticketQuestion: async (tenantId: string, sessionId: string) => (await repo.latestForSession(tenantId, sessionId))?.primary_question ?? null,
    routes: escalationsRoutes({ guards, escalations }),
    jobs: escalationsJobs({ escalations }),
  }
}
