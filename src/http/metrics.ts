import { timingSafeEqual, createHash } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { clusterMetricsText, isClusterChild } from '../cluster.js'
import type { AppContext } from '../context.js'

/**
 * `GET /metrics` (Prometheus text format). Off unless configured, because it tells anyone who can read it
 * the service's traffic and tenants' activity in aggregate:
 * - METRICS_TOKEN: served on the main port to `Authorization: Bearer <METRICS_TOKEN>` only;
 * - METRICS_PORT: served on a port of its own (HOST), for a scraper on a private network; it asks for the
 *   same bearer token when METRICS_TOKEN is set too.
 * Request timings are recorded in any case (one histogram observation per request), keyed by the route
 * pattern, never the raw URL: ids would make a series per resource. With several processes (src/cluster.ts)
 * any of them answers with the figures of all, the job worker's included.
 */
export function registerMetrics(app: FastifyInstance, ctx: AppContext): void {
  const { metrics, config } = ctx
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched'
    if (route === '/metrics') return
    metrics.observeHttp(req.method, route, reply.statusCode, reply.elapsedTime / 1000)
  })

  if (!config.METRICS_TOKEN && !config.METRICS_PORT) return
  metrics.enableProcessMetrics()
  // Queue depth is read from the database at scrape time: the queue is shared by every worker process.
  metrics.gauge('scb_jobs_queued', 'Jobs waiting or running, by kind and status', ['kind', 'status'], async (set) => {
    const rows = await ctx.db
      .selectFrom('jobs')
      .select(['kind', 'status', (eb) => eb.fn.countAll<string>().as('n')])
      .where('status', 'in', ['queued', 'running'])
      .groupBy(['kind', 'status'])
      .execute()
    for (const r of rows) set({ kind: r.kind, status: r.status }, Number(r.n))
  })

  // one HTTP process of several (WEB_CONCURRENCY) answers for them all: a scrape reaches any of them
  const text = () => (isClusterChild() ? clusterMetricsText() : metrics.registry.metrics())
  const expected = config.METRICS_TOKEN ? createHash('sha256').update(`Bearer ${config.METRICS_TOKEN}`).digest() : null
  const authorized = (header: string | undefined) =>
    !expected || (header !== undefined && timingSafeEqual(createHash('sha256').update(header).digest(), expected))

  if (config.METRICS_TOKEN) {
    app.get('/metrics', { logLevel: 'warn', schema: { hide: true } }, async (req, reply) => {
      if (!authorized(req.headers.authorization)) return reply.code(401).header('www-authenticate', 'Bearer').send({ detail: 'Not authenticated' })
      return reply.type(metrics.registry.contentType).send(await text())
    })
  }

  if (config.METRICS_PORT) {
    let server: Server | null = null
    app.addHook('onListen', async () => {
      server = createServer((req, res) => {
        if ((req.url ?? '').split('?')[0] !== '/metrics' || req.method !== 'GET') return res.writeHead(404).end()
        if (!authorized(req.headers.authorization)) return res.writeHead(401, { 'www-authenticate': 'Bearer' }).end()
        text().then(
          (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
          () => res.writeHead(500).end(),
        )
      })
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject)
        server!.listen(config.METRICS_PORT, config.HOST, () => resolve())
      })
      ctx.log.info({ port: (server.address() as { port: number }).port }, 'metrics served on their own port')
    })
    app.addHook('onClose', async () => {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
    })
  }
}
