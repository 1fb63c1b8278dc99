import type { FastifyBaseLogger } from 'fastify'
import type { JobQueue } from '../../jobs/queue.js'
import { defineJob } from '../../jobs/types.js'
import type { Clock } from '../../lib/clock.js'
import { addSeconds } from '../../lib/clock.js'
import type { DocumentsRepo } from './documents.repo.js'
import type { DocumentsService } from './documents.service.js'

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
  }
}

const INDEX_MAX_ATTEMPTS = 5
/** After an embedding failure, try again this much later (the recurring sweep is the safety net). */
const EMBED_RETRY_SECONDS = 300

export const enqueueEmbedBackfill = (queue: JobQueue, tenantId: string, runAt?: Date) =>
  queue.enqueue('documents.embed_backfill', { tenantId }, { dedupeKey: `documents.embed_backfill:${tenantId}`, tenantId, runAt })

export const documentsJobs = (deps: {
  documents: DocumentsService
  repo: Pick<DocumentsRepo, 'markStatus' | 'find' | 'tenantsNeedingEmbeddings'>
  queue: JobQueue
  clock: Clock
  log: FastifyBaseLogger
  embeddingModel: string
  backfillEverySeconds: number
  /** Called once a document is indexed (the knowledge module schedules its profile and FAQ extraction). */
  onIndexed?: (tenantId: string, documentId: string) => Promise<void>
}) => {
  const { documents, repo, queue, clock, log } = deps
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
              await repo.markStatus(tenantId, documentId, {
                status: 'error',
                error_message: 'Indexing failed; delete the document and upload it again',
                now: clock.now(),
              })
            }
            throw err
          }
          const r = await documents.embedPending(tenantId, { documentId, signal: ctx.signal })
          if (r.status === 'failed' || r.status === 'partial') await enqueueEmbedBackfill(queue, tenantId, addSeconds(clock.now(), EMBED_RETRY_SECONDS))
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
        // retried with backoff; after the last attempt the recurring sweep picks the tenant up again
        if (r.status === 'failed') throw new Error('embedding provider unavailable')
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
      },
    }),
  ]
}
