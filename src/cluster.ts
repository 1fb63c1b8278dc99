import cluster, { type Worker as ClusterWorker } from 'node:cluster'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import type { Logger } from 'pino'
import { AggregatorRegistry, type Registry } from 'prom-client'
import type { Config } from './config.js'

/**
 * Several cores (`npm start` on PostgreSQL): this process becomes a small supervisor that serves nothing
 * itself. It forks WEB_CONCURRENCY HTTP processes, which share the port (node:cluster hands each new
 * connection to the next one), and, when RUN_WORKER is on, one job worker process (src/worker.ts), so the
 * jobs run once beside the HTTP processes instead of inside each. A process that dies is started again
 * (after a pause that grows while it keeps dying young); SIGTERM or SIGINT stops them all gracefully.
 *
 * What the processes share lives outside them: rows in PostgreSQL, rate-limit counters and idempotency
 * claims in Redis, and the in-process caches are kept coherent by the change feed (LISTEN/NOTIFY), as
 * between any two instances. The embedded database has one owner, so there it is always one process.
 */

export type ProcessRole = 'http' | 'jobs'

/** HTTP processes `npm start` runs: 1 on the embedded database, else WEB_CONCURRENCY or one per core. */
export function webConcurrency(config: Pick<Config, 'DATABASE_URL' | 'WEB_CONCURRENCY'>, cores = availableParallelism()): number {
  if (!config.DATABASE_URL) return 1
  return config.WEB_CONCURRENCY ?? Math.max(1, cores)
}

/** Pause before starting a dead process again: none after a long life, doubling while it dies within 10 s of its start. */
export function restartDelayMs(youngDeaths: number): number {
  return youngDeaths <= 0 ? 0 : Math.min(30_000, 500 * 2 ** (youngDeaths - 1))
}

const YOUNG_MS = 10_000
const STOP_TIMEOUT_MS = 25_000

interface Slot {
  role: ProcessRole
  index: number
  worker: ClusterWorker | null
  startedAt: number
  youngDeaths: number
}

export function superviseCluster(config: Config, httpProcesses: number, log: Logger): void {
  const here = fileURLToPath(import.meta.url)
  const entries: Record<ProcessRole, string> = {
    http: here.replace(/cluster\.(ts|js)$/, 'server.$1'),
    jobs: here.replace(/cluster\.(ts|js)$/, 'worker.$1'),
  }
  const slots: Slot[] = Array.from({ length: httpProcesses }, (_, index) => ({ role: 'http' as const, index, worker: null, startedAt: 0, youngDeaths: 0 }))
  if (config.RUN_WORKER) slots.push({ role: 'jobs', index: 0, worker: null, startedAt: 0, youngDeaths: 0 })
  let stopping = false

  const start = (slot: Slot) => {
    if (stopping) return
    cluster.setupPrimary({ exec: entries[slot.role] })
    const w = cluster.fork()
    slot.worker = w
    slot.startedAt = Date.now()
    log.info({ role: slot.role, slot: slot.index, pid: w.process.pid }, 'process started')
    w.once('exit', (code, signal) => {
      slot.worker = null
      if (stopping) return
      const lived = Date.now() - slot.startedAt
      slot.youngDeaths = lived < YOUNG_MS ? slot.youngDeaths + 1 : 0
      const delay = restartDelayMs(slot.youngDeaths)
      log.error({ role: slot.role, slot: slot.index, pid: w.process.pid, code, signal, restartInMs: delay }, 'process died, starting it again')
      setTimeout(() => start(slot), delay).unref()
    })
  }

  const shutdown = (signal: string) => {
    if (stopping) return
    stopping = true
    const running = slots.map((s) => s.worker).filter((w): w is ClusterWorker => w !== null && !w.isDead())
    log.info({ signal, processes: running.length }, 'shutting down')
    const force = setTimeout(() => {
      for (const w of running) if (!w.isDead()) w.process.kill('SIGKILL')
      process.exit(1)
    }, STOP_TIMEOUT_MS).unref()
    let clean = true
    let left = running.length
    const done = () => {
      clearTimeout(force)
      process.exit(clean ? 0 : 1)
    }
    if (left === 0) return done()
    for (const w of running) {
      w.once('exit', (code) => {
        if (code !== 0) clean = false
        if (--left === 0) done()
      })
      // each process stops as it does alone: HTTP closes (in-flight requests finish), the worker finishes its jobs
      w.process.kill('SIGTERM')
    }
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))

  // GET /metrics in any HTTP process answers for all of them: it asks here, and this asks every process
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (w, msg: { type?: string; id?: number }) => {
    if (msg?.type !== METRICS_MESSAGE) return
    aggregator.clusterMetrics().then(
      (text) => w.isConnected() && w.send({ type: METRICS_MESSAGE, id: msg.id, text }),
      () => w.isConnected() && w.send({ type: METRICS_MESSAGE, id: msg.id, text: null }),
    )
  })

  log.info({ http: httpProcesses, jobs: config.RUN_WORKER, pid: process.pid }, 'cluster starting')
  if (!config.REDIS_URL)
    log.warn({ http: httpProcesses }, 'no REDIS_URL: each HTTP process counts rate limits on its own, so a client gets that many times the limit')
  for (const slot of slots) start(slot)
}

export const isClusterChild = (): boolean => cluster.isWorker

const METRICS_MESSAGE = 'scb:metrics'

/**
 * In a process of the cluster: the registry the supervisor's aggregate collects from this process (constructing
 * an AggregatorRegistry is what makes prom-client answer the supervisor's requests). A process still starting
 * does not answer yet, so a scrape then fails (500) rather than give partial figures.
 */
export function shareMetrics(registry: Registry): void {
  if (!cluster.isWorker) return
  new AggregatorRegistry()
  AggregatorRegistry.setRegistries([registry])
}

let asked = 0
/** The metrics text of every process of the cluster (labels equal, counters and histograms summed), via the supervisor. */
export function clusterMetricsText(timeoutMs = 8000): Promise<string> {
  const id = ++asked
  return new Promise((resolve, reject) => {
    const onMessage = (msg: { type?: string; id?: number; text?: string | null }) => {
      if (msg?.type !== METRICS_MESSAGE || msg.id !== id) return
      done()
      if (typeof msg.text === 'string') resolve(msg.text)
      else reject(new Error('cluster metrics unavailable'))
    }
    const timer = setTimeout(() => {
      done()
      reject(new Error('cluster metrics timed out'))
    }, timeoutMs)
    const done = () => {
      clearTimeout(timer)
      process.off('message', onMessage)
    }
    process.on('message', onMessage)
    process.send!({ type: METRICS_MESSAGE, id })
  })
}
