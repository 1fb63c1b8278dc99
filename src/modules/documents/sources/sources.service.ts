import type { Static } from '@sinclair/typebox'
import type { Updateable } from 'kysely'
import type { Db } from '../../../db/client.js'
import { isUniqueViolation } from '../../../db/errors.js'
import type { SourceStatus, UrlSourcesTable } from '../../../db/schema/sources.js'
import { iso, isoReq } from '../../../http/schemas.js'
import type { JobQueue } from '../../../jobs/queue.js'
import { AppError, conflict, notFound, ValidationError } from '../../../lib/errors.js'
import type { Clock } from '../../../lib/clock.js'
import { minutesUntil, nextCrawlAt } from './crawler/frontier.fns.js'
import { normalizeUrl, urlProblemMessage } from './crawler/url.fns.js'
import type { RunRow, SourceRow, SourceStats, SourcesRepo } from './sources.repo.js'
import type { ConnectorCreate, ConnectorView, UrlSourceCreate, UrlSourceUpdate } from './sources.schemas.js'
import { globProblem } from './crawler/glob.fns.js'
import type { Cipher } from '../../../lib/crypto.js'
import { parseConnectorConfig } from './connectors/config.js'
import { secretHint } from './connectors/connectors.fns.js'
import type { ConnectorSync } from './connectors/sync.js'

const REFRESH_INTERVAL_MS = 60 * 60 * 1000
/** A "Test connection" answers within this, however slow the vendor. */
const TEST_CONNECTION_MS = 20_000
const RECENT_RUNS = 5
const NO_STATS: SourceStats = { pages_found: 0, pages_indexed: 0, pages_processing: 0, chunks_created: 0 }

export const crawlDedupeKey = (sourceId: string) => `sources.crawl:${sourceId}`

/** A connector's settings as shown: never its secret, only the hint kept beside it. */
function presentConnector(s: SourceRow) {
  if (s.kind === 'url' || !s.connector_config) return null
  const c = s.connector_config as Record<string, unknown>
  return { ...c, kind: s.kind, base_url: String(c.base_url ?? s.url), secret_hint: s.secret_hint }
}

function presentLastSync(l: SourceRow['last_sync']) {
  if (!l) return null
  const { status, added, updated, deleted, unchanged, skipped, listed, finished_at, error } = l
  return { status, added, updated, deleted, unchanged, skipped, listed, finished_at, error }
}

export function presentSource(s: SourceRow, stats: SourceStats = NO_STATS, crawl: { done: number; total: number } | null = null) {
  // The stored status is the crawl's; pages still being chunked and embedded keep the source "indexing".
  const status: SourceStatus | 'paused' = s.paused ? 'paused' : s.status === 'ready' && stats.pages_processing > 0 ? 'indexing' : s.status
  return {
    id: s.id,
    name: s.name,
    url: s.url,
    source_type: s.kind,
    status,
    schedule: s.schedule,
    exclusion_patterns: s.exclusion_patterns,
    max_pages: s.max_pages,
    pages_found: stats.pages_found,
    pages_indexed: stats.pages_indexed,
    chunks_created: stats.chunks_created,
    last_crawled_at: iso(s.last_crawled_at),
    next_crawl_at: iso(s.next_crawl_at),
    error_message: s.error_message,
    warning_message: s.warning_message,
    created_at: isoReq(s.created_at),
    updated_at: isoReq(s.updated_at),
    progress: { crawl, indexing: { done: stats.pages_indexed, total: stats.pages_found } },
    last_sync: presentLastSync(s.last_sync),
    connector: presentConnector(s) as Static<typeof ConnectorView> | null,
  }
}

export function presentRun(r: RunRow) {
  return {
    id: r.id,
    status: r.status,
    trigger: r.trigger,
    pages_found: r.pages_found,
    pages_indexed: r.pages_indexed,
    pages_unchanged: r.pages_unchanged,
    pages_removed: r.pages_removed,
    failed_urls: r.failed_urls,
    duration_seconds: r.finished_at ? Math.round((r.finished_at.getTime() - r.created_at.getTime()) / 100) / 10 : null,
    error_message: r.error_message,
    created_at: isoReq(r.created_at),
    finished_at: iso(r.finished_at),
  }
}

