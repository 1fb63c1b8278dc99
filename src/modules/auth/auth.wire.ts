import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { AuthRepo } from './auth.repo.js'
import { authRoutes } from './auth.routes.js'
import { createAuthService } from './auth.service.js'
import type { Jwt } from './jwt.js'

type AuthDeps = Parameters<typeof createAuthService>[0]

/** Sign-up, e-mail verification (which provisions the tenant and its first bot), login and password reset. */
export function wireAuth(
  ctx: AppContext,
  guards: Guards,
  deps: { jwt: Jwt; repo: AuthRepo } & Pick<AuthDeps, 'email' | 'tenants' | 'bots' | 'botsRepo' | 'audit'>,
) {
  const { config } = ctx
  const service = createAuthService({
    db: ctx.db,
    clock: ctx.clock,
    ...deps,
    frontendUrl: config.FRONTEND_URL || config.PUBLIC_BASE_URL || `http://localhost:${config.PORT}`,
  })
  return { service, routes: authRoutes({ guards, auth: service, secureCookies: config.PUBLIC_BASE_URL.startsWith('https://') }) }
}
