import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { Api } from './helpers/http.js'
import { pageDocuments, waitForCrawl } from './helpers/sources.js'
import { FakeWebsite, html, links, prose } from './fakes/website.js'

const PAGES = 40
const env = { CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', CRAWLER_DELAY_MS: '0', CRAWLER_CONCURRENCY: '2' }
const pgliteDir = mkdtempSync(join(tmpdir(), 'scb-crawl-restart-'))
const site = new FakeWebsite()
let apps: TestApp[] = []

afterAll(async () => {
  for (const a of apps) await a.close().catch(() => {})
  await site.stop()
  rmSync(pgliteDir, { recursive: true, force: true })
}, 90_000)

it('a crawl killed half way resumes after a restart with every page exactly once', async () => {
  const paths = Array.from({ length: PAGES }, (_, i) => `/p/${i + 1}`)
  site.set('/', { body: html('Home', prose('Home') + links(paths)) })
  for (const p of paths) site.set(p, { delayMs: 60, body: html(`Page ${p}`, prose(`Subject ${p}`)) })
  await site.start()

  // Same PGlite directory across both apps (with DATABASE_URL set, the same PostgreSQL database).
  const first = await startApp({ pgliteDir, env, keepDatabase: true })
  apps.push(first)
  const tenant = await createTenant(first)
  const created = await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })
  const sourceId = created.body.id
  const deadline = Date.now() + 20_000
  while ((await pageDocuments(first, sourceId)).length < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  const storedBeforeKill = (await pageDocuments(first, sourceId)).length
  expect(storedBeforeKill).toBeGreaterThanOrEqual(10)
  expect(storedBeforeKill).toBeLessThan(PAGES + 1)

  // The kill: the worker gets no grace, the process goes away mid-crawl.
  await first.worker!.stop(1)
  await first.close()
  apps = []
  const requestsBeforeRestart = site.requests.length

  const second = await startApp({ pgliteDir, env, databaseUrl: first.ctx.config.DATABASE_URL })
  apps.push(second)
  const api = new Api(second.url).withToken(tenant.token)
  const detail = await waitForCrawl({ ...tenant, api }, sourceId, { timeoutMs: 30_000 })

  expect(detail.recent_runs).toHaveLength(1)
  expect(detail.recent_runs[0]).toMatchObject({ status: 'completed', pages_found: PAGES + 1, pages_indexed: PAGES + 1 })
  const docs = await pageDocuments(second, sourceId)
  const urls = docs.map((d) => d.source_url!.replace(site.url, ''))
  expect(urls.sort()).toEqual(['/', ...paths].sort())
  expect(new Set(docs.map((d) => d.id)).size).toBe(PAGES + 1)

  // Pages stored before the kill were not fetched again; only the ones in flight at the kill were.
  const pageFetches = site.fetched().filter((p) => p.startsWith('/p/'))
  const refetched = pageFetches.length - new Set(pageFetches).size
  expect(refetched).toBeLessThanOrEqual(Number(env.CRAWLER_CONCURRENCY))
  expect(site.requests.length).toBeGreaterThan(requestsBeforeRestart)
}, 90_000)
