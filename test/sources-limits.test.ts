import { monitorEventLoopDelay } from 'node:perf_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { extractHtml } from '../src/modules/documents/parsers/html-extract.js'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { pageDocuments, waitForCrawl } from './helpers/sources.js'
import { FakeWebsite, html, links, prose } from './fakes/website.js'

const sites: FakeWebsite[] = []
afterAll(async () => {
  await Promise.all(sites.map((s) => s.stop()))
})

/** A small site: a home page linking to `n` pages. */
async function smallSite(n: number, host = '127.0.0.1'): Promise<FakeWebsite> {
  const paths = Array.from({ length: n }, (_, i) => `/page/${i + 1}`)
  const site = new FakeWebsite().set('/', { body: html('Home', prose('Home') + links(paths)) })
  for (const p of paths) site.set(p, { body: html(`Page ${p}`, prose(`Topic ${p}`)) })
  await site.start(host)
  sites.push(site)
  return site
}

describe('SSRF protection (private networks not allowed)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startApp({ env: { CRAWLER_ALLOW_PRIVATE_NETWORKS: 'false', CRAWLER_DELAY_MS: '0' } })
  })
  afterAll(() => t?.close())

  it('refuses loopback, private, link-local and names resolving to them, records why, fetches nothing', async () => {
    const tenant = await createTenant(t)
    const site = await smallSite(2)
    let v6: FakeWebsite | null = null
    try {
      v6 = await smallSite(1, '::1')
    } catch {
      v6 = null // no IPv6 loopback here; the literal is refused before any connection anyway
    }
    const cases: [string, RegExp][] = [
      [`${site.url}/`, /^blocked: 127\.0\.0\.1 is a loopback address$/],
      [`http://localhost:${site.url.split(':').pop()}/`, /^blocked: (127\.0\.0\.1|::1) is a loopback address$/],
      [v6 ? `${v6.url}/` : 'http://[::1]:9/', /^blocked: ::1 is a loopback address$/],
      ['http://10.1.2.3/', /^blocked: 10\.1\.2\.3 is a private address$/],
      ['http://169.254.169.254/latest/meta-data/', /^blocked: 169\.254\.169\.254 is a linkLocal address$/],
      ['http://[::ffff:127.0.0.1]/', /^blocked: 127\.0\.0\.1 is a loopback address$/],
    ]
    for (const [url, reason] of cases) {
      const created = await tenant.api.post('/documents/sources/url', { url, schedule: 'manual' })
      expect(created.status, url).toBe(201)
      const detail = await waitForCrawl(tenant, created.body.id)
      expect(detail.status, url).toBe('error')
      expect(detail.pages).toEqual([])
      const run = detail.recent_runs[0]
      expect(run.status).toBe('failed')
      expect(run.failed_urls).toHaveLength(1)
      expect(run.failed_urls[0].reason, url).toMatch(reason)
      expect(detail.error_message).toBe(`No page could be crawled: ${run.failed_urls[0].reason}`)
    }
    expect(site.requests).toEqual([])
    expect(v6?.requests ?? []).toEqual([])
  })
})

