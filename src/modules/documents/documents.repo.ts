import { sql, type Selectable } from 'kysely'
import type { Db } from '../../db/client.js'
import type { DocumentFileType, DocumentsTable, EmbeddingFailureReason, EmbeddingFailureScope, HealthStatus } from '../../db/schema/ingestion.js'
import type { Chunk } from './chunking.fns.js'
import type { EmbeddingFailure } from './embedding-status.fns.js'

type Executor = Db

export type DocumentRow = Omit<Selectable<DocumentsTable>, 'parsed_text' | 'locale'>
export type DocumentWithText = Selectable<DocumentsTable>

/** pgvector `vector` or a plain `real[]`, as the migration decided from the server's extensions. */
export type EmbeddingStorage = 'vector' | 'array'

/** Every column but the (possibly megabytes long) parsed text. */
export const LIST_COLUMNS = [
  'id',
  'tenant_id',
  'filename',
  'file_type',
  'status',
  'error_message',
  'source_id',
  'source_url',
  'title',
  'size_bytes',
  'content_hash',
  'chunk_count',
  'health_status',
  'lang',
  'indexed_at',
  'created_at',
  'updated_at',
] as const

/**
 * Chunk rows per INSERT: one JSON parameter each. Large statements are markedly faster (statement-level
 * triggers aggregate per statement), bounded so one stays under a couple of MB.
 */
const INSERT_BATCH_ROWS = 1000
const INSERT_BATCH_CHARS = 1_500_000

