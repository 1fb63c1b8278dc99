import type { AuditPort } from '../../shared/audit.port.js'
import type { FastifyPluginAsync } from 'fastify'
import type { AppContext } from '../../../context.js'
import type { Guards } from '../../../http/auth.js'
import type { DocumentsService } from '../documents.service.js'
import { createCrawler } from './crawler/crawl.js'
import type { CrawlerDeps } from './crawler/crawl.types.js'
import { createFetcher, type Fetcher } from './crawler/fetcher.js'
import { sourcesJobs } from './sources.jobs.js'
import { createSourcesRepo } from './sources.repo.js'
import { sourcesRoutes } from './sources.routes.js'
import { createSourcesService } from './sources.service.js'
import { createConnectorTransport, upstream } from './connectors/http.js'
import { createConnectorSync } from './connectors/sync.js'

/** One reply of a vendor's API, read whole (up to 10 MB), within this. */
const CONNECTOR_TIMEOUT_MS = 60_000

/** The crawler's connection pool closes with the app. */
const withFetcherClosed =
  (routes: FastifyPluginAsync<any>, fetcher: Fetcher): FastifyPluginAsync =>
  async (app, opts) => {
    app.addHook('onClose', async () => fetcher.close())
    await routes(app, opts)
  }

export const crawlerUserAgent = (configured: string, publicBaseUrl: string): string =>
  configured || `SupportBotCrawler/0.1${publicBaseUrl ? ` (+${publicBaseUrl})` : ''}`

/** The URL sources module: crawler (one fetcher per process, so host politeness is process-wide), service, routes, jobs. */
export function wireSources(
  ctx: AppContext,
  guards: Guards,
  deps: Pick<CrawlerDeps, 'parseFile' | 'extractHtml' | 'events'> & {
    present: DocumentsService['present']
    audit: AuditPort
    onCrawled?: (tenantId: string) => Promise<void>
  },
) {
  const { db, clock, queue, config } = ctx
  const repo = createSourcesRepo(db)
  const userAgent = crawlerUserAgent(config.CRAWLER_USER_AGENT, config.PUBLIC_BASE_URL)
  const fetcher = createFetcher({
    userAgent,
    allowPrivateNetworks: config.CRAWLER_ALLOW_PRIVATE_NETWORKS,
    timeoutMs: config.CRAWLER_PAGE_TIMEOUT_MS,
    maxBytes: config.CRAWLER_MAX_PAGE_BYTES,
    perHostConcurrency: config.CRAWLER_CONCURRENCY,
    perHostDelayMs: config.CRAWLER_DELAY_MS,
  })
  // Crawl throughput for the metrics: every request the crawler makes, and the bytes it read.
  const countedFetcher: typeof fetcher = {
    gate: fetcher.gate,
    async fetch(url, opts) {
      const r = await fetcher.fetch(url, opts)
      ctx.metrics.crawlFetch(r.kind, r.kind === 'ok' ? r.body.length : 0)
      return r
    },
    close: () => fetcher.close(),
  }
  const crawler = createCrawler({
    db,
    repo,
    fetcher: countedFetcher,
    queue,
    clock,
    log: ctx.log,
    parseFile: deps.parseFile,
    extractHtml: deps.extractHtml,
    events: deps.events,
    settings: {
      userAgent,
      concurrency: config.CRAWLER_CONCURRENCY,
      maxDepth: config.CRAWLER_MAX_DEPTH,
      maxDocumentsPerTenant: config.MAX_DOCUMENTS_PER_TENANT,
    },
  })
  const transport = createConnectorTransport({ allowPrivateNetworks: config.CRAWLER_ALLOW_PRIVATE_NETWORKS, userAgent, timeoutMs: CONNECTOR_TIMEOUT_MS })
  const sync = createConnectorSync({
    db,
    repo,
    queue,
    clock,
    log: ctx.log,
    extractHtml: deps.extractHtml,
    parseFile: deps.parseFile,
    events: deps.events,
    cipher: ctx.cipher,
    upstreamFor: (kind) => (auth) => upstream(kind, transport, auth),
    maxDocumentsPerTenant: config.MAX_DOCUMENTS_PER_TENANT,
  })
  const sources = createSourcesService({
    db,
    clock,
    queue,
    repo,
    defaultMaxPages: config.CRAWLER_DEFAULT_MAX_PAGES,
    connectors: { cipher: ctx.cipher, allowPrivateNetworks: config.CRAWLER_ALLOW_PRIVATE_NETWORKS, preview: sync.preview },
  })
  const routes = withFetcherClosed(sourcesRoutes({ guards, sources, present: deps.present, audit: deps.audit }), fetcher)
  return {
    sources,
    routes: (async (app, opts) => {
      app.addHook('onClose', async () => transport.close())
      await routes(app, opts)
    }) as FastifyPluginAsync,
    jobs: sourcesJobs({
      crawler,
      sync,
      kindOf: async (tenantId, sourceId) => (await repo.findSource(tenantId, sourceId))?.kind ?? null,
      sources,
      onCrawled: deps.onCrawled,
    }),
  }
}
