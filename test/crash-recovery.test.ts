import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { FakeWebsite, html, links, prose } from './fakes/website.js'
import { FakeSmtp } from './fakes/smtp.js'
import { cloneDatabase, startApp, type TestApp } from './helpers/app.js'
import { upload } from './helpers/documents.js'
import { createTenant } from './helpers/factories.js'
import { Api } from './helpers/http.js'

/**
 * kill -9 of the real service (the built server in a child process) in the middle of a crawl and of a
 * large document's indexing, then a restart on the same database. On the embedded database the restart
 * takes the dead jobs back at once; on PostgreSQL another worker takes them over when their short lease
 * lapses (JOB_LEASE_SECONDS, 20 s). Either way every run and document ends final, with no duplicate chunks.
 */
const onPostgres = Boolean(process.env.DATABASE_URL)
const out = join('node_modules', '.cache', `scb-crash-test-${process.pid}`)
const dataDir = mkdtempSync(join(tmpdir(), 'scb-crash-'))
const PAGES = 30
const site = new FakeWebsite()
let smtp: FakeSmtp
let databaseUrl: string | undefined
let dropDatabase: (() => Promise<void>) | undefined
const children: ChildProcess[] = []

beforeAll(async () => {
  execFileSync(process.execPath, ['scripts/build.mjs', '--out', out], { stdio: 'pipe' })
  smtp = await new FakeSmtp().start()
  const paths = Array.from({ length: PAGES }, (_, i) => `/p/${i + 1}`)
  site.set('/', { body: html('Home', prose('Home') + links(paths)) })
  for (const p of paths) site.set(p, { delayMs: 250, body: html(`Page ${p}`, prose(`Subject ${p}`, 8)) })
  await site.start()
  if (onPostgres) {
    const clone = (await cloneDatabase())!
    databaseUrl = clone.url
    dropDatabase = clone.drop
  }
}, 120_000)

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  await site.stop()
  await smtp?.stop()
  await dropDatabase?.().catch(() => {})
  rmSync(out, { recursive: true, force: true })
  rmSync(dataDir, { recursive: true, force: true })
}, 60_000)

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

async function startServer(): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort()
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    SMTP_URL: smtp.url,
    TRUST_PROXY: 'true',
    WORKER_POLL_MS: '100',
    CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true',
    CRAWLER_DELAY_MS: '0',
    CRAWLER_CONCURRENCY: '2',
    JWT_SECRET: 'crash-test-jwt-secret-that-is-long-enough-0123',
    ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: `scbt:crash${process.pid}:` } : {}),
  }
  const child = spawn(process.execPath, [join(out, 'src', 'server.js')], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  children.push(child)
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  const base = `http://127.0.0.1:${port}`
  const started = Date.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${stderr}`)
    if (
      await fetch(`${base}/health`).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return { child, base }
    if (Date.now() - started > 60_000) throw new Error(`not ready after 60 s: ${stderr}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const killHard = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGKILL')
  })

it('after kill -9 mid-crawl and mid-index, every run and document ends final in time, with no duplicate chunks', async () => {
  // a retry after a failed attempt: that attempt's server still holds the data directory
  for (const c of children) if (c.exitCode === null && c.signalCode === null) await killHard(c)
  const first = await startServer()
  const tenant = await createTenant({ api: () => new Api(first.base), smtp } as unknown as TestApp, { llmKey: null })
  const created = await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })
  expect(created.status, created.text).toBe(201)
  const sourceId = created.body.id as string
  for (const deadline = Date.now() + 60_000; ; ) {
    const d = (await tenant.api.get(`/documents/sources/${sourceId}`)).body
    if (d.pages.length >= 5) break
    if (Date.now() > deadline) throw new Error(`crawl did not start: ${JSON.stringify(d).slice(0, 500)}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  // a large manual, so its index job is running at the kill
  const manual = Array.from(
    { length: 4000 },
    (_, i) => `## Section ${i}\n\nThe manual explains setting number ${i} and how it interacts with the others in detail.`,
  ).join('\n\n')
  const big = await upload(tenant.api, 'manual.md', `# Manual\n\n${manual}`)
  expect(big.status, big.text).toBe(201)
  await new Promise((r) => setTimeout(r, 150))
  const before = (await tenant.api.get(`/documents/sources/${sourceId}`)).body
  expect(before.recent_runs[0].status).toBe('running')
  await killHard(first.child)
  const killedAt = Date.now()

  const second = await startServer()
  const readyAt = Date.now()
  const api = new Api(second.base).withToken(tenant.token)
  let detail: any
  let docs: any[] = []
  for (;;) {
    detail = (await api.get(`/documents/sources/${sourceId}`)).body
    docs = (await api.get('/documents')).body.documents
    const final =
      ['ready', 'error'].includes(detail.status) &&
      detail.recent_runs[0].status !== 'running' &&
      detail.pages.every((p: { status: string }) => p.status !== 'processing') &&
      docs.every((d) => d.status !== 'processing')
    if (final) break
    if (Date.now() - killedAt > 90_000) throw new Error(`not final 90 s after the kill: ${JSON.stringify({ detail, docs }).slice(0, 1500)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  const sinceKill = Date.now() - killedAt
  const sinceRestart = Date.now() - readyAt
  console.info(
    `crash recovery (${onPostgres ? 'PostgreSQL' : 'embedded'}): final ${Math.round(sinceRestart)} ms after the restart was serving, ${Math.round(sinceKill)} ms after kill -9`,
  )
  // embedded: taken back at once (the time is the remaining crawl and indexing); PostgreSQL: lease of 20 s plus that work
  expect(sinceRestart).toBeLessThan(onPostgres ? 45_000 : 25_000)
  expect(detail.recent_runs).toHaveLength(1)
  // the run's failed URLs (with why) in the message when a page is missing
  expect(detail.recent_runs[0], JSON.stringify(detail.recent_runs[0].failed_urls ?? detail.recent_runs[0]).slice(0, 1500)).toMatchObject({
    status: 'completed',
    pages_found: PAGES + 1,
    pages_indexed: PAGES + 1,
  })
  expect(docs.find((d) => d.id === big.body.id)).toMatchObject({ status: 'ready' })
  expect(docs.every((d) => d.status === 'ready')).toBe(true)

  await new Promise<void>((resolve) => {
    second.child.once('exit', () => resolve())
    second.child.kill('SIGTERM')
  })
  const check = await startApp({ pgliteDir: join(dataDir, 'pgdata'), databaseUrl, keepDatabase: true, worker: false })
  try {
    const dupes = await sql<{
      n: number
    }>`SELECT count(*)::int AS n FROM (SELECT document_id, ordinal FROM chunks GROUP BY 1, 2 HAVING count(*) > 1) d`.execute(check.ctx.db)
    expect(dupes.rows[0]!.n).toBe(0)
    const mismatched = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM documents d
      WHERE d.chunk_count <> (SELECT count(*) FROM chunks c WHERE c.document_id = d.id)`.execute(check.ctx.db)
    expect(mismatched.rows[0]!.n).toBe(0)
    const pages = await sql<{ n: number; urls: number }>`
      SELECT count(*)::int AS n, count(DISTINCT source_url)::int AS urls FROM documents WHERE source_id = ${sourceId}`.execute(check.ctx.db)
    expect(pages.rows[0]).toEqual({ n: PAGES + 1, urls: PAGES + 1 })
    const running = await check.ctx.db.selectFrom('jobs').select('kind').where('status', '=', 'running').execute()
    expect(running).toEqual([])
  } finally {
    await check.close()
  }
}, 240_000)
