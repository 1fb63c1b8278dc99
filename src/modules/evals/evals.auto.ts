import type { JobQueue } from '../../jobs/queue.js'
import { AppError } from '../../lib/errors.js'
import type { Clock } from '../../lib/clock.js'
import type { EvalsRepo } from './evals.repo.js'
import type { EvalsService } from './evals.service.js'

const HOUR_MS = 3600_000
/** A run already in progress when the automatic one is due: it is tried again this much later. */
const BUSY_RETRY_MS = 5 * 60_000

/**
 * Automatic evaluation runs (`evals_auto_run`): a knowledge change (a document added, changed or deleted, a crawl
 * finishing) schedules one `evals.auto` job per workspace, EVAL_AUTO_RUN_DELAY_SECONDS later so the rest of a
 * crawl's pages join it, and never sooner than an hour after the last automatic run. Changes while it waits
 * join it (the dedupe key); a change after it started schedules the next, an hour on.
 */
export function createAutoRun(deps: {
  repo: Pick<EvalsRepo, 'autoRun' | 'lastAutoRunAt' | 'hasCases'>
  queue: JobQueue
  clock: Clock
  delaySeconds: number
  startRun: EvalsService['startRun']
}) {
  const { repo, queue, clock } = deps

  async function schedule(tenantId: string, at: Date, key: string) {
    await queue.enqueue('evals.auto', { tenantId }, { tenantId, runAt: at, dedupeKey: key, maxAttempts: 3 })
  }

  /** The earliest an automatic run may start: the delay from now, and an hour after the last one. */
  async function earliest(tenantId: string, delayMs: number) {
    const last = await repo.lastAutoRunAt(tenantId)
    const now = clock.now().getTime()
    return new Date(Math.max(now + delayMs, last ? last.getTime() + HOUR_MS : 0))
  }

  return {
    async knowledgeChanged(tenantId: string) {
      if (!(await repo.autoRun(tenantId))) return
      await schedule(tenantId, await earliest(tenantId, deps.delaySeconds * 1000), `eval-auto:${tenantId}`)
    },

    async handle(tenantId: string) {
      // no cases: an empty run would only add noise to the runs and a webhook
      if (!(await repo.autoRun(tenantId)) || !(await repo.hasCases(tenantId))) return
      const at = await earliest(tenantId, 0)
      // due again later (another job took the hour meanwhile): a second key, as this job's own is still running
      if (at.getTime() > clock.now().getTime()) return schedule(tenantId, at, `eval-auto-later:${tenantId}`)
      try {
        await deps.startRun(tenantId, {}, null, null, 'auto')
      } catch (err) {
        if (!(err instanceof AppError) || err.status !== 409) throw err
        await schedule(tenantId, new Date(clock.now().getTime() + BUSY_RETRY_MS), `eval-auto-later:${tenantId}`)
      }
    },
  }
}

export type AutoRun = ReturnType<typeof createAutoRun>
