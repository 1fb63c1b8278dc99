import { createHash, randomUUID } from 'node:crypto'
import type { Insertable } from 'kysely'
import { PG_FOREIGN_KEY_VIOLATION, pgCode } from '../../../../db/errors.js'
import type { DocumentsTable } from '../../../../db/schema/ingestion.js'
import type { FailedUrl, LastSync, SourceKind } from '../../../../db/schema/sources.js'
import { decryptOrNull, type Cipher } from '../../../../lib/crypto.js'
import { enqueueIndex } from '../../documents.service.js'
import { CrawlInterrupted, type CrawlerDeps } from '../crawler/crawl.types.js'
import { nextCrawlAt } from '../crawler/frontier.fns.js'
import type { PageRow, PageUpsert, RunRow, SourceRow } from '../sources.repo.js'
import { makeConnector } from './config.js'
import { type Connector, ConnectorError, type ConnectorKind, type ConnectorSettings, type ListedArticle } from './connector.types.js'
import { shortListing } from './connectors.fns.js'
import type { Upstream } from './http.js'

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')
/** Articles read and converted at once within one sync (their HTML goes to the parser threads). */
const CONTENT_CONCURRENCY = 4
const MAX_FAILED = 200

export type ConnectorSyncDeps = Pick<CrawlerDeps, 'db' | 'repo' | 'queue' | 'clock' | 'log' | 'extractHtml' | 'parseFile' | 'events'> & {
  cipher: Pick<Cipher, 'decrypt'>
  /** The vendor's API with the given auth headers (http.ts `upstream` over the guarded transport). */
  upstreamFor: (kind: ConnectorKind) => (auth: Record<string, string>) => Upstream
  maxDocumentsPerTenant: number
}

interface Counts {
  added: number
  updated: number
  deleted: number
  unchanged: number
  skipped: number
  listed: number
}

/** An article's Markdown: HTML bodies through the documents module's extraction (parser threads), files through its Markdown parser. */
async function articleMarkdown(deps: ConnectorSyncDeps, a: ListedArticle, c: Connector, signal: AbortSignal) {
  const got = await c.content(a, signal)
  if (got.format === 'markdown') {
    const name = a.file?.split('/').pop() ?? 'article.md'
    if (!deps.parseFile) return { title: a.title, markdown: got.text.trim(), url: got.url ?? a.url }
    const parsed = await deps.parseFile(/\.mdx$/i.test(name) ? name : name.replace(/\.\w+$/, '.md'), new TextEncoder().encode(got.text))
    return { title: parsed.title ?? a.title, markdown: parsed.text.trim(), url: got.url ?? a.url }
  }
  // The article's text is data: it is wrapped as a page whose title is the article's, never as instructions.
  const escaped = a.title.replace(/[<&]/g, (ch) => (ch === '<' ? '&lt;' : '&amp;'))
  const page = `<!doctype html><html><head><title>${escaped}</title></head><body><article><h1>${escaped}</h1>${got.text}</article></body></html>`
  const base = a.url ?? 'https://invalid.example/'
  const extracted = deps.extractHtml ? await deps.extractHtml(page, base) : (await import('../../parsers/html-extract.js')).extractHtml(page, base)
  return { title: a.title, markdown: extracted.markdown.trim(), url: a.url }
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i]!)
      }
    }),
  )
  return out
}

/**
 * One sync of one connector source, as a run of the crawler's kind (crawl_runs, source_pages, documents):
 * the vendor's listing page by page; an unchanged article (same `updated_at` or `sha`) is only marked seen,
 * a new or changed one is converted and its document rewritten and re-indexed (the index job swaps its
 * chunks in one transaction); an article shown as a draft or restricted leaves at once. Anything else
 * the source holds is deleted only when the listing ended complete and was not much shorter than the last.
 */
