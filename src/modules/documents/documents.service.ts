/**
 * Documents: uploads (parse, deduplicate, capacity), listing, deletion, health, and the indexing every
 * document goes through (chunk -> replace chunks atomically -> ready -> health -> embeddings).
 *
 * Entry points for other modules and scripts:
 * - `indexText(tenantId, {filename, text, title?, sourceUrl?, fileType?}, {embed?, enforceCapacity?})`
 *   creates a document from text that is already markdown or plain text and indexes it synchronously
 *   (no queue, no parser worker), through the same chunking and SQL as uploads. For bulk indexing
 *   (the retrieval evaluation); returns the document row and its chunk count.
 * - `indexDocument(tenantId, documentId)` is what the `documents.index` job runs: idempotent, safe to
 *   run twice or concurrently (the document row is locked while its chunks are replaced).
 * - `embedPending(tenantId, {documentId?})` embeds chunks that have no vector of the current model.
 * - `assertCapacity(tenantId, adding, trx)` for anyone creating documents (the crawler's pages count).
 */
import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/client.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { DocumentFileType, HealthStatus } from '../../db/schema/ingestion.js'
import type { JobQueue } from '../../jobs/queue.js'
import type { Clock } from '../../lib/clock.js'
import { AppError, badRequest, conflict, notFound } from '../../lib/errors.js'
import { LlmUnavailableError, type EmbeddingRejectedError, type LlmClient } from '../llm/llm.js'
import { checkVectors } from '../llm/vectors.fns.js'
import { chunkDocument, documentLanguage, type Chunk, type ChunkOptions } from './chunking.fns.js'
import { regconfigForLocale } from './language.fns.js'
import type { DocumentRow, DocumentsRepo, EmbeddingStorage } from './documents.repo.js'
import { classifyEmbeddingFailure, documentEmbeddings, withEmbeddingsWarning, type DocumentEmbeddings } from './embedding-status.fns.js'
import { checkHealth } from './health.fns.js'
import { ParseFailure, UnsupportedFile } from './parsers/errors.js'
import type { ParserPool } from './parsers/pool.js'
import type { EventsPort } from '../shared/events.port.js'
import { documentEvent } from './documents.fns.js'

export interface DocumentsSettings {
  maxUploadBytes: number
  maxDocuments: number
  /** Unset: no bound (benches that index a large corpus into one tenant). */
  maxChunksPerDocument?: number
  maxChunksPerTenant?: number
  embeddingModel: string
  /** Sent to the provider only when set (or implied by a text-embedding-3 model). */
  embeddingDimensions?: number
  embeddingBatch: number
  chunk: Pick<ChunkOptions, 'targetTokens' | 'overlapTokens'>
}

/** Texts above this are chunked in a worker thread so the event loop stays responsive. */
const INLINE_CHUNK_CHARS = 200_000
/** Characters of one embedding input (chunks are a few hundred tokens; this only guards odd ones). */
const EMBED_INPUT_CHARS = 24_000
const EMBED_TIMEOUT_MS = 60_000

export const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex')

/** A file name as shown and stored: its last path segment, no control characters, at most 255 characters. */
export function cleanFilename(raw: string | undefined): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? ''
  const cleaned = base
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 255)
  return cleaned || 'upload'
}

/** A document as the API shows it; with its embedding state, the health carries the vectors' warning too. */
export function presentDocument(d: DocumentRow, embeddings: DocumentEmbeddings) {
  return {
    id: d.id,
    filename: d.filename,
    title: d.title,
    file_type: d.file_type,
    status: d.status,
    error_message: d.error_message,
    source_id: d.source_id,
    source_url: d.source_url,
    size_bytes: d.size_bytes,
    chunk_count: d.chunk_count,
    health_status: d.health_status && withEmbeddingsWarning(d.health_status, embeddings),
    created_at: d.created_at.toISOString(),
    updated_at: d.updated_at.toISOString(),
    embeddings,
    embedding_error: embeddings.status === 'failed' ? embeddings.message : null,
  }
}

