import type { AppContext } from '../../../context.js'
import type { Guards } from '../../../http/auth.js'
import { privacyJobs } from './privacy.jobs.js'
import { createPrivacyRepo } from './privacy.repo.js'
import { privacyRoutes } from './privacy.routes.js'
import { createPrivacyService } from './privacy.service.js'

/** The PII audit trail API, its daily retention job, and the repository other modules write events with. */
export function wirePrivacy(ctx: AppContext, guards: Guards) {
  const repo = createPrivacyRepo(ctx.db)
  const privacy = createPrivacyService({ db: ctx.db, clock: ctx.clock, repo, defaultRetentionDays: ctx.config.PII_RETENTION_DAYS })
  return { repo, service: privacy, routes: privacyRoutes({ guards, privacy }), jobs: privacyJobs({ privacy }) }
}
