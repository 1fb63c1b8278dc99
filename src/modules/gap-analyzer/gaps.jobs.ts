import type { Logger } from 'pino'
import { defineJob } from '../../jobs/types.js'
import type { Clock } from '../../lib/clock.js'
import type { GapRunMode } from '../../db/schema/knowledge.js'
import type { GapAnalyzer } from './gaps.analyzer.js'
import { createRunProgress } from './gaps.progress.js'
import type { GapsRepo } from './gaps.repo.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** One gap analyzer run (mode A, mode B or both) of a tenant; the run row says queued/running/done/failed. */
    'gaps.recalculate': { tenantId: string; runId: string; mode: GapRunMode }
  }
}

const MAX_ATTEMPTS = 3

export const gapsJobs = (deps: {
  analyzer: GapAnalyzer
  repo: Pick<GapsRepo, 'findRun' | 'startRun' | 'finishRun' | 'setRunProgress'>
  clock: Clock
  log: Pick<Logger, 'warn'>
}) => {
  const { analyzer, repo, clock, log } = deps
  return [
    defineJob({
      kind: 'gaps.recalculate',
      maxAttempts: MAX_ATTEMPTS,
      backoffSeconds: (attempt) => 30 * attempt,
      async handler({ tenantId, runId, mode }, ctx) {
        const run = await repo.findRun(tenantId, runId)
        // finished (or given up as stale) already: running it again would change nothing the operator asked for
        if (!run || run.status === 'done' || run.status === 'failed') return
        await repo.startRun(tenantId, runId, clock.now())
        try {
          const progress = createRunProgress((c) => repo.setRunProgress(tenantId, runId, c))
          const stats = await analyzer.run(tenantId, runId, mode, ctx.signal, progress)
          await progress.flush() // the last throttled count must not land after the final stats
          await repo.finishRun(tenantId, runId, { status: 'done', stats }, clock.now())
        } catch (err) {
          log.warn({ tenantId, runId, attempt: ctx.attempt, err: { message: (err as Error).message.slice(0, 200) } }, 'gap analyzer run failed')
          if (ctx.attempt >= MAX_ATTEMPTS) {
            await repo.finishRun(tenantId, runId, { status: 'failed', error: 'run failed' }, clock.now())
            return
          }
          throw err
        }
      },
    }),
  ]
}
