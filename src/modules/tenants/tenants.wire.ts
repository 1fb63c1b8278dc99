import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { TenantsRepo } from './tenants.repo.js'
import { tenantsRoutes, type TenantsAudit } from './tenants.routes.js'
import { createTenantsService } from './tenants.service.js'

/**
 * Tenants, their keys and settings. The repository is made by the caller (the guards read it too); the
 * widget module counts identified sessions, the documents module embeds what waited for a model key.
 */
export function wireTenants(
  ctx: AppContext,
  guards: Guards,
  deps: {
    repo: TenantsRepo
    sessionStats: Parameters<typeof createTenantsService>[0]['sessionStats']
    onLlmKeySet: (tenantId: string) => Promise<unknown>
    audit: TenantsAudit
  },
) {
  const { audit, ...rest } = deps
  const service = createTenantsService({ db: ctx.db, clock: ctx.clock, cipher: ctx.cipher, ...rest })
  return { service, routes: tenantsRoutes({ guards, tenants: service, audit }) }
}
