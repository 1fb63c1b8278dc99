import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/client.js'
import type { JobQueue } from '../../jobs/queue.js'
import { defineJob } from '../../jobs/types.js'
import type { Clock } from '../../lib/clock.js'
import { addSeconds } from '../../lib/clock.js'
import type { EventsPort } from '../shared/events.port.js'
import { documentEvent } from './documents.fns.js'
import type { DocumentsRepo } from './documents.repo.js'
import type { DocumentsService, EmbedOutcome } from './documents.service.js'
import { probeDelaySeconds } from './embedding-status.fns.js'

export interface IndexJob {
  tenantId: string
  documentId: string
}

export interface EmbedBackfillJob {
  tenantId: string
}

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** Chunk + index one document (uploads and crawled pages), then embed it when the tenant has a key. */
    'documents.index': IndexJob
    /** Embed every chunk of a tenant still without a vector (a key arrived, the provider was down...). */
    'documents.embed_backfill': EmbedBackfillJob
    /** Recurring: finds tenants with a key and chunks without vectors, enqueues their backfill. */
    'documents.embed_sweep': Record<string, never>
    /**
     * While embeddings fail for a provider reason: one small embedding call (one chunk of one stopped
     * tenant) with backoff; when it works, every stopped tenant's backfill is moved to now.
     */
    'documents.embed_probe': Record<string, never>
  }
}

const INDEX_MAX_ATTEMPTS = 5
/** After a failure of the tenant's own (a refused key), try again this much later; a new key retries at once. */
const EMBED_RETRY_SECONDS = 300
/** The probe keeps trying for about an hour (every 30 s at most); then the recurring sweep starts it again. */
const PROBE_MAX_ATTEMPTS = 120
const PROBE_TIMEOUT_MS = 10_000
/** Stopped tenants whose backfill one successful probe moves to now; the rest follow on the next probe. */
const PROBE_WAKE_TENANTS = 200

/** Enqueues the tenant's backfill; `soon` moves an already queued one forward instead of waiting for it. */
export const enqueueEmbedBackfill = (queue: JobQueue, tenantId: string, runAt?: Date, soon = false) =>
  queue.enqueue('documents.embed_backfill', { tenantId }, { dedupeKey: `documents.embed_backfill:${tenantId}`, tenantId, runAt, advance: soon, maxAttempts: 3 })

export const enqueueEmbedProbe = (queue: JobQueue, runAt?: Date) =>
  queue.enqueue('documents.embed_probe', {}, { dedupeKey: 'documents.embed_probe', runAt, advance: true, maxAttempts: PROBE_MAX_ATTEMPTS })

