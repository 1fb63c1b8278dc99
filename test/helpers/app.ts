import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import { afterAll, beforeAll, inject } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { closeContext, createContext, type AppContext } from '../../src/context.js'
import type { Worker } from '../../src/jobs/worker.js'
import { FAKE_EMBEDDING_FLOOR, type FakeLlm, startFakeLlm } from '../fakes/fake-llm.js'
import { ManualClock } from '../../src/lib/clock.js'
import { wireModules } from '../../src/modules/index.js'
import { createWorker } from '../../src/runtime.js'
import { FakeSmtp } from '../fakes/smtp.js'
import { Api } from './http.js'
import { adminQuery } from './pg-admin.js'

export interface TestApp {
  url: string
  app: App
  ctx: AppContext
  worker: Worker | null
  clock: ManualClock
  smtp: FakeSmtp
  /** A client with its own visitor IP (X-Forwarded-For), so rate limits of one test do not hit another. */
  api(): Api
  close(): Promise<void>
}

export interface StartOptions {
  env?: Record<string, string | undefined>
  /** Reuse a database location (PGlite directory) to test restarts; default in-memory. */
  pgliteDir?: string
  smtp?: FakeSmtp
  worker?: boolean
  clock?: ManualClock
  /** A logger of the test's own, to assert on log lines. */
  log?: Logger
  /** PostgreSQL runs: reuse this database (another app's `ctx.config.DATABASE_URL`) instead of a fresh clone. */
  databaseUrl?: string
  /** PostgreSQL runs: keep the database at close(), so another app can be started on it. */
  keepDatabase?: boolean
}

/** A fresh database for one app on the suite's PostgreSQL, cloned from the migrated template. */
export async function cloneDatabase(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const server = inject('databaseUrl')
  const template = inject('databaseTemplate')
  if (!server || !template) return null
  const name = `${template.replace(/_tpl$/, '')}_${randomBytes(5).toString('hex')}`
  const admin = (sql: string) => adminQuery(server, sql).then(() => {})
  // Two clones of one template at the same instant can collide ("source database is being accessed").
  for (let attempt = 0; ; attempt++) {
    try {
      await admin(`CREATE DATABASE ${name} TEMPLATE ${template}`)
      break
    } catch (err) {
      if (attempt >= 20) throw err
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100))
    }
  }
  const url = new URL(server)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/**
 * Boots the real app on 127.0.0.1 with a real SMTP server. The database is a fresh clone on the suite's
 * PostgreSQL when DATABASE_URL is set (see global-setup), otherwise an in-memory PGlite of its own; Redis when REDIS_URL
 * is set, under a key prefix of its own.
 */
export async function startApp(opts: StartOptions = {}): Promise<TestApp> {
  const smtp = opts.smtp ?? (await new FakeSmtp().start())
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-test-'))
  const clock = opts.clock ?? new ManualClock()
  const clone = opts.databaseUrl ? null : await cloneDatabase()
  const config = loadConfig(
    {
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      DATABASE_URL: opts.databaseUrl ?? clone?.url,
      REDIS_URL: process.env.REDIS_URL,
      REDIS_PREFIX: `scbt:${randomBytes(6).toString('hex')}:`,
      JWT_SECRET: 'test-jwt-secret-that-is-long-enough-0123456789',
      ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
      SMTP_URL: smtp.url,
      FRONTEND_URL: 'http://app.test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      TRUST_PROXY: 'true',
      WORKER_POLL_MS: '50',
      ...FAKE_EMBEDDING_FLOOR,
      ...opts.env,
    },
    () => {},
  )
  const ctx = await createContext(config, { clock, pgliteDir: opts.pgliteDir ?? 'memory', log: opts.log })
  const modules = wireModules(ctx)
  const app = await buildApp(ctx, modules)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const worker = opts.worker === false ? null : createWorker(ctx, modules)
  await worker?.start()
  const address = app.server.address() as { port: number }
  const url = `http://127.0.0.1:${address.port}`
  return {
    url,
    app,
    ctx,
    worker,
    clock,
    smtp,
    api: () => new Api(url),
    async close() {
      await app.close()
      await worker?.stop(2000)
      await closeContext(ctx)
      if (clone && !opts.keepDatabase) await clone.drop().catch(() => {})
      if (!opts.smtp) await smtp.stop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * A test file's usual set-up: the fake model, and an app that calls it with `env` on top, started before the
 * file's tests (handed to `use`, which keeps them) and closed after them.
 */
export function appWithFakeLlm(env: Record<string, string>, use: (started: { fake: FakeLlm; t: TestApp }) => void): void {
  let fake: FakeLlm | undefined
  let t: TestApp | undefined
  beforeAll(async () => {
    fake = await startFakeLlm()
    t = await startApp({ env: { LLM_BASE_URL: fake.url, ...env } })
    use({ fake, t })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })
}