describe('capacity, schedules and abandoned runs', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startApp({ env: { CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', CRAWLER_DELAY_MS: '0', MAX_DOCUMENTS_PER_TENANT: '5' } })
  })
  afterAll(() => t?.close())

  it('counts pages against the account document limit, with a warning, and uploads see them', async () => {
    const tenant = await createTenant(t)
    const site = await smallSite(8)
    const created = await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })
    const detail = await waitForCrawl(tenant, created.body.id)
    expect(detail.pages).toHaveLength(5)
    expect(detail.warning_message).toBe("The account's limit of 5 documents was reached; some pages were not added.")
    expect(detail.recent_runs[0].failed_urls.filter((f: { reason: string }) => /document limit of 5/.test(f.reason)).length).toBeGreaterThan(0)
    const form = new FormData()
    form.append('file', new Blob(['# Notes\n\nSomething to know.']), 'notes.md')
    const upload = await tenant.api.post('/documents', form)
    expect(upload.status).toBe(400)
  })

  it('crawls daily sources again when due (scheduler job), leaves weekly ones alone', async () => {
    const tenant = await createTenant(t)
    const daily = await smallSite(1)
    const weekly = await smallSite(1)
    const d = (await tenant.api.post('/documents/sources/url', { url: daily.url, schedule: 'daily' })).body
    const w = (await tenant.api.post('/documents/sources/url', { url: weekly.url, schedule: 'weekly' })).body
    const first = await waitForCrawl(tenant, d.id)
    await waitForCrawl(tenant, w.id)
    expect(Date.parse(first.next_crawl_at) - Date.parse(first.last_crawled_at)).toBe(86_400_000)

    t.clock.advance(86_400_000 + 120_000)
    // a day later the dashboard token has expired: log in again
    tenant.api.withToken((await tenant.api.post('/auth/login', { email: tenant.email, password: tenant.password })).body.token)
    const second = await waitForCrawl(tenant, d.id, { runs: 2 })
    expect(second.recent_runs[0]).toMatchObject({ trigger: 'scheduled', status: 'completed', pages_unchanged: 2, pages_indexed: 0 })
    expect(Date.parse(second.next_crawl_at)).toBeGreaterThan(Date.parse(first.next_crawl_at))
    const weeklyNow = (await tenant.api.get(`/documents/sources/${w.id}`)).body
    expect(weeklyNow.recent_runs).toHaveLength(1)
  })

  it('closes a run whose crawl job is gone, so the source does not stay "indexing"', async () => {
    const tenant = await createTenant(t)
    const site = await smallSite(1)
    const s = (await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })).body
    await waitForCrawl(tenant, s.id)
    // a run left behind by a job that exhausted its retries
    await t.ctx.db
      .insertInto('crawl_runs')
      .values({
        tenant_id: tenant.tenantId,
        source_id: s.id,
        trigger: 'manual',
        site: '127.0.0.1',
        failed_urls: '[]',
        error_message: null,
        created_at: t.clock.now(),
        finished_at: null,
      })
      .execute()
    await t.ctx.db.updateTable('url_sources').set({ status: 'indexing' }).where('id', '=', s.id).execute()
    t.clock.advance(61_000)
    const deadline = Date.now() + 10_000
    let detail: any
    do {
      await new Promise((r) => setTimeout(r, 50))
      detail = (await tenant.api.get(`/documents/sources/${s.id}`)).body
    } while (detail.status !== 'error' && Date.now() < deadline)
    expect(detail.status).toBe('error')
    expect(detail.recent_runs[0]).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/stopped unexpectedly/) })
    expect((await pageDocuments(t, s.id)).length).toBe(2)
  })
})

describe('a large page', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startApp({ env: { CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', CRAWLER_DELAY_MS: '0' } })
  })
  afterAll(() => t?.close())

  it('is extracted off the event loop (parser threads): no stall while a 1.5 MB page is read', async () => {
    const tenant = await createTenant(t)
    let body = ''
    for (let i = 0; body.length < 1_500_000; i++)
      body += `<div><h2>Section ${i}</h2><p>Paragraph ${i} about <a href="/x${i}">refunds</a> and <b>shipping</b>.</p></div>`
    const site = new FakeWebsite().set('/', { body: html('Big page', body) })
    await site.start()
    sites.push(site)
    const s = (await tenant.api.post('/documents/sources/url', { url: `${site.url}/`, schedule: 'manual', max_pages: 1 })).body
    // The app runs in this thread: the event loop's longest stall during the crawl is what a request would wait.
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    const done = await waitForCrawl(tenant, s.id, { timeoutMs: 60_000 })
    delay.disable()
    expect(done.recent_runs[0]).toMatchObject({ status: 'completed', pages_indexed: 1 })
    expect((await pageDocuments(t, s.id))[0]!.title).toBe('Big page')
    // In process it stalls about 6 s here; what remains (about 0.5 s on PGlite idle, 1.7 to 3.9 s on a 2-core VM at a
    // load of 12 to 14) is the embedded database's own insert. The bound is what the parse alone takes on this thread
    // now, under the same load (at least 3 s): a parser on the event loop stalls it by that and the insert besides.
    const started = performance.now()
    extractHtml(html('Big page', body), `${site.url}/`)
    const parseMs = performance.now() - started
    expect(delay.max / 1e6, `parse in-thread ${Math.round(parseMs)} ms`).toBeLessThan(Math.max(3000, parseMs))
    // the crawl is waited for up to 60 s: the test's own limit must be longer (a loaded machine took over 30)
  }, 90_000)
})