export const documentsJobs = (deps: {
  documents: DocumentsService
  repo: Pick<DocumentsRepo, 'markStatus' | 'find' | 'tenantsNeedingEmbeddings' | 'tenantsStoppedByProvider'>
  queue: JobQueue
  clock: Clock
  log: FastifyBaseLogger
  embeddingModel: string
  backfillEverySeconds: number
  /** Called once a document is indexed (the knowledge module schedules its profile and FAQ extraction). */
  onIndexed?: (tenantId: string, documentId: string) => Promise<void>
  /** Called after a run that stored vectors (retrieval asks for its vector index once the workspace is past its size). */
  onEmbedded?: (tenantId: string) => Promise<void>
  db: Db
  events?: EventsPort
}) => {
  const { documents, repo, queue, clock, log, db } = deps

  /**
   * What follows an embedding run: a provider failure hands over to the probe (one call with backoff for
   * all tenants, instead of every tenant's backfill hammering a dead provider); a failure of the tenant's
   * own waits minutes (or a new key); a recorded failure that is over wakes the tenant's other documents
   * and, the provider answering again, everyone the provider had stopped.
   */
  async function followUp(tenantId: string, r: EmbedOutcome, opts: { inBackfill: boolean }): Promise<void> {
    if (r.status === 'failed' && r.scope === 'provider') await enqueueEmbedProbe(queue, addSeconds(clock.now(), probeDelaySeconds(1)))
    else if (r.status === 'failed' && !opts.inBackfill) await enqueueEmbedBackfill(queue, tenantId, addSeconds(clock.now(), EMBED_RETRY_SECONDS))
    else if (r.status === 'partial' && !opts.inBackfill) await enqueueEmbedBackfill(queue, tenantId, addSeconds(clock.now(), EMBED_RETRY_SECONDS))
    if (r.recovered && !opts.inBackfill) await enqueueEmbedBackfill(queue, tenantId, undefined, true)
    if (r.embedded > 0) await deps.onEmbedded?.(tenantId)
    // a call that worked proves the provider answers: the probe runs now for whoever it stopped
    if ((r.recovered || r.embedded > 0) && (await repo.tenantsStoppedByProvider(deps.embeddingModel, 1)).length) await enqueueEmbedProbe(queue)
  }

  return [
    defineJob({
      kind: 'documents.index',
      maxAttempts: INDEX_MAX_ATTEMPTS,
      async handler({ tenantId, documentId }, ctx) {
        // A refresh of the text while this job embeds is enqueued under the same dedupe key and dropped,
        // so the job looks again at the end: a document back in 'processing' is indexed again here.
        for (let round = 0; round < 3; round++) {
          try {
            if ((await documents.indexDocument(tenantId, documentId)) === 'gone') return
          } catch (err) {
            if (ctx.attempt >= INDEX_MAX_ATTEMPTS) {
              // the last attempt: the status must not stay 'processing' forever
              const error = 'Indexing failed; delete the document and upload it again'
              const doc = await repo.find(tenantId, documentId)
              await db.transaction().execute(async (trx) => {
                await repo.markStatus(tenantId, documentId, { status: 'error', error_message: error, now: clock.now() }, trx)
                if (doc) await deps.events?.emit(tenantId, documentEvent('document.failed', doc, { error }), trx)
              })
            }
            throw err
          }
          await followUp(tenantId, await documents.embedPending(tenantId, { documentId, signal: ctx.signal }), { inBackfill: false })
          const after = await repo.find(tenantId, documentId)
          if (!after || after.status !== 'processing') {
            if (after?.status === 'ready') await deps.onIndexed?.(tenantId, documentId)
            return
          }
        }
      },
    }),
    defineJob({
      kind: 'documents.embed_backfill',
      maxAttempts: 3,
      backoffSeconds: (attempt) => EMBED_RETRY_SECONDS * 2 ** (attempt - 1),
      async handler({ tenantId }, ctx) {
        const r = await documents.embedPending(tenantId, { signal: ctx.signal })
        if (r.embedded) log.info({ tenantId, embedded: r.embedded, status: r.status }, 'embedding backfill')
        await followUp(tenantId, r, { inBackfill: true })
        // a refused key: retried with backoff, then the recurring sweep (a new key retries at once)
        if (r.status === 'failed' && r.scope === 'tenant') throw new Error('embedding refused for this tenant')
      },
    }),
    defineJob({
      kind: 'documents.embed_probe',
      maxAttempts: PROBE_MAX_ATTEMPTS,
      backoffSeconds: probeDelaySeconds,
      async handler(_payload, ctx) {
        const stopped = await repo.tenantsStoppedByProvider(deps.embeddingModel, PROBE_WAKE_TENANTS)
        // the oldest few: one whose key is now the problem must not keep the others waiting
        for (const tenantId of stopped.slice(0, 3)) {
          const r = await documents.embedPending(tenantId, { signal: ctx.signal, maxBatches: 1, batch: 1, timeoutMs: PROBE_TIMEOUT_MS })
          if (r.status === 'failed' && r.scope === 'provider') throw new Error('embedding provider still failing')
          if (r.embedded > 0 || r.status === 'done') {
            log.info({ tenants: stopped.length }, 'embedding provider answers again; backfilling')
            for (const t of stopped) await enqueueEmbedBackfill(queue, t, undefined, true)
            return
          }
        }
      },
    }),
    defineJob({
      kind: 'documents.embed_sweep',
      everySeconds: deps.backfillEverySeconds,
      maxAttempts: 1,
      async handler() {
        for (const tenantId of await repo.tenantsNeedingEmbeddings(deps.embeddingModel, 500)) {
          await enqueueEmbedBackfill(queue, tenantId)
        }
        // the probe gave up after an hour: start it again while the provider keeps tenants waiting
        if ((await repo.tenantsStoppedByProvider(deps.embeddingModel, 1)).length) await enqueueEmbedProbe(queue)
      },
    }),
  ]
}
