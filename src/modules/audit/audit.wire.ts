import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import { auditJobs } from './audit.jobs.js'
import { createAuditRepo } from './audit.repo.js'
import { auditRoutes } from './audit.routes.js'
import { createAuditService } from './audit.service.js'

/** The stored audit log: the port other modules record through, its reading route and its retention job. */
export function wireAudit(ctx: AppContext, guards: Guards) {
  const repo = createAuditRepo(ctx.db)
  const audit = createAuditService({ clock: ctx.clock, repo, defaultRetentionDays: ctx.config.PII_RETENTION_DAYS })
  return { port: audit.port, service: audit, routes: auditRoutes({ guards, audit }), jobs: auditJobs({ audit }) }
}
