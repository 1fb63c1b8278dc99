import { LIST_COLUMNS } from '../documents.repo.js'
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import type { Db } from '../../../db/client.js'
import type { DocumentsTable } from '../../../db/schema/ingestion.js'
import type { CrawlQueueState, CrawlRunsTable, FailedUrl, SourcePagesTable, UrlSourcesTable } from '../../../db/schema/sources.js'

type Executor = Db

export type SourceRow = Selectable<UrlSourcesTable>
export type RunRow = Selectable<CrawlRunsTable>
export type PageRow = Selectable<SourcePagesTable>

export interface SourceStats {
  pages_found: number
  pages_indexed: number
  pages_processing: number
  chunks_created: number
}

/** One page row as the crawler writes it (all columns but the keys and created_at). */
export type PageUpsert = { url: string } & Required<
  Pick<Insertable<SourcePagesTable>, 'document_id' | 'etag' | 'last_modified' | 'content_hash' | 'last_status' | 'last_seen_run_id' | 'links'>
> & { updated_at: Date }

export interface QueueEntry {
  url: string
  depth: number
  state?: CrawlQueueState
  reason?: string | null
}

/** Postgres caps a statement at 65535 parameters; multi-row inserts go in slices well below that. */
const SLICE = 500

export function createSourcesRepo(db: Db) {
  return {
    // ---- sources -------------------------------------------------------------------------------------
    insertSource(tenantId: string, values: Omit<Insertable<UrlSourcesTable>, 'tenant_id'>, trx: Executor = db) {
      return trx
        .insertInto('url_sources')
        .values({ ...values, tenant_id: tenantId })
        .returningAll()
        .executeTakeFirstOrThrow()
    },
    findSource(tenantId: string, sourceId: string, trx: Executor = db) {
      return trx.selectFrom('url_sources').selectAll().where('tenant_id', '=', tenantId).where('id', '=', sourceId).executeTakeFirst()
    },
    /** Row-locks the source so refreshes, patches and crawl bookkeeping of one source take turns. */
    lockSource(tenantId: string, sourceId: string, trx: Executor) {
      return trx.selectFrom('url_sources').selectAll().where('tenant_id', '=', tenantId).where('id', '=', sourceId).forUpdate().executeTakeFirst()
    },
    listSources(tenantId: string, trx: Executor = db) {
      return trx.selectFrom('url_sources').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at', 'desc').orderBy('id').execute()
    },
    updateSource(tenantId: string, sourceId: string, patch: Updateable<UrlSourcesTable>, trx: Executor = db) {
      return trx.updateTable('url_sources').set(patch).where('tenant_id', '=', tenantId).where('id', '=', sourceId).returningAll().executeTakeFirst()
    },
    deleteSource(tenantId: string, sourceId: string, trx: Executor = db) {
      return trx.deleteFrom('url_sources').where('tenant_id', '=', tenantId).where('id', '=', sourceId).executeTakeFirst()
    },
    /** Live counts from the page documents, so the numbers shown are never stale. */
    async stats(tenantId: string, sourceIds: string[], trx: Executor = db): Promise<Map<string, SourceStats>> {
      const out = new Map<string, SourceStats>()
      if (sourceIds.length === 0) return out
      const rows = await trx
        .selectFrom('documents')
        .select([
          'source_id',
          sql<number>`count(*)::int`.as('pages_found'),
          sql<number>`(count(*) FILTER (WHERE status = 'ready'))::int`.as('pages_indexed'),
          sql<number>`(count(*) FILTER (WHERE status = 'processing'))::int`.as('pages_processing'),
          sql<number>`(coalesce(sum(chunk_count) FILTER (WHERE status = 'ready'), 0))::int`.as('chunks_created'),
        ])
        .where('tenant_id', '=', tenantId)
        .where('source_id', 'in', sourceIds)
        .groupBy('source_id')
        .execute()
      for (const r of rows) out.set(r.source_id!, r)
      return out
    },
    /** For the scheduler, across tenants on purpose: sources whose next crawl is due. */
    dueSources(now: Date, limit: number, trx: Executor = db) {
      return trx
        .selectFrom('url_sources')
        .select(['id', 'tenant_id', 'schedule'])
        .where('next_crawl_at', '<=', now)
        .where('paused', '=', false)
        .orderBy('next_crawl_at')
        .limit(limit)
        .execute()
    },
    /** Runs marked running whose crawl job is gone (exhausted or lost): the scheduler closes them. */
    orphanRuns(trx: Executor = db) {
      return trx
        .selectFrom('crawl_runs as r')
        .select(['r.id', 'r.tenant_id', 'r.source_id'])
        .where('r.status', '=', 'running')
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('jobs as j')
                .select('j.id')
                .whereRef('j.dedupe_key', '=', sql<string>`'sources.crawl:' || r.source_id::text`)
                .where('j.status', 'in', ['queued', 'running']),
            ),
          ),
        )
        .limit(100)
        .execute()
    },
    lockTenant(tenantId: string, trx: Executor) {
      return trx.selectFrom('tenants').select('id').where('id', '=', tenantId).forUpdate().executeTakeFirst()
    },

    // ---- runs ----------------------------------------------------------------------------------------
    /** Frontier counts of the sources' running crawls: URLs handled (fetched, failed, skipped) and known. */
    async crawlProgress(tenantId: string, sourceIds: string[], trx: Executor = db): Promise<Map<string, { done: number; total: number }>> {
      const out = new Map<string, { done: number; total: number }>()
      if (sourceIds.length === 0) return out
      const rows = await trx
        .selectFrom('crawl_runs as r')
        .innerJoin('crawl_queue as q', 'q.run_id', 'r.id')
        .select(['r.source_id', sql<number>`count(*)::int`.as('total'), sql<number>`(count(*) FILTER (WHERE q.state <> 'pending'))::int`.as('done')])
        .where('r.tenant_id', '=', tenantId)
        .where('r.source_id', 'in', sourceIds)
        .where('r.status', '=', 'running')
        .groupBy('r.source_id')
        .execute()
      for (const r of rows) out.set(r.source_id, { done: r.done, total: r.total })
      return out
    },
    activeRun(tenantId: string, sourceId: string, trx: Executor = db) {
      return trx
        .selectFrom('crawl_runs')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('source_id', '=', sourceId)
        .where('status', '=', 'running')
        .executeTakeFirst()
    },
    insertRun(tenantId: string, values: Omit<Insertable<CrawlRunsTable>, 'tenant_id'>, trx: Executor = db) {
      return trx
        .insertInto('crawl_runs')
        .values({ ...values, tenant_id: tenantId })
        .returningAll()
        .executeTakeFirstOrThrow()
    },
    updateRun(tenantId: string, runId: string, patch: Updateable<CrawlRunsTable>, trx: Executor = db) {
      return trx.updateTable('crawl_runs').set(patch).where('tenant_id', '=', tenantId).where('id', '=', runId).returningAll().executeTakeFirst()
    },
    addToRun(tenantId: string, runId: string, d: { found?: number; indexed?: number; unchanged?: number; removed?: number }, trx: Executor = db) {
      return trx
        .updateTable('crawl_runs')
        .set((eb) => ({
          pages_found: eb('pages_found', '+', d.found ?? 0),
          pages_indexed: eb('pages_indexed', '+', d.indexed ?? 0),
          pages_unchanged: eb('pages_unchanged', '+', d.unchanged ?? 0),
          pages_removed: eb('pages_removed', '+', d.removed ?? 0),
        }))
        .where('tenant_id', '=', tenantId)
        .where('id', '=', runId)
        .returningAll()
        .executeTakeFirstOrThrow()
    },
    recentRuns(tenantId: string, sourceId: string, limit: number, trx: Executor = db) {
      return trx
        .selectFrom('crawl_runs')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('source_id', '=', sourceId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute()
    },

    // ---- frontier ------------------------------------------------------------------------------------
    /** Adds URLs the run has not seen; a URL already queued (in any state) is left as it is. */
    async enqueueUrls(runId: string, entries: QueueEntry[], trx: Executor = db): Promise<void> {
      for (let i = 0; i < entries.length; i += SLICE) {
        const slice = entries.slice(i, i + SLICE)
        await trx
          .insertInto('crawl_queue')
          .values(slice.map((e) => ({ run_id: runId, url: e.url, depth: e.depth, state: e.state ?? 'pending', reason: e.reason ?? null })))
          .onConflict((oc) => oc.columns(['run_id', 'url']).doNothing())
          .execute()
      }
    },
    nextPending(runId: string, limit: number, trx: Executor = db) {
      return trx
        .selectFrom('crawl_queue')
        .select(['url', 'depth'])
        .where('run_id', '=', runId)
        .where('state', '=', 'pending')
        .orderBy('depth')
        .orderBy('seq')
        .limit(limit)
        .execute()
    },
    /** Sets the state of many queue rows in one statement. */
    async setQueueStates(runId: string, rows: { url: string; state: CrawlQueueState; reason: string | null }[], trx: Executor = db): Promise<void> {
      for (let i = 0; i < rows.length; i += SLICE) {
        const values = sql.join(rows.slice(i, i + SLICE).map((r) => sql`(${r.url}, ${r.state}, ${r.reason}::text)`))
        await sql`
          UPDATE crawl_queue AS q SET state = v.state, reason = v.reason
          FROM (VALUES ${values}) AS v(url, state, reason)
          WHERE q.run_id = ${runId} AND q.url = v.url`.execute(trx)
      }
    },
    /**
     * Claims a redirect target as visited in this run. False when the run already has it (fetched or
     * failed), so two URLs redirecting to one page store it once.
     */
    async claimVisited(runId: string, url: string, depth: number, trx: Executor): Promise<boolean> {
      const row = await trx
        .insertInto('crawl_queue')
        .values({ run_id: runId, url, depth, state: 'done', reason: null })
        .onConflict((oc) => oc.columns(['run_id', 'url']).doUpdateSet({ state: 'done' }).where('crawl_queue.state', '=', 'pending'))
        .returning('url')
        .executeTakeFirst()
      return !!row
    },
    skipPending(runId: string, reason: string, trx: Executor = db) {
      return trx.updateTable('crawl_queue').set({ state: 'skipped', reason }).where('run_id', '=', runId).where('state', '=', 'pending').execute()
    },
    async failures(runId: string, limit: number, trx: Executor = db): Promise<FailedUrl[]> {
      const rows = await trx
        .selectFrom('crawl_queue')
        .select(['url', 'reason'])
        .where('run_id', '=', runId)
        .where('state', 'in', ['failed', 'skipped'])
        .where('reason', 'is not', null)
        .orderBy('seq')
        .limit(limit)
        .execute()
      return rows.map((r) => ({ url: r.url, reason: r.reason! }))
    },
    clearQueue(runId: string, trx: Executor = db) {
      return trx.deleteFrom('crawl_queue').where('run_id', '=', runId).execute()
    },

    // ---- pages ---------------------------------------------------------------------------------------
    pages(tenantId: string, sourceId: string, trx: Executor = db) {
      return trx.selectFrom('source_pages').selectAll().where('tenant_id', '=', tenantId).where('source_id', '=', sourceId).execute()
    },
    /** Writes many page rows at once, inserting new URLs and updating known ones. */
    async upsertPages(tenantId: string, sourceId: string, rows: PageUpsert[], trx: Executor = db): Promise<void> {
      for (let i = 0; i < rows.length; i += SLICE) {
        await trx
          .insertInto('source_pages')
          .values(rows.slice(i, i + SLICE).map((r) => ({ ...r, tenant_id: tenantId, source_id: sourceId, created_at: r.updated_at })))
          .onConflict((oc) =>
            oc.columns(['source_id', 'url']).doUpdateSet((eb) => ({
              document_id: eb.ref('excluded.document_id'),
              etag: eb.ref('excluded.etag'),
              last_modified: eb.ref('excluded.last_modified'),
              content_hash: eb.ref('excluded.content_hash'),
              last_status: eb.ref('excluded.last_status'),
              last_seen_run_id: eb.ref('excluded.last_seen_run_id'),
              links: eb.ref('excluded.links'),
              updated_at: eb.ref('excluded.updated_at'),
            })),
          )
          .execute()
      }
    },
    /** Marks known pages as seen by a run (a connector's unchanged articles), without touching their other columns. */
    async markSeen(tenantId: string, sourceId: string, urls: string[], runId: string, now: Date, trx: Executor = db): Promise<void> {
      for (let i = 0; i < urls.length; i += SLICE) {
        await trx
          .updateTable('source_pages')
          .set({ last_seen_run_id: runId, updated_at: now })
          .where('tenant_id', '=', tenantId)
          .where('source_id', '=', sourceId)
          .where('url', 'in', urls.slice(i, i + SLICE))
          .execute()
      }
    },
    /** Pages this run did not see (gone, no longer linked, now excluded or disallowed). */
    unseenPages(tenantId: string, sourceId: string, runId: string, trx: Executor = db) {
      return trx
        .selectFrom('source_pages')
        .select(['id', 'document_id', 'url'])
        .where('tenant_id', '=', tenantId)
        .where('source_id', '=', sourceId)
        .where('excluded', '=', false)
        .where((eb) => eb.or([eb('last_seen_run_id', 'is', null), eb('last_seen_run_id', '!=', runId)]))
        .execute()
    },
    deletePages(tenantId: string, ids: string[], trx: Executor = db) {
      if (ids.length === 0) return Promise.resolve()
      return trx
        .deleteFrom('source_pages')
        .where('tenant_id', '=', tenantId)
        .where('id', 'in', ids)
        .execute()
        .then(() => undefined)
    },
    excludePage(tenantId: string, sourceId: string, url: string, now: Date, trx: Executor) {
      return trx
        .insertInto('source_pages')
        .values({
          tenant_id: tenantId,
          source_id: sourceId,
          url,
          document_id: null,
          excluded: true,
          created_at: now,
          updated_at: now,
          etag: null,
          last_modified: null,
          content_hash: null,
          last_status: null,
          last_seen_run_id: null,
        })
        .onConflict((oc) => oc.columns(['source_id', 'url']).doUpdateSet({ excluded: true, document_id: null, updated_at: now }))
        .execute()
    },
    /** The pages listed in a source's detail: its documents, newest change first. */
    pageDocuments(tenantId: string, sourceId: string, trx: Executor = db) {
      return trx
        .selectFrom('documents')
        .select(['id', 'title', 'source_url', 'filename', 'chunk_count', 'status', 'updated_at'])
        .where('tenant_id', '=', tenantId)
        .where('source_id', '=', sourceId)
        .orderBy('source_url')
        .execute()
    },

    // ---- page documents (rows of the documents table that this module owns) --------------------------
    /** Inserts page documents (ids chosen by the caller, so one statement serves a whole batch). */
    async insertDocuments(tenantId: string, rows: Insertable<DocumentsTable>[], trx: Executor = db): Promise<void> {
      for (let i = 0; i < rows.length; i += 100) {
        await trx
          .insertInto('documents')
          .values(rows.slice(i, i + 100).map((r) => ({ ...r, tenant_id: tenantId })))
          .execute()
      }
    },
    updateDocument(tenantId: string, sourceId: string, documentId: string, patch: Updateable<DocumentsTable>, trx: Executor = db) {
      return trx
        .updateTable('documents')
        .set(patch)
        .where('tenant_id', '=', tenantId)
        .where('source_id', '=', sourceId)
        .where('id', '=', documentId)
        .returning('id')
        .executeTakeFirst()
    },
    findPageDocument(tenantId: string, sourceId: string, documentId: string, trx: Executor = db) {
      return trx
        .selectFrom('documents')
        .select(['id', 'source_url'])
        .where('tenant_id', '=', tenantId)
        .where('source_id', '=', sourceId)
        .where('id', '=', documentId)
        .executeTakeFirst()
    },
    /** Deletes page documents; their chunks go with them (FK cascade). */
    deleteDocuments(tenantId: string, ids: string[], trx: Executor = db) {
      if (ids.length === 0) return Promise.resolve()
      return trx
        .deleteFrom('documents')
        .where('tenant_id', '=', tenantId)
        .where('id', 'in', ids)
        .execute()
        .then(() => undefined)
    },
    countTenantDocuments(tenantId: string, trx: Executor = db) {
      return trx
        .selectFrom('documents')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },
    /** Uploaded files (not crawled pages), for the knowledge sources listing. */
    uploadedDocuments(tenantId: string, trx: Executor = db) {
      return trx
        .selectFrom('documents')
        .select(LIST_COLUMNS)
        .where('tenant_id', '=', tenantId)
        .where('source_id', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute()
    },
  }
}

export type SourcesRepo = ReturnType<typeof createSourcesRepo>
