import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { AuthRepo } from '../auth/auth.repo.js'
import type { AuthService } from '../auth/auth.service.js'
import type { EmailService } from '../mailer/mailer.service.js'
import type { AuditPort } from '../shared/audit.port.js'
import { createTeamRepo } from './team.repo.js'
import { teamRoutes } from './team.routes.js'
import { createTeamService } from './team.service.js'

/** The team workspace: members, invitations (mailed), ownership transfer and accepting an invitation. */
export function wireTeam(
  ctx: AppContext,
  guards: Guards,
  deps: { users: AuthRepo; auth: Pick<AuthService, 'session'>; email: EmailService; audit: AuditPort },
) {
  const { config } = ctx
  const repo = createTeamRepo(ctx.db, ctx.database.changes)
  const team = createTeamService({
    db: ctx.db,
    clock: ctx.clock,
    repo,
    users: deps.users,
    email: deps.email,
    audit: deps.audit,
    session: deps.auth.session,
    frontendUrl: config.FRONTEND_URL || config.PUBLIC_BASE_URL || `http://localhost:${config.PORT}`,
  })
  return { service: team, routes: teamRoutes({ guards, team, secureCookies: config.PUBLIC_BASE_URL.startsWith('https://') }) }
}
