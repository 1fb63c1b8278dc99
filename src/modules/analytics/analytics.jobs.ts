import type { Logger } from 'pino'
import type { Db } from '../../db/client.js'
import type { JobQueue } from '../../jobs/queue.js'
import { defineJob } from '../../jobs/types.js'
import type { Clock } from '../../lib/clock.js'
import { conversationFacts } from './analytics.fns.js'
import type { ExportRunner } from './exports.runner.js'
import type { RollupRepo } from './rollup.repo.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** Recurring: recompute the facts and rollups of the conversations changed since the last run. */
    'analytics.refresh': Record<string, never>
    /** One export run (the export row says queued / running / done / failed). */
    'analytics.export': { tenantId: string; exportId: string }
    /** Recurring: delete export files past their link's expiry. */
    'analytics.export_sweep': Record<string, never>
  }
}

export const REFRESH_EVERY_S = 60
/** Changes are scanned again this far back, so a transaction that committed late with an earlier time is not missed. */
const OVERLAP_MS = 5 * 60 * 1000
const SCAN_BATCH = 2000
const WRITE_BATCH = 250

/**
 * Keeps `analytics_conversations` and `analytics_rollup` current. A run scans the sessions and tickets
 * changed since the watermark (the chat and escalation writes already stamp them) and the conversations
 * marked dirty by feedback, recomputes each one's facts from its own messages and tickets, and rebuilds
 * the rollup slots they fall in. Recomputing from the source makes it safe to run twice.
 */
export function createRefresher(deps: { repo: RollupRepo; clock: Clock; log: Pick<Logger, 'info'> }) {
  const { repo, clock } = deps

  async function refreshPairs(pairs: { tenant_id: string; session_id: string }[]): Promise<number> {
    const byTenant = new Map<string, Set<string>>()
    for (const p of pairs) {
      let set = byTenant.get(p.tenant_id)
      if (!set) byTenant.set(p.tenant_id, (set = new Set()))
      set.add(p.session_id)
    }
    let n = 0
    for (const [tenantId, ids] of byTenant) {
      const list = [...ids]
      for (let i = 0; i < list.length; i += WRITE_BATCH) {
        const records = await repo.records(tenantId, list.slice(i, i + WRITE_BATCH))
        const now = clock.now()
        await repo.writeFacts(
          tenantId,
          records.map((record) => ({ record, facts: conversationFacts(record.startedAt, record.messages, record.tickets) })),
          now,
        )
        n += records.length
      }
    }
    return n
  }

  return {
    /** One refresh pass over everything changed; returns how many conversations it recomputed. */
    async run(signal?: AbortSignal): Promise<number> {
      const started = clock.now()
      let since = (await repo.watermark()) ?? new Date(0)
      let n = 0
      for (;;) {
        const batch = await repo.changedSince(since, SCAN_BATCH)
        n += await refreshPairs(batch)
        if (batch.length < SCAN_BATCH) break
        since = batch[batch.length - 1]!.at
        if (signal?.aborted) {
          await repo.setWatermark(since)
          return n
        }
      }
      for (;;) {
        const marked = await repo.dirty(SCAN_BATCH)
        n += await refreshPairs(marked)
        const byTenant = new Map<string, string[]>()
        for (const m of marked) byTenant.set(m.tenant_id, [...(byTenant.get(m.tenant_id) ?? []), m.session_id])
        for (const [tenantId, ids] of byTenant) await repo.clearDirty(tenantId, ids, started)
        if (marked.length < SCAN_BATCH || signal?.aborted) break
      }
      await repo.setWatermark(new Date(started.getTime() - OVERLAP_MS))
      if (n > 0) deps.log.info({ conversations: n }, 'analytics refreshed')
      return n
    },
  }
}
export type Refresher = ReturnType<typeof createRefresher>

/**
 * What other modules call when a conversation changed in a way no timestamp records (feedback): mark it and
 * bring the next refresh forward, in the caller's transaction.
 */
export function conversationMarker(deps: { repo: Pick<RollupRepo, 'markDirty'>; queue: JobQueue; clock: Clock }) {
  return async (tenantId: string, sessionId: string, trx: Db): Promise<void> => {
    const now = deps.clock.now()
    await deps.repo.markDirty(tenantId, sessionId, now, trx)
    await deps.queue.enqueue('analytics.refresh', {}, { dedupeKey: 'recurring:analytics.refresh', runAt: new Date(now.getTime() + 2000), advance: true }, trx)
  }
}

export const analyticsJobs = (deps: { refresher: Refresher; exports: ExportRunner; sweepEverySeconds: number }) => [
  defineJob({
    kind: 'analytics.refresh',
    everySeconds: REFRESH_EVERY_S,
    async handler(_payload, ctx) {
      await deps.refresher.run(ctx.signal)
    },
  }),
  defineJob({
    kind: 'analytics.export',
    maxAttempts: 3,
    backoffSeconds: (attempt) => 10 * attempt,
    async handler({ tenantId, exportId }, ctx) {
      await deps.exports.run(tenantId, exportId, ctx.attempt >= 3, ctx.signal)
    },
  }),
  defineJob({
    kind: 'analytics.export_sweep',
    everySeconds: deps.sweepEverySeconds,
    async handler() {
      await deps.exports.sweep()
    },
  }),
]
