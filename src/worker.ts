import 'dotenv/config'
import { shareMetrics } from './cluster.js'
import { loadConfig } from './config.js'
import { closeContext, createContext } from './context.js'
import { wireModules } from './modules/index.js'
import { createWorker } from './runtime.js'

/** `npm run worker`: the job worker alone, for running it apart from the HTTP servers. */
async function main(): Promise<void> {
  const config = loadConfig()
  const ctx = await createContext(config)
  shareMetrics(ctx.metrics.registry)
  const worker = createWorker(ctx, wireModules(ctx))
  const shutdown = async () => {
    await worker.stop()
    await closeContext(ctx)
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown())
  process.on('SIGINT', () => void shutdown())
  await worker.start()
  ctx.log.info({ database: ctx.database.kind, worker: worker.id }, 'worker ready')
}

main().catch((err) => {
  console.error('worker failed to start:', err instanceof Error ? err.message : err)
  process.exit(1)
})
