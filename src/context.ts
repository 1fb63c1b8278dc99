import { join } from 'node:path'
import { Redis } from 'ioredis'
import pino, { type Logger } from 'pino'
import type { Config } from './config.js'
import { observeCaches } from './db/change-feed.js'
import { defaultPgliteDir, openDatabase, type DatabaseHandle, type Db } from './db/client.js'
import { JobQueue } from './jobs/queue.js'
import { systemClock, type Clock } from './lib/clock.js'
import { createCipher, type Cipher } from './lib/crypto.js'
import { createMetrics, type Metrics } from './lib/metrics.js'
import { createOutboxMailer, createSmtpMailer, type Mailer } from './modules/mailer/mailer.transport.js'
import type { LlmClient } from './modules/llm/llm.js'
import { createOpenAiClient } from './modules/llm/openai-client.js'
import { createProviderMonitor, type ProviderMonitor } from './modules/llm/provider-status.js'
import { createQuirkMemory } from './modules/llm/quirks.js'
import { checkKeyFingerprint } from './lib/key-fingerprint.js'
import { backfillEmailHashes } from './modules/escalations/email-hash.backfill.js'

/**
 * Everything a module may be wired with. Built once per process (server, worker, test); modules pick what
 * they use, so each service's dependencies are visible in its factory signature.
 */
export interface AppContext {
  config: Config
  log: Logger
  database: DatabaseHandle
  db: Db
  redis: Redis | null
  clock: Clock
  cipher: Cipher
  queue: JobQueue
  mailer: Mailer
  llm: LlmClient
  /** Reachability of LLM_BASE_URL as the calls through `llm` see it (logged, and shown at GET /llm/status). */
  llmStatus: ProviderMonitor
  /** Prometheus metrics of this process (recorded always, exposed only when configured: http/metrics.ts). */
  metrics: Metrics
}

export interface ContextOverrides {
  clock?: Clock
  mailer?: Mailer
  llm?: LlmClient
  log?: Logger
  /** PGlite location when DATABASE_URL is unset; tests use 'memory'. */
  pgliteDir?: string | 'memory'
}

export function createLogger(config: Config): Logger {
  return pino({
    level: config.LOG_LEVEL,
    // Credentials never reach a log line, whatever a handler decides to log.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-api-key"]',
        'res.headers["set-cookie"]',
        '*.password',
        '*.new_password',
        '*.token',
        '*.llm_api_key',
        '*.secret_key',
        '*.api_key',
      ],
      censor: '[redacted]',
    },
  })
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const log = overrides.log ?? createLogger(config)
  const database = await openDatabase({
    url: config.DATABASE_URL,
    pgliteDir: overrides.pgliteDir ?? defaultPgliteDir(config.dataDir),
    poolSize: config.DATABASE_POOL_SIZE,
    poolIdleSeconds: config.DATABASE_POOL_IDLE_SECONDS,
    prepared: config.DATABASE_PREPARED_STATEMENTS,
  })
  const redis = config.REDIS_URL ? createRedis(config.REDIS_URL, log) : null
  const clock = overrides.clock ?? systemClock
  const cipher = createCipher(config.ENCRYPTION_KEY)
  // another instance's key on this database: refused in production, said loudly elsewhere (issue 37)
  await checkKeyFingerprint(database.db, config.ENCRYPTION_KEY, { isProduction: config.isProduction, log })
  // addresses stored before their search hash existed (1665_email_search), hashed with this key
  const hashed = await backfillEmailHashes(database.db, cipher)
  if (hashed.tickets + hashed.sessions > 0) log.info(hashed, 'visitor e-mail search hashes filled in')
  const mailer =
    overrides.mailer ??
    (config.SMTP_URL
      ? createSmtpMailer(config.SMTP_URL, config.EMAIL_FROM)
      : createOutboxMailer(join(config.dataDir, 'outbox'), config.EMAIL_FROM, log, !config.isProduction))
  // what the server refuses, learned by the client and shown by the monitor (quirks.ts)
  const llmStatus = createProviderMonitor(config.LLM_BASE_URL, log, clock, createQuirkMemory())
  const metrics = createMetrics()
  observeCaches(database.changes, (topic, result) => metrics.cacheLookup(topic, result))
  return {
    config,
    log,
    database,
    db: database.db,
    redis,
    clock,
    cipher,
    queue: new JobQueue(database.db, clock, database.changes),
    mailer,
    llm: llmStatus.wrap(metrics.wrapLlm(overrides.llm ?? createOpenAiClient(config.LLM_BASE_URL, llmStatus.quirks))),
    llmStatus,
    metrics,
  }
}

function createRedis(url: string, log: Logger): Redis {
  const redis = new Redis(url, {
    // Fail fast instead of queueing commands while Redis is away; callers fall back or report degraded.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 5000),
  })
  let warned = false
  redis.on('error', (err) => {
    if (!warned) log.warn({ err: { message: err.message } }, 'redis unavailable')
    warned = true
  })
  redis.on('ready', () => {
    warned = false
  })
  return redis
}

/** Closes in dependency order: Redis, mail transport, database. */
export async function closeContext(ctx: AppContext): Promise<void> {
  if (ctx.redis) {
    ctx.redis.disconnect()
  }
  ctx.mailer.close()
  await ctx.database.close()
}