function startUrlOrThrow(input: string): string {
  const n = normalizeUrl(input)
  if ('problem' in n) throw new ValidationError(['body', 'url'], `Invalid URL: ${urlProblemMessage[n.problem]}`, 'url_parsing')
  return n.url
}

/** The patterns as stored: trimmed, no empties or repeats; one the crawler cannot compile is a 422 naming it. */
function cleanPatterns(p: readonly string[] | null | undefined, field = 'exclusions'): string[] {
  const list = p ?? []
  list.forEach((x, i) => {
    const problem = x.trim() ? globProblem(x.trim()) : null
    if (problem) throw new ValidationError(['body', field, i], `${problem}: ${x.trim().slice(0, 80)}`)
  })
  return [...new Set(list.map((x) => x.trim()).filter(Boolean))]
}

export function createSourcesService(deps: {
  db: Db
  clock: Clock
  queue: JobQueue
  repo: SourcesRepo
  defaultMaxPages: number
  /** Knowledge connectors (the crawl bench leaves them out). */
  connectors?: {
    cipher: Pick<Cipher, 'encrypt'>
    /** the outbound guard's setting (CRAWLER_ALLOW_PRIVATE_NETWORKS): a connector's base_url is judged by it */
    allowPrivateNetworks: boolean
    /** "Test connection": the first articles, nothing stored */
    preview: ConnectorSync['preview']
  }
}) {
  const { db, clock, queue, repo } = deps
  const connectorDeps = () => {
    if (!deps.connectors) throw new Error('connectors are not wired')
    return deps.connectors
  }

  async function getOwned(tenantId: string, sourceId: string): Promise<SourceRow> {
    const s = await repo.findSource(tenantId, sourceId)
    if (!s) throw notFound('URL source not found')
    return s
  }

  async function present(tenantId: string, s: SourceRow) {
    const [stats, crawl] = await Promise.all([repo.stats(tenantId, [s.id]), repo.crawlProgress(tenantId, [s.id])])
    return presentSource(s, stats.get(s.id), crawl.get(s.id) ?? null)
  }

  /** Marks the source queued and enqueues its crawl; a crawl already queued or running absorbs this one. */
  async function queueCrawl(trx: Db, s: SourceRow, trigger: SourceRow['pending_trigger'], patch: Updateable<UrlSourcesTable> = {}) {
    const running = await repo.activeRun(s.tenant_id, s.id, trx)
    const now = clock.now()
    const updated = await repo.updateSource(
      s.tenant_id,
      s.id,
      { ...(running ? {} : { status: 'queued', pending_trigger: trigger }), ...patch, updated_at: now },
      trx,
    )
    await queue.enqueue('sources.crawl', { tenantId: s.tenant_id, sourceId: s.id }, { dedupeKey: crawlDedupeKey(s.id), tenantId: s.tenant_id }, trx)
    return updated!
  }

  return {
    async create(tenantId: string, input: Static<typeof UrlSourceCreate>) {
      const url = startUrlOrThrow(input.url)
      const now = clock.now()
      const schedule = input.schedule ?? 'weekly'
      try {
        const source = await db.transaction().execute(async (trx) => {
          const s = await repo.insertSource(
            tenantId,
            {
              name: input.name?.trim() || new URL(url).host,
              url,
              schedule,
              exclusion_patterns: JSON.stringify(cleanPatterns(input.exclusions)),
              max_pages: input.max_pages ?? deps.defaultMaxPages,
              last_crawled_at: null,
              next_crawl_at: null,
              // only manual refreshes count towards the hourly limit, so creating a source spends none of it
              refresh_requested_at: null,
              error_message: null,
              warning_message: null,
              created_at: now,
              updated_at: now,
            },
            trx,
          )
          return queueCrawl(trx, s, 'initial')
        })
        return presentSource(source)
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('A URL source for this address already exists', 'source_exists')
        throw err
      }
    },

    /** A help centre read through its API (contract "Knowledge connectors"): synced at once, then on its schedule. */
    async createConnector(tenantId: string, input: Static<typeof ConnectorCreate>) {
      const c = connectorDeps()
      const { settings, secret } = parseConnectorConfig(input.kind, input.config, c.allowPrivateNetworks)
      const now = clock.now()
      const url = settings.repo ? `${settings.base_url}/repos/${settings.repo}` : settings.base_url
      const source = await db.transaction().execute(async (trx) => {
        const s = await repo.insertSource(
          tenantId,
          {
            name: input.name?.trim() || (settings.repo ?? new URL(settings.base_url).host),
            url,
            kind: input.kind,
            schedule: input.schedule ?? 'daily',
            exclusion_patterns: '[]',
            max_pages: 0,
            connector_config: JSON.stringify(settings),
            secret_enc: secret ? c.cipher.encrypt(secret) : null,
            secret_hint: secret ? secretHint(secret) : null,
            last_crawled_at: null,
            next_crawl_at: null,
            refresh_requested_at: null,
            error_message: null,
            warning_message: null,
            created_at: now,
            updated_at: now,
          },
          trx,
        )
        return queueCrawl(trx, s, 'initial')
      })
      return presentSource(source)
    },

    /** "Test connection" (beyond the contract): the first articles the account shows with these settings. */
    async testConnector(input: Static<typeof ConnectorCreate>) {
      const c = connectorDeps()
      const { settings, secret } = parseConnectorConfig(input.kind, input.config, c.allowPrivateNetworks)
      return c.preview(input.kind, settings, secret, AbortSignal.timeout(TEST_CONNECTION_MS))
    },

    async list(tenantId: string) {
      const sources = await repo.listSources(tenantId)
      const ids = sources.map((s) => s.id)
      const [stats, crawl] = await Promise.all([repo.stats(tenantId, ids), repo.crawlProgress(tenantId, ids)])
      return sources.map((s) => presentSource(s, stats.get(s.id), crawl.get(s.id) ?? null))
    },

    uploadedDocuments: (tenantId: string) => repo.uploadedDocuments(tenantId),

    async detail(tenantId: string, sourceId: string) {
      // One snapshot: a crawl finishing between the reads must not show a finished run beside a stale source.
      const { s, stats, crawl, runs, pages } = await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const s = await repo.findSource(tenantId, sourceId, trx)
          if (!s) throw notFound('URL source not found')
          return {
            s,
            stats: await repo.stats(tenantId, [s.id], trx),
            crawl: await repo.crawlProgress(tenantId, [s.id], trx),
            runs: await repo.recentRuns(tenantId, s.id, RECENT_RUNS, trx),
            pages: await repo.pageDocuments(tenantId, s.id, trx),
          }
        })
      return {
        ...presentSource(s, stats.get(s.id), crawl.get(s.id) ?? null),
        recent_runs: runs.map(presentRun),
        pages: pages.map((p) => ({
          id: p.id,
          title: p.title,
          url: p.source_url ?? p.filename,
          status: p.status,
          chunk_count: p.chunk_count,
          updated_at: isoReq(p.updated_at),
        })),
      }
    },

    async update(tenantId: string, sourceId: string, input: Static<typeof UrlSourceUpdate>) {
      const updated = await db.transaction().execute(async (trx) => {
        const s = await repo.lockSource(tenantId, sourceId, trx)
        if (!s) throw notFound('URL source not found')
        const now = clock.now()
        const patch: Updateable<UrlSourcesTable> = { updated_at: now }
        if (input.name != null) patch.name = input.name.trim() || s.name
        const patterns = input.exclusion_patterns ?? input.exclusions
        if (patterns != null) patch.exclusion_patterns = JSON.stringify(cleanPatterns(patterns, input.exclusion_patterns ? 'exclusion_patterns' : 'exclusions'))
        if (input.max_pages != null) patch.max_pages = input.max_pages
        const schedule = input.schedule ?? s.schedule
        const paused = input.paused ?? s.paused
        if (input.schedule === 'hourly' && s.kind === 'url')
          throw new ValidationError(['body', 'schedule'], 'hourly is for connectors; a website is crawled daily, weekly or by hand')
        if (input.schedule === 'weekly' && s.kind !== 'url') throw new ValidationError(['body', 'schedule'], 'a connector syncs hourly, daily or by hand')
        if (input.schedule != null) patch.schedule = input.schedule
        if (input.paused != null) patch.paused = input.paused
        if (input.schedule != null || input.paused != null) {
          // The next crawl counts from the last one (or from now when there was none).
          patch.next_crawl_at = paused ? null : nextCrawlAt(schedule, s.last_crawled_at ?? now)
        }
        return (await repo.updateSource(tenantId, sourceId, patch, trx))!
      })
      return present(tenantId, updated)
    },

    async remove(tenantId: string, sourceId: string): Promise<void> {
      // Pages (documents), their chunks, runs and the frontier all go by cascade; a crawl in flight notices.
      const r = await repo.deleteSource(tenantId, sourceId)
      if (!r.numDeletedRows) throw notFound('URL source not found')
    },

    async refresh(tenantId: string, sourceId: string) {
      const updated = await db.transaction().execute(async (trx) => {
        const s = await repo.lockSource(tenantId, sourceId, trx)
        if (!s) throw notFound('URL source not found')
        if (s.paused) throw conflict('This source is paused; resume it before refreshing', 'source_paused')
        const now = clock.now()
        if (s.kind !== 'url') {
          // a connector syncs on demand: the vendor's own rate limits pace it, not the hourly rule of crawls
          if (await repo.activeRun(tenantId, sourceId, trx))
            throw new AppError(409, 'sync_running', 'A sync of this source is running; refresh when it has finished', { coded: true })
          return queueCrawl(trx, s, 'manual', { refresh_requested_at: now, error_message: null })
        }
        const last = s.refresh_requested_at
        if (last && now.getTime() - last.getTime() < REFRESH_INTERVAL_MS) {
          const availableAt = new Date(last.getTime() + REFRESH_INTERVAL_MS)
          const seconds = Math.ceil((availableAt.getTime() - now.getTime()) / 1000)
          throw new AppError(429, 'refresh_too_soon', `Refresh available in ${minutesUntil(now, availableAt)} min.`, {
            headers: { 'Retry-After': String(seconds) },
          })
        }
        return queueCrawl(trx, s, 'manual', { refresh_requested_at: now, error_message: null })
      })
      return present(tenantId, updated)
    },

    /** For the scheduler: enqueues the crawls whose time has come, moving each next_crawl_at forward. */
    async enqueueDue(limit = 100): Promise<number> {
      const now = clock.now()
      let n = 0
      for (const d of await repo.dueSources(now, limit)) {
        await db.transaction().execute(async (trx) => {
          const s = await repo.lockSource(d.tenant_id, d.id, trx)
          if (!s || s.paused || !s.next_crawl_at || s.next_crawl_at > now) return
          await queueCrawl(trx, s, 'scheduled', { next_crawl_at: nextCrawlAt(s.schedule, now) })
          n++
        })
      }
      return n
    },

    /** Closes runs whose job is gone for good (retries exhausted), so no source shows "indexing" forever. */
    async closeOrphanRuns(): Promise<number> {
      const orphans = await repo.orphanRuns()
      for (const r of orphans) {
        await db.transaction().execute(async (trx) => {
          const s = await repo.lockSource(r.tenant_id, r.source_id, trx)
          if (!s) return
          const now = clock.now()
          const message = 'The crawl stopped unexpectedly and was abandoned; refresh to try again.'
          await repo.updateRun(
            r.tenant_id,
            r.id,
            { status: 'failed', finished_at: now, error_message: message, failed_urls: JSON.stringify(await repo.failures(r.id, 500, trx)) },
            trx,
          )
          await repo.clearQueue(r.id, trx)
          await repo.updateSource(r.tenant_id, r.source_id, { status: 'error', error_message: message, updated_at: now }, trx)
        })
      }
      return orphans.length
    },

    async removePage(tenantId: string, sourceId: string, documentId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const s = await repo.lockSource(tenantId, sourceId, trx)
        if (!s) throw notFound('URL source not found')
        const page = await repo.findPageDocument(tenantId, sourceId, documentId, trx)
        if (!page) throw notFound('Page not found')
        await repo.deleteDocuments(tenantId, [documentId], trx)
        if (page.source_url) await repo.excludePage(tenantId, sourceId, page.source_url, clock.now(), trx)
      })
    },
  }
}

export type SourcesService = ReturnType<typeof createSourcesService>