export function createConnectorSync(deps: ConnectorSyncDeps) {
  const { db, repo, queue, clock, log } = deps

  function connectorOf(s: SourceRow): Connector {
    const kind = s.kind as ConnectorKind
    return makeConnector(kind, s.connector_config as unknown as ConnectorSettings, decryptOrNull(deps.cipher, s.secret_enc), deps.upstreamFor(kind))
  }

  async function startRun(source: SourceRow): Promise<RunRow | null> {
    return db.transaction().execute(async (trx) => {
      const locked = await repo.lockSource(source.tenant_id, source.id, trx)
      if (!locked || locked.paused) return null
      const existing = await repo.activeRun(source.tenant_id, source.id, trx)
      if (existing) return existing
      const now = clock.now()
      const run = await repo.insertRun(
        source.tenant_id,
        {
          source_id: source.id,
          trigger: locked.pending_trigger,
          site: new URL(locked.url).host,
          failed_urls: '[]',
          error_message: null,
          created_at: now,
          finished_at: null,
        },
        trx,
      )
      await repo.updateSource(source.tenant_id, source.id, { status: 'indexing', updated_at: now }, trx)
      return run
    })
  }

  async function run(tenantId: string, sourceId: string, signal: AbortSignal): Promise<void> {
    const source = await repo.findSource(tenantId, sourceId)
    if (!source || source.paused || source.kind === 'url') return
    let current: RunRow | null | undefined = await repo.activeRun(tenantId, sourceId)
    // a job re-run after its sync finished must not sync again
    if (!current && source.status !== 'queued') return
    current ??= await startRun(source)
    if (!current) return
    const runId = current.id
    const started = Date.now()
    const known = new Map<string, PageRow>()
    const excluded = new Set<string>()
    for (const p of await repo.pages(tenantId, sourceId)) p.excluded ? excluded.add(p.url) : known.set(p.url, p)
    const counts: Counts = { added: 0, updated: 0, deleted: 0, unchanged: 0, skipped: 0, listed: 0 }
    const failed: FailedUrl[] = []
    const connector = connectorOf(source)

    async function recordBatch(articles: ListedArticle[]): Promise<void> {
      const seen: string[] = []
      const hide: PageRow[] = []
      const need: ListedArticle[] = []
      for (const a of articles) {
        counts.listed++
        if (excluded.has(a.key)) continue
        const page = known.get(a.key)
        if (a.hidden) {
          counts.skipped++
          // shown unpublished: it leaves now, whatever happens to the rest of the listing
          if (page) hide.push(page)
        } else if (page?.document_id && page.content_hash === a.version) {
          seen.push(a.key)
          counts.unchanged++
        } else need.push(a)
      }
      const converted = await mapLimit(need, CONTENT_CONCURRENCY, async (a) => {
        try {
          return { a, ...(await articleMarkdown(deps, a, connector, signal)) }
        } catch (err) {
          // the vendor failing ends the run; one article that cannot be read or converted (too large, too
          // complex, a parser thread that died) is skipped, and one already held keeps its last version
          if (signal.aborted || (err instanceof ConnectorError && err.reason !== 'too_large')) throw err
          const reason = err instanceof ConnectorError ? err.message : `unreadable article (${err instanceof Error ? err.message : 'conversion failed'})`
          if (failed.length < MAX_FAILED) failed.push({ url: a.url ?? a.key, reason })
          return { a, failed: true as const }
        }
      })
      const delta = { added: 0, updated: 0, deleted: 0, skipped: 0, unchanged: 0 }
      const written = new Map<string, PageUpsert>()
      await db.transaction().execute(async (trx) => {
        const now = clock.now()
        if (seen.length) await repo.markSeen(tenantId, sourceId, seen, runId, now, trx)
        const gone = [...hide]
        const newDocs: Insertable<DocumentsTable>[] = []
        const toIndex: string[] = []
        let tenantDocs: number | null = null
        for (const c of converted) {
          if ('failed' in c) {
            delta.skipped++
            // kept as it was: marked seen, its old version stays, so the next sync tries it again
            if (known.get(c.a.key)?.document_id) await repo.markSeen(tenantId, sourceId, [c.a.key], runId, now, trx)
            continue
          }
          const { a } = c
          const page = known.get(a.key)
          if (!c.markdown) {
            delta.skipped++
            if (page) gone.push(page)
            continue
          }
          const doc = {
            filename: c.title.slice(0, 255) || a.key.slice(0, 255),
            title: c.title.slice(0, 1000),
            source_url: c.url,
            parsed_text: c.markdown,
            content_hash: sha256(c.markdown),
            size_bytes: Buffer.byteLength(c.markdown),
            status: 'processing' as const,
            error_message: null,
            locale: a.locale,
            updated_at: now,
          }
          let documentId = page?.document_id ? ((await repo.updateDocument(tenantId, sourceId, page.document_id, doc, trx))?.id ?? null) : null
          if (documentId) delta.updated++
          else {
            if (tenantDocs === null) {
              // uploads take the same lock, so files and articles cannot overshoot the limit together
              await repo.lockTenant(tenantId, trx)
              tenantDocs = await repo.countTenantDocuments(tenantId, trx)
            }
            if (tenantDocs >= deps.maxDocumentsPerTenant) {
              delta.skipped++
              if (failed.length < MAX_FAILED)
                failed.push({ url: a.url ?? a.key, reason: `document limit of ${deps.maxDocumentsPerTenant} per account reached` })
              continue
            }
            documentId = randomUUID()
            tenantDocs++
            newDocs.push({ ...doc, id: documentId, tenant_id: tenantId, file_type: 'url', source_id: sourceId, lang: null, indexed_at: null, created_at: now })
            delta.added++
          }
          toIndex.push(documentId)
          written.set(a.key, {
            url: a.key,
            document_id: documentId,
            etag: null,
            last_modified: null,
            content_hash: a.version,
            last_status: 200,
            last_seen_run_id: runId,
            links: '[]',
            updated_at: now,
          })
        }
        await repo.insertDocuments(tenantId, newDocs, trx)
        await repo.upsertPages(tenantId, sourceId, [...written.values()], trx)
        if (gone.length) {
          await repo.deleteDocuments(
            tenantId,
            gone.map((p) => p.document_id).filter((id): id is string => !!id),
            trx,
          )
          await repo.deletePages(
            tenantId,
            gone.map((p) => p.id),
            trx,
          )
          delta.deleted = gone.filter((p) => p.document_id).length
        }
        for (const id of toIndex) await enqueueIndex(queue, tenantId, id, trx)
        const published = seen.length + written.size
        if (published || delta.deleted)
          current = await repo.addToRun(tenantId, runId, { found: published, indexed: written.size, unchanged: seen.length, removed: delta.deleted }, trx)
        for (const p of gone) known.delete(p.url)
      })
      // counted once committed, so the figures never claim what a rolled-back batch did
      counts.added += delta.added
      counts.updated += delta.updated
      counts.deleted += delta.deleted
      counts.skipped += delta.skipped
      for (const [key, row] of written) {
        const prev = known.get(key)
        known.set(key, {
          ...(prev ?? { id: '', tenant_id: tenantId, source_id: sourceId, url: key, excluded: false, created_at: row.updated_at }),
          ...row,
          links: [],
        })
      }
    }

    let error: ConnectorError | null = null
    try {
      for await (const batch of connector.list(signal)) {
        if (!(await repo.findSource(tenantId, sourceId))) return
        await recordBatch(batch)
      }
    } catch (err) {
      if (signal.aborted) throw new CrawlInterrupted()
      if (pgCode(err) === PG_FOREIGN_KEY_VIOLATION && !(await repo.findSource(tenantId, sourceId))) return
      if (!(err instanceof ConnectorError)) throw err
      error = err
    }
    await finish(error)

    async function finish(err: ConnectorError | null): Promise<void> {
      const now = clock.now()
      await db.transaction().execute(async (trx) => {
        const locked = await repo.lockSource(tenantId, sourceId, trx)
        if (!locked) return
        const prev = locked.last_sync
        const reference = prev?.reference_listed ?? null
        let status: LastSync['status'] = 'ok'
        let message: string | null = null
        let short = false
        let nextReference = reference
        if (err) {
          status = err.reason === 'refused' || err.reason === 'not_found' || counts.listed === 0 ? 'failed' : 'partial'
          message = status === 'partial' && !/nothing was deleted/.test(err.message) ? `${err.message}; nothing was deleted` : err.message
        } else if (shortListing(counts.listed, reference, prev?.short === true)) {
          status = 'partial'
          short = true
          message = `the listing held ${counts.listed} articles, less than half of the last complete one (${reference}); nothing was deleted (if they were removed upstream, the next sync deletes them)`
        } else {
          nextReference = counts.listed
          const gone = await repo.unseenPages(tenantId, sourceId, runId, trx)
          await repo.deleteDocuments(
            tenantId,
            gone.map((g) => g.document_id).filter((id): id is string => !!id),
            trx,
          )
          await repo.deletePages(
            tenantId,
            gone.map((g) => g.id),
            trx,
          )
          counts.deleted += gone.filter((g) => g.document_id).length
        }
        const lastSync: LastSync = { status, ...counts, finished_at: now.toISOString(), error: message, reference_listed: nextReference, short }
        await repo.updateRun(
          tenantId,
          runId,
          {
            status: status === 'ok' ? 'completed' : status,
            finished_at: now,
            pages_removed: counts.deleted,
            failed_urls: JSON.stringify(failed),
            error_message: message,
          },
          trx,
        )
        await repo.updateSource(
          tenantId,
          sourceId,
          {
            status: status === 'failed' ? 'error' : 'ready',
            error_message: status === 'failed' ? message : null,
            warning_message: status === 'partial' ? message : null,
            last_crawled_at: now,
            next_crawl_at: locked.paused ? null : nextCrawlAt(locked.schedule, now),
            last_sync: JSON.stringify(lastSync),
            updated_at: now,
          },
          trx,
        )
        const data = { source_id: sourceId, run_id: runId, url: locked.url, error: message }
        if (status === 'failed') await deps.events?.emit(tenantId, { type: 'source.crawl_failed', botId: null, data }, trx)
      })
      log.info(
        { sourceId, runId, kind: source!.kind as SourceKind, ...counts, error: err?.reason ?? null, ms: Date.now() - started },
        'connector sync finished',
      )
    }
  }

  /**
   * "Test connection": the first articles the listing shows, nothing stored. An upstream failure is the
   * answer (its words), not an error of this service.
   */
  async function preview(kind: ConnectorKind, settings: ConnectorSettings, secret: string | null, signal: AbortSignal, limit = 10) {
    const c = makeConnector(kind, settings, secret, deps.upstreamFor(kind))
    const articles: { title: string; url: string | null; status: 'published' | 'draft' | 'restricted'; version: string }[] = []
    try {
      for await (const batch of c.list(signal)) {
        for (const a of batch) {
          if (articles.length >= limit) break
          articles.push({ title: a.title, url: a.url, status: a.hidden ?? 'published', version: a.version })
        }
        if (articles.length >= limit) break
      }
      return { ok: true, articles, error: null }
    } catch (err) {
      if (!(err instanceof ConnectorError)) throw err
      return { ok: articles.length > 0 && err.reason === 'incomplete', articles, error: err.message }
    }
  }

  return { run, preview }
}

export type ConnectorSync = ReturnType<typeof createConnectorSync>
