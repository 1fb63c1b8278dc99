import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { AuditPort } from '../shared/audit.port.js'
import type { BotsRepo } from './bots.repo.js'
import { botsRoutes } from './bots.routes.js'
import { createBotsService } from './bots.service.js'

/** Bots and their disclosure level; the repository is the caller's (sign-up and the widget read bots too). */
export function wireBots(ctx: AppContext, guards: Guards, deps: { repo: BotsRepo; audit: AuditPort }) {
  const service = createBotsService({ db: ctx.db, clock: ctx.clock, repo: deps.repo, changes: ctx.database.changes, audit: deps.audit })
  return { service, routes: botsRoutes({ guards, bots: service }) }
}
