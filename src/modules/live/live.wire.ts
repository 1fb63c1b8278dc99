import type { AppContext } from '../../context.js'
import type { Guards, Viewer } from '../../http/auth.js'
import type { AuditPort } from '../shared/audit.port.js'
import type { EventsPort } from '../shared/events.port.js'
import type { LivePort } from '../shared/live.port.js'
import { createAvailabilityRepo } from './availability.repo.js'
import { availabilityRoutes } from './availability.routes.js'
import { createAvailabilityService } from './availability.service.js'
import { liveJobs } from './live.jobs.js'
import { createLiveRepo } from './live.repo.js'
import { liveRoutes } from './live.routes.js'
import { createLiveService, type LiveServiceDeps } from './live.service.js'
import { createLiveHub, createLiveStreams } from './live.stream.js'
import { createPresence, sweepGone } from './presence.js'

/**
 * The live conversation: who answers each session, the team's messages and notes, the event streams. Wired
 * before the chat and the escalations, which move a conversation's owner through its port; its routes answer
 * with the escalations module's ticket view, so they are made once that is wired.
 */
export function wireLive(
  ctx: AppContext,
  guards: Guards,
  deps: {
    events: EventsPort
    audit: AuditPort
    onOperatorMessage?: LiveServiceDeps['onOperatorMessage']
    operatorFiles?: LiveServiceDeps['operatorFiles']
    onSuggestionUsed?: LiveServiceDeps['onSuggestionUsed']
    translateForVisitor?: LiveServiceDeps['translateForVisitor']
  },
) {
  const repo = createLiveRepo(ctx.db)
  const availabilityRepo = createAvailabilityRepo(ctx.db, ctx.database.changes, ctx.clock)
  // a gone visitor coming back to a queued conversation is offered to auto-assignment again (after the commit)
  const presence = createPresence({
    db: ctx.db,
    clock: ctx.clock,
    onBack: async (tenantId, _sessionId, trx) => {
      if ((await availabilityRepo.assignSettings(tenantId, trx)).autoAssign) await ctx.queue.enqueue('live.assign_queued', { tenantId }, { tenantId }, trx)
    },
  })
  const service = createLiveService({
    db: ctx.db,
    clock: ctx.clock,
    repo,
    changes: ctx.database.changes,
    events: deps.events,
    audit: deps.audit,
    onOperatorMessage: deps.onOperatorMessage,
    operatorFiles: deps.operatorFiles,
    onSuggestionUsed: deps.onSuggestionUsed,
    translateForVisitor: deps.translateForVisitor,
    onVisitorMessage: (tenantId, sessionId, trx) => presence.seen(tenantId, [sessionId], trx),
    pickAgent: (tenantId, botId, trx) => availability.pickAgent(tenantId, botId, trx),
    autoAssigns: async (tenantId) => (await availabilityRepo.assignSettings(tenantId)).autoAssign,
    onCapacityFreed: async (tenantId, trx) => {
      if ((await availabilityRepo.assignSettings(tenantId, trx)).autoAssign) await ctx.queue.enqueue('live.assign_queued', { tenantId }, { tenantId }, trx)
    },
  })
  const availability = createAvailabilityService({
    db: ctx.db,
    clock: ctx.clock,
    repo: availabilityRepo,
    announce: (tenantId, data) => service.workspaceEvent(tenantId, 'availability', data),
    tellSessions: (tenantId, choose) => service.sessionEvents(tenantId, 'availability', choose),
    offerQueued: service.offerQueued,
  })
  const port: LivePort = { changeOwner: service.changeOwner, planOwnerChange: service.planOwnerChange, messagePosted: service.messagePosted }
  const hub = createLiveHub({
    changes: ctx.database.changes,
    heartbeatMs: ctx.config.WIDGET_SSE_HEARTBEAT_MS,
    log: ctx.log,
    now: () => ctx.clock.now().getTime(),
  })
  const streams = createLiveStreams({ repo, hub, presence })
  return {
    service,
    port,
    hub,
    availability,
    jobs: liveJobs({
      availability,
      queuedTenants: () => availabilityRepo.queuedTenants(1000),
      sweepGone: () =>
        sweepGone(
          { db: ctx.db, clock: ctx.clock, presence, live: port },
          { goneMinutes: ctx.config.VISITOR_GONE_MINUTES, closeHours: ctx.config.GONE_CLOSE_HOURS },
        ),
      sweepEvents: () => repo.sweepEvents(new Date(ctx.clock.now().getTime() - ctx.config.LIVE_EVENTS_RETENTION_DAYS * 86_400_000)),
    }),
    /** What the widget's endpoints use: the visitor's stream, typing and read receipts. */
    widget: {
      sessionStream: streams.session,
      visitorTyping: service.visitorTyping,
      visitorRead: service.visitorRead,
      availability: (tenantId: string, botId: string) => availability.availability(tenantId, botId),
    },
    routes: (d: { ticketView: (tenantId: string, ticketId: string, viewer: Viewer) => Promise<unknown> }) => [
      liveRoutes({ guards, live: service, streams, ticketView: d.ticketView }),
      availabilityRoutes({ guards, availability }),
    ],
  }
}
