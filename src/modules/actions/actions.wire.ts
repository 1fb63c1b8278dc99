import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import { systemClock } from '../../lib/clock.js'
import type { AuditPort } from '../shared/audit.port.js'
import type { EventsPort } from '../shared/events.port.js'
import { createActionsRepo } from './actions.repo.js'
import { actionsRoutes } from './actions.routes.js'
import { createRunner } from './actions.runner.js'
import { createActionSender, type ActionSender } from './actions.sender.js'
import { createActionsService } from './actions.service.js'
import { createActionsPort } from './actions.turns.js'

/**
 * Actions: the dashboard's routes, and the port the chat turn calls them through. Outbound calls go through
 * the crawler's SSRF guard, under the same setting (CRAWLER_ALLOW_PRIVATE_NETWORKS).
 */
export function wireActions(ctx: AppContext, guards: Guards, deps: { audit: AuditPort; events: EventsPort; sender?: ActionSender }) {
  const { db, clock, cipher, config } = ctx
  const repo = createActionsRepo(db, ctx.database.changes, clock)
  const sender =
    deps.sender ??
    createActionSender({
      allowPrivateNetworks: config.CRAWLER_ALLOW_PRIVATE_NETWORKS,
      userAgent: `SupportBotActions/0.1${config.PUBLIC_BASE_URL ? ` (+${config.PUBLIC_BASE_URL})` : ''}`,
    })
  const runner = createRunner({ db, repo, cipher, clock, wallClock: systemClock, sender, events: deps.events })
  const actions = createActionsService({
    db,
    repo,
    cipher,
    clock,
    audit: deps.audit,
    runner,
    allowPrivateNetworks: config.CRAWLER_ALLOW_PRIVATE_NETWORKS,
  })
  return {
    routes: actionsRoutes({ guards, actions, onClose: () => sender.close() }),
    port: createActionsPort({ repo, cipher, clock, runner }),
  }
}
