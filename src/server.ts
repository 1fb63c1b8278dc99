import 'dotenv/config'
import { buildApp, warmRouteSchemas } from './app.js'
import { isClusterChild, shareMetrics, superviseCluster, webConcurrency } from './cluster.js'
import { ConfigError, loadConfig } from './config.js'
import { closeContext, createContext, createLogger } from './context.js'
import { startInboundSmtp } from './modules/email-channel/email-channel.smtp.js'
import { preloadDetector } from './modules/shared/language-detect.js'
import { wireModules } from './modules/index.js'
import { createWorker } from './runtime.js'

/**
 * The process: config, database, HTTP, the in-process worker, and a graceful shutdown in that order reversed.
 * With several HTTP processes (WEB_CONCURRENCY on PostgreSQL) this one supervises them (src/cluster.ts) and
 * each of them runs this same function without a worker: the supervisor runs the jobs in a process of their own.
 */
async function main(): Promise<void> {
  const started = performance.now()
  let config
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message)
      process.exit(1)
    }
    throw err
  }
  const processes = webConcurrency(config)
  if (processes > 1 && !isClusterChild()) return superviseCluster(config, processes, createLogger(config))
  const ctx = await createContext(config)
  const modules = wireModules(ctx)
  shareMetrics(ctx.metrics.registry)
  const app = await buildApp(ctx, modules)
  const worker = config.RUN_WORKER && !isClusterChild() ? createWorker(ctx, modules) : null

  let smtp: Awaited<ReturnType<typeof startInboundSmtp>> | null = null
  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    ctx.log.info({ signal }, 'shutting down')
    const force = setTimeout(() => process.exit(1), 20_000).unref()
    await app.close().catch(() => {})
    await smtp?.close().catch(() => {})
    await worker?.stop().catch(() => {})
    await closeContext(ctx).catch(() => {})
    clearTimeout(force)
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))

  await app.listen({ port: config.PORT, host: config.HOST })
  // inbound mail for the bots' addresses, when a port is set (src/modules/email-channel)
  if (config.INBOUND_SMTP_PORT !== undefined) {
    smtp = await startInboundSmtp(modules.emailChannel, {
      port: config.INBOUND_SMTP_PORT,
      host: config.HOST,
      maxBytes: config.INBOUND_EMAIL_MAX_BYTES,
      tlsCert: config.INBOUND_SMTP_TLS_CERT,
      tlsKey: config.INBOUND_SMTP_TLS_KEY,
      log: ctx.log,
    })
  }
  await worker?.start()
  ctx.log.info(
    {
      database: ctx.database.kind,
      vector: ctx.database.features.vector,
      redis: Boolean(ctx.redis),
      worker: Boolean(worker),
      pid: process.pid,
      startupMs: Math.round(performance.now() - started),
    },
    'service ready',
  )
  warmRouteSchemas(app, () => stopping)
  // the language detector's database, so the first visitor's turn does not wait for it
  preloadDetector()
}

main().catch((err) => {
  console.error('failed to start:', err instanceof Error ? err.message : err)
  process.exit(1)
})