export function createDocumentsRepo(db: Db) {
  return {
    list(tenantId: string, trx: Executor = db): Promise<DocumentRow[]> {
      return trx.selectFrom('documents').select(LIST_COLUMNS).where('tenant_id', '=', tenantId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
    },

    find(tenantId: string, id: string, trx: Executor = db): Promise<DocumentRow | undefined> {
      return trx.selectFrom('documents').select(LIST_COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    },

    /** Chunks of a document that have their vector (the embedding part of indexing progress). */
    async embeddedChunks(tenantId: string, documentId: string, trx: Executor = db): Promise<number> {
      const r = await trx
        .selectFrom('chunks')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('tenant_id', '=', tenantId)
        .where('document_id', '=', documentId)
        .where('embedding', 'is not', null)
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },

    findWithText(tenantId: string, id: string, trx: Executor = db): Promise<DocumentWithText | undefined> {
      return trx.selectFrom('documents').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    },

    /** The document being indexed, locked until the transaction ends (a concurrent rerun waits). */
    lockForIndex(tenantId: string, id: string, trx: Executor) {
      return trx
        .selectFrom('documents')
        .select(['id', 'updated_at', 'content_hash', 'status'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst()
    },

    /** An uploaded file (not a crawled page) with these exact bytes. */
    findUploadByHash(tenantId: string, contentHash: string, trx: Executor = db) {
      return trx
        .selectFrom('documents')
        .select(['id', 'filename'])
        .where('tenant_id', '=', tenantId)
        .where('content_hash', '=', contentHash)
        .where('source_id', 'is', null)
        .executeTakeFirst()
    },

    /** Files and crawled pages together: what the tenant's capacity counts. */
    countForTenant(tenantId: string, trx: Executor = db): Promise<number> {
      return trx
        .selectFrom('documents')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },

    /** Chunks the tenant's other documents hold (from their counts: cheap enough to ask at every index). */
    chunkTotalExcept(tenantId: string, documentId: string, trx: Executor = db): Promise<number> {
      return trx
        .selectFrom('documents')
        .select(sql<number>`coalesce(sum(chunk_count), 0)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .where('id', '<>', documentId)
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.n))
    },

    /** A document refused at indexing: no chunks, status error with the reason. */
    async refuseIndex(tenantId: string, id: string, message: string, now: Date, trx: Executor) {
      await trx.deleteFrom('chunks').where('tenant_id', '=', tenantId).where('document_id', '=', id).execute()
      await trx
        .updateTable('documents')
        .set({ status: 'error', error_message: message, chunk_count: 0, indexed_at: now, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .execute()
    },

    /** Serialises document creation of one tenant, so the capacity cannot be raced past. */
    lockTenant(tenantId: string, trx: Executor) {
      return trx.selectFrom('tenants').select('id').where('id', '=', tenantId).forUpdate().executeTakeFirst()
    },

    insert(
      tenantId: string,
      v: {
        filename: string
        file_type: DocumentFileType
        title: string | null
        size_bytes: number
        content_hash: string
        parsed_text: string
        source_url?: string | null
        now: Date
      },
      trx: Executor = db,
    ): Promise<DocumentRow> {
      return trx
        .insertInto('documents')
        .values({
          tenant_id: tenantId,
          filename: v.filename,
          file_type: v.file_type,
          status: 'processing',
          error_message: null,
          source_id: null,
          source_url: v.source_url ?? null,
          title: v.title,
          size_bytes: v.size_bytes,
          content_hash: v.content_hash,
          parsed_text: v.parsed_text,
          lang: null,
          created_at: v.now,
          updated_at: v.now,
        })
        .returning(LIST_COLUMNS)
        .executeTakeFirstOrThrow()
    },

    async delete(tenantId: string, id: string, trx: Executor = db): Promise<boolean> {
      const r = await trx.deleteFrom('documents').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },

    setHealth(tenantId: string, id: string, health: HealthStatus, trx: Executor = db) {
      return trx
        .updateTable('documents')
        .set({ health_status: JSON.stringify(health) })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .returning(LIST_COLUMNS)
        .executeTakeFirst()
    },

    markStatus(tenantId: string, id: string, v: { status: 'processing' | 'error'; error_message: string | null; now: Date }, trx: Executor = db) {
      return trx
        .updateTable('documents')
        .set({ status: v.status, error_message: v.error_message, updated_at: v.now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .executeTakeFirst()
    },

    finishIndex(tenantId: string, id: string, v: { chunk_count: number; lang: string; health: HealthStatus; now: Date }, trx: Executor) {
      return trx
        .updateTable('documents')
        .set({
          status: 'ready',
          error_message: null,
          chunk_count: v.chunk_count,
          lang: v.lang,
          health_status: JSON.stringify(v.health),
          indexed_at: v.now,
          updated_at: v.now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .executeTakeFirst()
    },

    /**
     * Replaces a document's chunks inside the caller's transaction: the new chunks are inserted (tsvector
     * built by PostgreSQL with each chunk's configuration; title and heading path weigh more than the body),
     * vectors of old chunks with the same text and headings are carried over (no paid re-embedding of
     * unchanged text), then the old chunks are deleted. A rerun therefore never leaves duplicates.
     */
    async replaceChunks(tenantId: string, documentId: string, chunks: Chunk[], meta: { title: string | null; now: Date }, trx: Executor): Promise<void> {
      const old = await trx.selectFrom('chunks').select(['id']).where('tenant_id', '=', tenantId).where('document_id', '=', documentId).execute()
      const oldIds = old.map((r) => r.id)
      const newIds: string[] = []
      let batch: Chunk[] = []
      let chars = 0
      const flush = async () => {
        if (!batch.length) return
        const rows = JSON.stringify(
          batch.map((c) => ({
            ordinal: c.ordinal,
            content: c.content,
            section_title: c.sectionTitle,
            heading_path: c.headingPath,
            source_url: c.sourceUrl,
            token_count: c.tokenCount,
            lang: c.lang,
          })),
        )
        const res = await sql<{ id: string }>`
          INSERT INTO chunks (tenant_id, document_id, ordinal, content, section_title, heading_path, source_url, token_count, lang, tsv, created_at)
          SELECT ${tenantId}::uuid, ${documentId}::uuid, x.ordinal, x.content, x.section_title, x.heading_path, x.source_url, x.token_count, x.lang,
                 setweight(to_tsvector(x.lang::regconfig, concat_ws(' ', ${meta.title}::text, x.heading_path)), 'A')
                   || setweight(to_tsvector(x.lang::regconfig, x.content), 'B'),
                 ${meta.now}
          FROM jsonb_to_recordset(${rows}::jsonb) AS x(ordinal int, content text, section_title text, heading_path text, source_url text, token_count int, lang text)
          RETURNING id`.execute(trx)
        for (const r of res.rows) newIds.push(r.id)
        batch = []
        chars = 0
      }
      for (const c of chunks) {
        batch.push(c)
        chars += c.content.length
        if (batch.length >= INSERT_BATCH_ROWS || chars >= INSERT_BATCH_CHARS) await flush()
      }
      await flush()
      if (oldIds.length === 0) return
      // Statements that touch no chunk rows are skipped: the lexical-stats triggers run per statement.
      const reusable = newIds.length
        ? await sql<{ n: number }>`SELECT count(*)::int AS n FROM chunks WHERE id = ANY(${oldIds}::uuid[]) AND embedding IS NOT NULL`.execute(trx)
        : null
      if (reusable && reusable.rows[0]!.n > 0) {
        await sql`
          UPDATE chunks n SET embedding = o.embedding, embedding_model = o.embedding_model
          FROM (
            SELECT DISTINCT ON (md5(content), coalesce(heading_path, '')) md5(content) AS h, coalesce(heading_path, '') AS p, embedding, embedding_model
            FROM chunks WHERE id = ANY(${oldIds}::uuid[]) AND embedding IS NOT NULL
          ) o
          WHERE n.id = ANY(${newIds}::uuid[]) AND md5(n.content) = o.h AND coalesce(n.heading_path, '') = o.p`.execute(trx)
      }
      await sql`DELETE FROM chunks WHERE tenant_id = ${tenantId}::uuid AND id = ANY(${oldIds}::uuid[])`.execute(trx)
    },

    listChunks(tenantId: string, documentId: string, trx: Executor = db) {
      return trx
        .selectFrom('chunks')
        .select(['id', 'ordinal', 'content', 'section_title', 'heading_path', 'source_url', 'token_count', 'lang', 'embedding_model'])
        .where('tenant_id', '=', tenantId)
        .where('document_id', '=', documentId)
        .orderBy('ordinal')
        .execute()
    },

    // --- embeddings ---

    async embeddingStorage(trx: Executor = db): Promise<EmbeddingStorage> {
      const r = await sql<{ udt_name: string }>`
        SELECT udt_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'chunks' AND column_name = 'embedding'`.execute(trx)
      return r.rows[0]?.udt_name === 'vector' ? 'vector' : 'array'
    },

    /** The width of the tenant's stored vectors of `model` (the index's width), null while it has none. */
    async storedWidth(tenantId: string, model: string, trx: Executor = db): Promise<number | null> {
      const r = await sql<{ embedding: unknown }>`
        SELECT embedding FROM chunks WHERE tenant_id = ${tenantId} AND embedding_model = ${model} AND embedding IS NOT NULL LIMIT 1`.execute(trx)
      const e = r.rows[0]?.embedding
      if (Array.isArray(e)) return e.length
      if (typeof e === 'string') return e.split(',').length
      return null
    },

    /** Chunks still without a vector of `model` (a changed model re-embeds), with the context the embedding text gets. */
    pendingEmbeddings(tenantId: string, model: string, limit: number, documentId?: string, trx: Executor = db) {
      let q = trx
        .selectFrom('chunks as c')
        .innerJoin('documents as d', (j) => j.onRef('d.id', '=', 'c.document_id').onRef('d.tenant_id', '=', 'c.tenant_id'))
        .select(['c.id', 'c.content', 'c.heading_path', 'd.title', 'd.filename'])
        .where('c.tenant_id', '=', tenantId)
        .where((eb) => eb.or([eb('c.embedding', 'is', null), eb('c.embedding_model', 'is', null), eb('c.embedding_model', '!=', model)]))
        .orderBy('c.document_id')
        .orderBy('c.ordinal')
        .limit(limit)
      if (documentId) q = q.where('c.document_id', '=', documentId)
      return q.execute()
    },

    async writeEmbeddings(tenantId: string, rows: { id: string; vector: number[] }[], model: string, storage: EmbeddingStorage, trx: Executor = db) {
      if (!rows.length) return
      const payload = JSON.stringify(rows.map((r) => ({ id: r.id, v: storage === 'vector' ? `[${r.vector.join(',')}]` : `{${r.vector.join(',')}}` })))
      const cast = storage === 'vector' ? sql`x.v::vector` : sql`x.v::real[]`
      await sql`
        UPDATE chunks SET embedding = ${cast}, embedding_model = ${model}
        FROM jsonb_to_recordset(${payload}::jsonb) AS x(id uuid, v text)
        WHERE chunks.id = x.id AND chunks.tenant_id = ${tenantId}::uuid`.execute(trx)
    },

    /**
     * Chunks without a vector of `model`, per document of the tenant (only documents that miss some).
     * One grouped scan of the tenant's chunks; the listing asks it once for all its documents.
     */
    async missingVectors(tenantId: string, model: string, documentId?: string, trx: Executor = db): Promise<Map<string, number>> {
      let q = trx
        .selectFrom('chunks')
        .select(['document_id', sql<number>`count(*)::int`.as('n')])
        .where('tenant_id', '=', tenantId)
        .where((eb) => eb.or([eb('embedding', 'is', null), eb('embedding_model', 'is', null), eb('embedding_model', '!=', model)]))
        .groupBy('document_id')
      if (documentId) q = q.where('document_id', '=', documentId)
      const rows = await q.execute()
      return new Map(rows.map((r) => [r.document_id, Number(r.n)]))
    },

    embeddingFailure(tenantId: string, trx: Executor = db): Promise<EmbeddingFailure | undefined> {
      return trx
        .selectFrom('embedding_failures')
        .select(['model', 'reason', 'scope', 'attempts', 'failed_at'])
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst()
    },

    /** Upserts the tenant's failure; `attempts` counts consecutive failures of the same reason and model. */
    async recordEmbeddingFailure(
      tenantId: string,
      f: { model: string; reason: EmbeddingFailureReason; scope: EmbeddingFailureScope; now: Date },
      trx: Executor = db,
    ) {
      await sql`
        INSERT INTO embedding_failures (tenant_id, model, reason, scope, attempts, first_failed_at, failed_at)
        VALUES (${tenantId}::uuid, ${f.model}, ${f.reason}, ${f.scope}, 1, ${f.now}, ${f.now})
        ON CONFLICT (tenant_id) DO UPDATE SET
          attempts = CASE WHEN embedding_failures.reason = EXCLUDED.reason AND embedding_failures.model = EXCLUDED.model
                          THEN embedding_failures.attempts + 1 ELSE 1 END,
          first_failed_at = CASE WHEN embedding_failures.reason = EXCLUDED.reason AND embedding_failures.model = EXCLUDED.model
                          THEN embedding_failures.first_failed_at ELSE EXCLUDED.first_failed_at END,
          model = EXCLUDED.model, reason = EXCLUDED.reason, scope = EXCLUDED.scope, failed_at = EXCLUDED.failed_at`.execute(trx)
    },

    async clearEmbeddingFailure(tenantId: string, trx: Executor = db): Promise<boolean> {
      const r = await trx.deleteFrom('embedding_failures').where('tenant_id', '=', tenantId).executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },

    /** Not tenant-scoped on purpose: the provider probe works for every tenant a provider failure stopped, oldest first. */
    tenantsStoppedByProvider(model: string, limit: number, trx: Executor = db): Promise<string[]> {
      return trx
        .selectFrom('embedding_failures')
        .select('tenant_id')
        .where('scope', '=', 'provider')
        .where('model', '=', model)
        .orderBy('failed_at')
        .limit(limit)
        .execute()
        .then((rows) => rows.map((r) => r.tenant_id))
    },

    /**
     * Not tenant-scoped on purpose: the backfill sweep looks for tenants that have a key and chunks
     * without vectors, then works tenant by tenant.
     */
    tenantsNeedingEmbeddings(model: string, limit: number, trx: Executor = db) {
      return sql<{ tenant_id: string }>`
        SELECT t.id AS tenant_id FROM tenants t
        WHERE t.llm_key_enc IS NOT NULL
          AND EXISTS (SELECT 1 FROM chunks c WHERE c.tenant_id = t.id AND (c.embedding IS NULL OR c.embedding_model IS DISTINCT FROM ${model}))
        LIMIT ${limit}`
        .execute(trx)
        .then((r) => r.rows.map((x) => x.tenant_id))
    },
  }
}

export type DocumentsRepo = ReturnType<typeof createDocumentsRepo>