/** What one embedding run did; `failed` names the reason it recorded. */
export type EmbedOutcome = {
  embedded: number
  status: 'done' | 'no_key' | 'failed' | 'partial'
  /** `failed`: whether the provider (any tenant) or this tenant (its key) is the cause. */
  scope?: 'provider' | 'tenant'
  /** A failure recorded earlier is over (this run's embedding call worked). */
  recovered?: boolean
}

export function createDocumentsService(deps: {
  db: Db
  clock: Clock
  log: FastifyBaseLogger
  repo: DocumentsRepo
  queue: JobQueue
  parser: ParserPool
  llm: LlmClient
  llmKey: (tenantId: string) => Promise<string | null>
  settings: DocumentsSettings
  events?: EventsPort
}) {
  const { db, clock, log, repo, queue, parser, llm, settings } = deps
  let storage: Promise<EmbeddingStorage> | null = null
  const embeddingStorage = () => (storage ??= repo.embeddingStorage())
  const dimensions = settings.embeddingDimensions ?? (/^text-embedding-3/.test(settings.embeddingModel) ? 1536 : undefined)

  async function get(tenantId: string, id: string): Promise<DocumentRow> {
    const d = await repo.find(tenantId, id)
    if (!d) throw notFound('Document not found')
    return d
  }

  function capacityError(): AppError {
    return badRequest(
      `Document limit reached: a workspace holds at most ${settings.maxDocuments} documents (uploaded files and web pages together). Delete some to add more.`,
      'document_limit',
    )
  }

  async function assertCapacity(tenantId: string, adding: number, trx: Db): Promise<void> {
    if ((await repo.countForTenant(tenantId, trx)) + adding > settings.maxDocuments) throw capacityError()
  }

  function duplicateError(existing: { id: string; filename: string }): AppError {
    return conflict(`This file was already uploaded as document ${existing.id} ("${existing.filename}")`, 'duplicate_document')
  }

  /** Creates the row and its index job in one transaction: either both exist or neither. */
  async function createDocument(
    tenantId: string,
    v: { filename: string; fileType: DocumentFileType; title: string | null; sizeBytes: number; contentHash: string; text: string; sourceUrl?: string | null },
    opts: { enqueue: boolean; enforceCapacity: boolean },
  ): Promise<DocumentRow> {
    try {
      return await db.transaction().execute(async (trx) => {
        await repo.lockTenant(tenantId, trx)
        if (opts.enforceCapacity) await assertCapacity(tenantId, 1, trx)
        const dup = await repo.findUploadByHash(tenantId, v.contentHash, trx)
        if (dup) throw duplicateError(dup)
        const doc = await repo.insert(
          tenantId,
          {
            filename: v.filename,
            file_type: v.fileType,
            title: v.title,
            size_bytes: v.sizeBytes,
            content_hash: v.contentHash,
            parsed_text: v.text,
            source_url: v.sourceUrl ?? null,
            now: clock.now(),
          },
          trx,
        )
        if (opts.enqueue) await enqueueIndex(queue, tenantId, doc.id, trx)
        return doc
      })
    } catch (err) {
      if (isUniqueViolation(err)) {
        const existing = await repo.findUploadByHash(tenantId, v.contentHash)
        if (existing) throw duplicateError(existing)
      }
      throw err
    }
  }

  /** Chunks and health check; large texts in a worker thread so the event loop stays responsive. */
  async function chunksFor(
    doc: { parsed_text: string; file_type: DocumentFileType; source_url: string | null; locale?: string | null },
    now: Date,
  ): Promise<{ chunks: Chunk[]; health: HealthStatus }> {
    const input = { text: doc.parsed_text, fileType: doc.file_type, sourceUrl: doc.source_url }
    // a connector's article says its language (its locale); anything else is read from the text
    const lang = regconfigForLocale(doc.locale) ?? documentLanguage(doc.parsed_text)
    const options: ChunkOptions = { ...settings.chunk, lang, maxChunks: settings.maxChunksPerDocument }
    if (doc.parsed_text.length > INLINE_CHUNK_CHARS) return parser.chunk(input, options, now)
    return { chunks: chunkDocument(input, options), health: checkHealth(doc.parsed_text, now) }
  }

  /**
   * Amplification bounds: a small file (an OpenAPI YAML with 50,000 paths) must not become 50,000 chunks,
   * nor a tenant hold more than its share. The tenant total is checked as each document is indexed, so
   * concurrent indexing can pass it by at most the documents in flight.
   */
  async function chunkCapProblem(tenantId: string, documentId: string, count: number, trx: Db): Promise<string | null> {
    if (settings.maxChunksPerDocument !== undefined && count > settings.maxChunksPerDocument) {
      return `The document makes more than ${settings.maxChunksPerDocument} chunks, the limit per document (MAX_CHUNKS_PER_DOCUMENT); split it into smaller files`
    }
    if (settings.maxChunksPerTenant === undefined) return null
    const others = await repo.chunkTotalExcept(tenantId, documentId, trx)
    if (others + count > settings.maxChunksPerTenant) {
      return `The workspace would hold more than ${settings.maxChunksPerTenant} chunks, its limit (MAX_CHUNKS_PER_TENANT; ${others} held, this document makes ${count}); delete documents to make room`
    }
    return null
  }

  /**
   * Chunks the stored text and swaps the chunks in one transaction with status 'ready', the chunk count
   * and the health check. If the text changed while chunking (a crawler refresh), it starts over.
   */
  async function indexDocument(tenantId: string, documentId: string): Promise<'ready' | 'gone'> {
    for (let round = 0; round < 3; round++) {
      const doc = await repo.findWithText(tenantId, documentId)
      if (!doc) return 'gone'
      const now = clock.now()
      const { chunks, health } = await chunksFor(doc, now)
      const outcome = await db.transaction().execute(async (trx) => {
        const locked = await repo.lockForIndex(tenantId, documentId, trx)
        if (!locked) return 'gone' as const
        if (locked.updated_at.getTime() !== doc.updated_at.getTime() || locked.content_hash !== doc.content_hash) return 'changed' as const
        const refusal = await chunkCapProblem(tenantId, documentId, chunks.length, trx)
        if (refusal) {
          await repo.refuseIndex(tenantId, documentId, refusal, now, trx)
          await deps.events?.emit(tenantId, documentEvent('document.failed', doc, { error: refusal }), trx)
          return 'ready' as const
        }
        await repo.replaceChunks(tenantId, documentId, chunks, { title: doc.title ?? doc.filename, now }, trx)
        await repo.finishIndex(
          tenantId,
          documentId,
          { chunk_count: chunks.length, lang: chunks[0]?.lang ?? documentLanguage(doc.parsed_text), health, now },
          trx,
        )
        await deps.events?.emit(tenantId, documentEvent('document.ready', doc, { chunk_count: chunks.length }), trx)
        return 'ready' as const
      })
      if (outcome !== 'changed') return outcome
    }
    throw new Error('document kept changing while it was indexed')
  }

  async function noteFailure(tenantId: string, f: NonNullable<ReturnType<typeof classifyEmbeddingFailure>>): Promise<Partial<EmbedOutcome>> {
    await repo.recordEmbeddingFailure(tenantId, { ...f, model: settings.embeddingModel, now: clock.now() })
    return { scope: f.scope }
  }

  /**
   * Embeds the tenant's chunks that lack a vector of the configured model, batch by batch. Provider
   * trouble stops the run quietly (the chunks stay searchable lexically) and records why, for the
   * documents to show and the backfill or the provider probe to retry; a batch that works clears it.
   */
  async function embedPending(
    tenantId: string,
    opts: { documentId?: string; signal?: AbortSignal; maxBatches?: number; batch?: number; timeoutMs?: number } = {},
  ): Promise<EmbedOutcome> {
    const apiKey = await deps.llmKey(tenantId)
    if (!apiKey) {
      if ((await repo.pendingEmbeddings(tenantId, settings.embeddingModel, 1, opts.documentId)).length === 0) return { embedded: 0, status: 'no_key' }
      await noteFailure(tenantId, { reason: 'no_key', scope: 'tenant' })
      return { embedded: 0, status: 'no_key' }
    }
    const store = await embeddingStorage()
    const batch = opts.batch ?? settings.embeddingBatch
    let embedded = 0
    let recovered = false
    const out = (status: EmbedOutcome['status'], extra: Partial<EmbedOutcome> = {}): EmbedOutcome => ({
      embedded,
      status,
      ...extra,
      ...(recovered ? { recovered } : {}),
    })
    const maxBatches = opts.maxBatches ?? Infinity
    for (let b = 0; b < maxBatches; b++) {
      if (opts.signal?.aborted) return out('partial')
      const rows = await repo.pendingEmbeddings(tenantId, settings.embeddingModel, batch, opts.documentId)
      if (rows.length === 0) {
        // nothing of the tenant is missing: a failure on record no longer describes any document
        if (b === 0 && !opts.documentId) await repo.clearEmbeddingFailure(tenantId)
        return out('done')
      }
      const input = rows.map((r) => {
        const context = [r.title ?? r.filename, r.heading_path].filter(Boolean).join(' — ')
        return `${context}\n\n${r.content}`.slice(0, EMBED_INPUT_CHARS)
      })
      let vectors: number[][]
      try {
        const res = await llm.embed({
          apiKey,
          model: settings.embeddingModel,
          input,
          dimensions,
          timeoutMs: opts.timeoutMs ?? EMBED_TIMEOUT_MS,
          signal: opts.signal,
        })
        vectors = res.vectors
      } catch (err) {
        if (!(err instanceof LlmUnavailableError)) throw err
        const f = classifyEmbeddingFailure({ kind: err.kind, status: err.status, problem: (err as Partial<EmbeddingRejectedError>).problem })
        if (!f) return out('partial')
        log.warn({ tenantId, reason: f.reason, err: { kind: err.kind, status: err.status } }, 'embedding failed; chunks stay lexical until the backfill')
        return out('failed', await noteFailure(tenantId, f))
      }
      // the index's width: what the tenant's stored vectors of this model have, once there are any
      const check = checkVectors(vectors, { count: rows.length, width: await repo.storedWidth(tenantId, settings.embeddingModel) })
      if (!check.ok) {
        const reason = check.problem === 'count' ? 'malformed' : check.problem
        log.warn({ tenantId, reason, detail: check.detail }, 'embedding provider returned unusable vectors; chunks stay lexical')
        return out('failed', await noteFailure(tenantId, { reason, scope: 'provider' }))
      }
      await repo.writeEmbeddings(
        tenantId,
        rows.map((r, i) => ({ id: r.id, vector: vectors[i]! })),
        settings.embeddingModel,
        store,
      )
      // the provider answers for this tenant: whatever stopped it before is over
      if (b === 0) recovered = await repo.clearEmbeddingFailure(tenantId)
      embedded += rows.length
      if (rows.length < batch) return out('done')
    }
    return out('partial')
  }

  /** Each document's embedding state for the model in use: one grouped count and the tenant's last failure. */
  async function embeddingsOf(tenantId: string, docs: DocumentRow[], documentId?: string): Promise<Map<string, DocumentEmbeddings>> {
    const out = new Map<string, DocumentEmbeddings>()
    if (docs.length === 0) return out
    const model = settings.embeddingModel
    const [missing, failure] = await Promise.all([repo.missingVectors(tenantId, model, documentId), repo.embeddingFailure(tenantId)])
    for (const d of docs) out.set(d.id, documentEmbeddings(d, missing.get(d.id) ?? 0, failure ?? null, model))
    return out
  }

  /** Documents as the API shows them, each with its embedding state. */
  async function present(tenantId: string, docs: DocumentRow[]) {
    const e = await embeddingsOf(tenantId, docs, docs.length === 1 ? docs[0]!.id : undefined)
    return docs.map((d) => presentDocument(d, e.get(d.id)!))
  }

  return {
    get,
    assertCapacity,
    indexDocument,
    embedPending,
    embeddingsOf,
    present,

    list: (tenantId: string) => repo.list(tenantId),

    async detail(tenantId: string, id: string) {
      const d = await repo.findWithText(tenantId, id)
      if (!d) throw notFound('Document not found')
      return d
    },

    /** Indexing progress of one document (see IndexingProgress in the schemas). */
    async progress(tenantId: string, d: { id: string; status: string; chunk_count: number }) {
      if (d.status === 'processing') return { stage: 'parsing' as const, done: 0, total: 0 }
      if (d.status !== 'ready') return { stage: 'error' as const, done: 0, total: d.chunk_count }
      const embedded = Math.min(await repo.embeddedChunks(tenantId, d.id), d.chunk_count)
      return { stage: embedded < d.chunk_count ? ('embedding' as const) : ('done' as const), done: embedded, total: d.chunk_count }
    },

    async upload(tenantId: string, file: { filename: string | undefined; bytes: Buffer }): Promise<DocumentRow> {
      const filename = cleanFilename(file.filename)
      const contentHash = sha256(file.bytes)
      // cheap refusals before spending CPU on parsing; both are checked again under the tenant lock
      const dup = await repo.findUploadByHash(tenantId, contentHash)
      if (dup) throw duplicateError(dup)
      if ((await repo.countForTenant(tenantId)) >= settings.maxDocuments) throw capacityError()
      let parsed
      try {
        parsed = await parser.parse(filename, file.bytes)
      } catch (err) {
        if (err instanceof UnsupportedFile) throw badRequest(err.message, 'unsupported_file_type')
        if (err instanceof ParseFailure) {
          if ((err as { detail?: string }).detail) log.warn({ filename, detail: (err as { detail?: string }).detail }, 'parser crashed on an upload')
          throw new AppError(422, 'parse_error', err.message)
        }
        throw err
      }
      return createDocument(
        tenantId,
        {
          filename,
          fileType: parsed.fileType,
          title: parsed.title,
          sizeBytes: file.bytes.length,
          contentHash,
          text: parsed.text,
          sourceUrl: parsed.url ?? null,
        },
        { enqueue: true, enforceCapacity: true },
      )
    },

    async remove(tenantId: string, id: string): Promise<void> {
      if (!(await repo.delete(tenantId, id))) throw notFound('Document not found')
    },

    /** The stored check, with the vectors' warning while they failed (see embedding-status.fns.ts). */
    async health(tenantId: string, id: string): Promise<HealthStatus> {
      const d = await get(tenantId, id)
      if (!d.health_status) throw notFound('No health check has run for this document yet')
      return withEmbeddingsWarning(d.health_status, (await embeddingsOf(tenantId, [d], d.id)).get(d.id)!)
    },

    async runHealth(tenantId: string, id: string): Promise<HealthStatus> {
      const d = await repo.findWithText(tenantId, id)
      if (!d) throw notFound('Document not found')
      const health = checkHealth(d.parsed_text, clock.now())
      const row = await repo.setHealth(tenantId, id, health)
      if (!row) throw notFound('Document not found')
      return withEmbeddingsWarning(health, (await embeddingsOf(tenantId, [row], row.id)).get(row.id)!)
    },

    /** See the file comment. The text is used as given (markdown or plain text). */
    async indexText(
      tenantId: string,
      input: { filename: string; text: string; title?: string | null; sourceUrl?: string | null; fileType?: Exclude<DocumentFileType, 'url'> },
      opts: { embed?: boolean; enforceCapacity?: boolean } = {},
    ): Promise<{ document: DocumentRow; chunkCount: number }> {
      const doc = await createDocument(
        tenantId,
        {
          filename: cleanFilename(input.filename),
          fileType: input.fileType ?? 'plaintext',
          title: input.title ?? null,
          sizeBytes: Buffer.byteLength(input.text),
          contentHash: sha256(input.text),
          text: input.text,
          sourceUrl: input.sourceUrl ?? null,
        },
        { enqueue: false, enforceCapacity: opts.enforceCapacity ?? true },
      )
      await indexDocument(tenantId, doc.id)
      if (opts.embed ?? true) await embedPending(tenantId, { documentId: doc.id })
      const fresh = (await repo.find(tenantId, doc.id))!
      return { document: fresh, chunkCount: fresh.chunk_count }
    },
  }
}

export type DocumentsService = ReturnType<typeof createDocumentsService>

/** Asks for (re)indexing of a document; inside the caller's transaction when given. */
export function enqueueIndex(queue: JobQueue, tenantId: string, documentId: string, trx?: Db) {
  return queue.enqueue('documents.index', { tenantId, documentId }, { dedupeKey: `documents.index:${documentId}`, tenantId }, trx)
}
