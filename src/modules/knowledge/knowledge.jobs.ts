import type { Logger } from 'pino'
import type { JobQueue } from '../../jobs/queue.js'
import { defineJob } from '../../jobs/types.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import type { ExtractionService } from './extraction.service.js'
import type { KnowledgeRepo } from './knowledge.repo.js'
import { enqueueExtraction } from './knowledge.service.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** Profile + FAQ candidates of one tenant, debounced after documents were indexed. */
    'knowledge.extract': { tenantId: string }
    /** Recurring: tenants whose documents changed but whose extraction did not run (lost enqueue, crash). */
    'knowledge.sweep': Record<string, never>
  }
}

const MAX_ROUNDS = 5

export const knowledgeJobs = (deps: {
  extraction: ExtractionService
  repo: Pick<KnowledgeRepo, 'clearDirty' | 'dirtyTenants'>
  queue: JobQueue
  clock: Clock
  log: Pick<Logger, 'warn'>
  delaySeconds: number
  sweepEverySeconds: number
}) => {
  const { extraction, repo, queue, clock } = deps
  return [
    defineJob({
      kind: 'knowledge.extract',
      maxAttempts: 3,
      backoffSeconds: (attempt) => 60 * 2 ** (attempt - 1),
      async handler({ tenantId }, ctx) {
        // A document indexed while this runs cannot enqueue (same dedupe key): it marks the profile dirty,
        // and this loop looks again before finishing.
        for (let round = 0; round < MAX_ROUNDS; round++) {
          const startedAt = clock.now()
          const r = await extraction.run(tenantId, ctx.signal)
          if (r.profile === 'failed' && ctx.attempt < 3) throw new Error('profile extraction failed; retrying')
          if (r.more) continue
          if (await repo.clearDirty(tenantId, startedAt)) return
        }
      },
    }),
    defineJob({
      kind: 'knowledge.sweep',
      everySeconds: deps.sweepEverySeconds,
      maxAttempts: 1,
      async handler() {
        for (const tenantId of await repo.dirtyTenants(addSeconds(clock.now(), -deps.delaySeconds), 200)) {
          await enqueueExtraction(queue, clock, tenantId, 0)
        }
      },
    }),
  ]
}
