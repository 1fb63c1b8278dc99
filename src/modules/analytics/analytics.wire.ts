import { join } from 'node:path'
import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { AuditPort } from '../shared/audit.port.js'
import { analyticsJobs, conversationMarker, createRefresher } from './analytics.jobs.js'
import { createAnalyticsRepo } from './analytics.repo.js'
import { analyticsRoutes } from './analytics.routes.js'
import { createAnalyticsService } from './analytics.service.js'

type AnalyticsDeps = Parameters<typeof createAnalyticsService>[0]
import { createExportsRepo } from './exports.repo.js'
import { exportsRoutes } from './exports.routes.js'
import { createExportRunner } from './exports.runner.js'
import { createExportsService } from './exports.service.js'
import { createRollupRepo } from './rollup.repo.js'

/**
 * The part of analytics other modules need before the rest is wired: marking a conversation whose feedback
 * changed (the chat's feedback route calls it inside its transaction).
 */
export function analyticsMarker(ctx: AppContext) {
  return conversationMarker({ repo: createRollupRepo(ctx.db), queue: ctx.queue, clock: ctx.clock })
}

/** Support analytics and exports: figures from the rollups the refresh job keeps, exports as files under DATA_DIR/exports. */
export function wireAnalytics(ctx: AppContext, guards: Guards, deps: { audit: AuditPort; assistFigures?: AnalyticsDeps['assistFigures'] }) {
  const { db, clock, queue, log } = ctx
  const repo = createAnalyticsRepo(db)
  const refresher = createRefresher({ repo: createRollupRepo(db), clock, log })
  const exportsRepo = createExportsRepo(db)
  const runner = createExportRunner({ repo: exportsRepo, clock, log, dir: join(ctx.config.dataDir, 'exports'), refresh: () => refresher.run() })
  const analytics = createAnalyticsService({ repo, clock, lookbackDays: ctx.config.GAP_LOOKBACK_DAYS, assistFigures: deps.assistFigures })
  const exports = createExportsService({ db, clock, queue, audit: deps.audit, repo: exportsRepo, bots: repo, runner })
  return {
    refresher,
    runner,
    routes: [analyticsRoutes({ guards, analytics }), exportsRoutes({ guards, exports })],
    jobs: analyticsJobs({ refresher, exports: runner, sweepEverySeconds: 3600 }),
  }
}
