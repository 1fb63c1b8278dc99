import type { AppContext } from './context.js'
import { Worker } from './jobs/worker.js'
import type { Modules } from './modules/index.js'

export function createWorker(ctx: AppContext, modules: Modules): Worker {
  return new Worker(ctx.db, ctx.queue, ctx.clock, ctx.log, modules.jobs, {
    concurrency: ctx.config.WORKER_CONCURRENCY,
    pollMs: ctx.config.WORKER_POLL_MS,
    leaseSeconds: ctx.config.JOB_LEASE_SECONDS,
    // One process owns an embedded database, so a job still 'running' at start was left by a crash of this process.
    soleOwner: ctx.database.kind === 'pglite',
    // On PostgreSQL a worker that dies hard gives its jobs back within a second or so, not after the lease.
    // It keeps one pooled connection for the worker's life, so not on a pool of fewer than 3.
    liveness: ctx.database.kind === 'postgres' && ctx.config.DATABASE_POOL_SIZE >= 3,
    onOutcome: (kind, outcome, ms) => ctx.metrics.observeJob(kind, outcome, ms),
  })
}
