import type { AuditPort } from '../shared/audit.port.js'
import type { FastifyPluginAsync } from 'fastify'
import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { EventsPort } from '../shared/events.port.js'
import { documentsJobs } from './documents.jobs.js'
import { createDocumentsRepo } from './documents.repo.js'
import { documentsRoutes } from './documents.routes.js'
import { createDocumentsService } from './documents.service.js'
import { DEFAULT_PARSE_LIMITS } from './parsers/limits.js'
import { createParserPool } from './parsers/pool.js'

/** The documents module: parser worker pool, repository, service, routes (which close the pool with the app), jobs. */
export function wireDocuments(
  ctx: AppContext,
  guards: Guards,
  deps: {
    llmKey: (tenantId: string) => Promise<string | null>
    onDocumentIndexed?: (tenantId: string, documentId: string) => Promise<void>
    /** vectors were stored for the tenant (embedding, re-embedding): retrieval's vector index follows its size */
    onEmbedded?: (tenantId: string) => Promise<void>
    /** a document deleted through the API (automatic evaluations follow the knowledge) */
    onDocumentRemoved?: (tenantId: string) => Promise<void>
    audit: AuditPort
    events?: EventsPort
  },
) {
  const { db, clock, queue, config, llm } = ctx
  const repo = createDocumentsRepo(db)
  const parser = createParserPool({
    size: config.PARSER_WORKERS,
    timeoutMs: config.PARSER_TIMEOUT_SECONDS * 1000,
    maxMemoryMb: config.PARSER_MAX_MEMORY_MB,
    limits: DEFAULT_PARSE_LIMITS,
  })
  const documents = createDocumentsService({
    db,
    clock,
    log: ctx.log,
    repo,
    queue,
    parser,
    llm,
    llmKey: deps.llmKey,
    events: deps.events,
    settings: {
      maxUploadBytes: config.MAX_UPLOAD_BYTES,
      maxDocuments: config.MAX_DOCUMENTS_PER_TENANT,
      maxChunksPerDocument: config.MAX_CHUNKS_PER_DOCUMENT,
      maxChunksPerTenant: config.MAX_CHUNKS_PER_TENANT,
      embeddingModel: config.EMBEDDING_MODEL,
      embeddingDimensions: config.EMBEDDING_DIMENSIONS,
      embeddingBatch: config.EMBEDDING_BATCH,
      chunk: { targetTokens: config.CHUNK_TARGET_TOKENS, overlapTokens: config.CHUNK_OVERLAP_TOKENS },
    },
  })
  const routes = documentsRoutes({
    guards,
    documents: {
      ...documents,
      async remove(tenantId: string, id: string) {
        await documents.remove(tenantId, id)
        await deps.onDocumentRemoved?.(tenantId)
      },
    },
    audit: deps.audit,
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
    uploadRatePerHour: config.UPLOAD_RATE_PER_HOUR,
  })
  const withShutdown: FastifyPluginAsync = async (app, opts) => {
    app.addHook('onClose', async () => parser.close())
    await routes(app as never, opts as never)
  }
  return {
    documents,
    repo,
    parser,
    routes: withShutdown,
    jobs: documentsJobs({
      documents,
      repo,
      db,
      events: deps.events,
      queue,
      clock,
      log: ctx.log,
      embeddingModel: config.EMBEDDING_MODEL,
      backfillEverySeconds: config.EMBED_BACKFILL_INTERVAL_SECONDS,
      onEmbedded: deps.onEmbedded,
      // Ingestion throughput for the metrics, then whoever else wants to know (the knowledge profile).
      onIndexed: async (tenantId, documentId) => {
        const doc = await repo.find(tenantId, documentId)
        if (doc) ctx.metrics.documentIndexed(Number(doc.size_bytes ?? 0), Number(doc.chunk_count ?? 0))
        await deps.onDocumentIndexed?.(tenantId, documentId)
      },
    }),
  }
}
