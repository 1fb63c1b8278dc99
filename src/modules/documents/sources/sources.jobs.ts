import { defineJob } from '../../../jobs/types.js'
import type { Crawler } from './crawler/crawl.js'
import type { ConnectorSync } from './connectors/sync.js'
import type { SourcesService } from './sources.service.js'

export interface CrawlJob {
  tenantId: string
  sourceId: string
}

declare module '../../../jobs/types.js' {
  interface JobPayloads {
    'sources.crawl': CrawlJob
    'sources.schedule': Record<string, never>
  }
}

export const SCHEDULER_EVERY_SECONDS = 60

export const sourcesJobs = (deps: {
  crawler: Crawler
  /** Connector sources share the crawl job (its dedupe key, its orphan sweep) and are synced instead. */
  sync: Pick<ConnectorSync, 'run'>
  kindOf: (tenantId: string, sourceId: string) => Promise<string | null>
  sources: Pick<SourcesService, 'enqueueDue' | 'closeOrphanRuns'>
  /** a crawl ended (pages added, changed or removed): whoever follows the knowledge (automatic evaluations) */
  onCrawled?: (tenantId: string) => Promise<void>
}) => [
  defineJob({
    kind: 'sources.crawl',
    // Retries resume the run from its saved frontier; a shutdown mid-crawl is one of them.
    maxAttempts: 10,
    backoffSeconds: (attempt) => Math.min(600, 2 ** attempt),
    async handler(payload, ctx) {
      const kind = await deps.kindOf(payload.tenantId, payload.sourceId)
      if (kind === null) return
      if (kind === 'url') await deps.crawler.run(payload.tenantId, payload.sourceId, ctx.signal)
      else await deps.sync.run(payload.tenantId, payload.sourceId, ctx.signal)
      await deps.onCrawled?.(payload.tenantId)
    },
  }),
  defineJob({
    kind: 'sources.schedule',
    everySeconds: SCHEDULER_EVERY_SECONDS,
    maxAttempts: 1,
    async handler() {
      await deps.sources.closeOrphanRuns()
      await deps.sources.enqueueDue()
    },
  }),
]
