import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { pageDocuments, pathsOf, waitForCrawl, waitForIndexed } from './helpers/sources.js'
import { FakeWebsite, html, links, prose } from './fakes/website.js'

/** The docs site every test in this file crawls (each test gets its own copy, so changes stay local). */
function docsSite(): FakeWebsite {
  const site = new FakeWebsite()
  const home = html(
    'Acme Docs',
    prose('Welcome') +
      links([
        '/docs/install',
        '/docs/config',
        '/about',
        '/private/secret',
        '/missing',
        '/old-page',
        '/loop-a',
        '/chain/0',
        '/huge',
        '/slow',
        '/logo.png',
        '/files/archive.zip',
        '/data.json',
        '/notes.txt',
        '/changing',
        '/vanishing',
        '/hidden',
        '/about?utm_source=newsletter#team',
        'https://other.example/elsewhere',
        'mailto:help@acme.test',
      ]),
  )
  site
    .set('/robots.txt', { contentType: 'text/plain', body: 'User-agent: *\nDisallow: /private/\n\nSitemap: /sitemap_index.xml\n' })
    .set('/sitemap_index.xml', {
      contentType: 'application/xml',
      body: `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>SITE/sitemap-docs.xml</loc></sitemap><sitemap><loc>SITE/sitemap-blog.xml</loc></sitemap></sitemapindex>`,
    })
    .set('/sitemap-docs.xml', {
      contentType: 'application/xml',
      body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>SITE/docs/install</loc></url><url><loc>SITE/orphan</loc></url></urlset>`,
    })
    .set('/sitemap-blog.xml', {
      contentType: 'application/xml',
      body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>SITE/blog/hello</loc></url><url><loc>SITE/private/from-sitemap</loc></url></urlset>`,
    })
    .set('/', { body: home, lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT' })
    .set('/docs/install', {
      body: html(
        'Installing Acme',
        prose('Installation') +
          '<h2>Requirements</h2><ul><li>Node 20</li><li>PostgreSQL 15</li></ul>' +
          '<pre><code class="language-bash">npm install acme\nacme init</code></pre>' +
          links(['/', '/docs/config', '/docs/install']),
      ),
    })
    .set('/docs/config', {
      body: html(
        'Configuring Acme',
        prose('Configuration') +
          '<table><tr><th>Key</th><th>Default</th></tr><tr><td>port</td><td>8080</td></tr></table>' +
          links(['/docs/install', '/docs/deep/1']),
      ),
    })
    .set('/docs/deep/1', { body: html('Deep one', prose('Depth two') + links(['/docs/deep/2'])) })
    .set('/docs/deep/2', { body: html('Deep two', prose('Depth three') + links(['/docs/deep/3'])) })
    .set('/docs/deep/3', { body: html('Deep three', prose('Depth four')) })
    .set('/about', { body: html('About Acme', prose('About us')) })
    .set('/orphan', { body: html('Only in the sitemap', prose('Orphan')) })
    .set('/blog/hello', { body: html('Hello blog', prose('Blogging')) })
    .set('/private/secret', { body: html('Secret', prose('Secret')) })
    .set('/private/from-sitemap', { body: html('Secret too', prose('Secret')) })
    .set('/old-page', { redirect: '/about' })
    .set('/loop-a', { redirect: '/loop-b' })
    .set('/loop-b', { redirect: '/loop-a' })
    .set('/huge', { hugeBytes: 6 * 1024 * 1024 })
    .set('/slow', { delayMs: 5000, body: html('Slow', prose('Slow')) })
    .set('/logo.png', { contentType: 'image/png', body: Buffer.from([0x89, 0x50, 0x4e, 0x47]) })
    .set('/files/archive.zip', { contentType: 'application/zip', body: Buffer.from('PK') })
    .set('/data.json', { contentType: 'application/json', body: '{"a":1}' })
    .set('/notes.txt', { contentType: 'text/plain; charset=utf-8', body: 'Release notes\n\nVersion 2 adds dark mode and faster search.' })
    .set('/changing', { body: html('Changelog', prose('Version one')) })
    .set('/vanishing', { body: html('Soon gone', prose('Temporary')) })
    .set('/hidden', { body: html('Hidden', prose('Hidden'), '<meta name="robots" content="noindex">') })
  for (let i = 0; i <= 6; i++) site.set(`/chain/${i}`, { redirect: `/chain/${i + 1}` })
  site.set('/chain/7', { body: html('End of chain', prose('Chain')) })
  return site
}

async function startSite(): Promise<FakeWebsite> {
  const site = await docsSite().start()
  for (const p of ['/sitemap_index.xml', '/sitemap-docs.xml', '/sitemap-blog.xml']) {
    const spec = site.pages.get(p)!
    site.set(p, { ...spec, body: String(spec.body).replaceAll('SITE', site.url) })
  }
  return site
}

const EXPECTED_PAGES = [
  '/',
  '/about',
  '/blog/hello',
  '/changing',
  '/docs/config',
  '/docs/deep/1',
  '/docs/deep/2',
  '/docs/install',
  '/notes.txt',
  '/orphan',
  '/vanishing',
]

let t: TestApp
const sites: FakeWebsite[] = []
const env = {
  CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true',
  CRAWLER_DELAY_MS: '0',
  CRAWLER_PAGE_TIMEOUT_MS: '2000',
  CRAWLER_USER_AGENT: 'SupportBotCrawler/0.1 (+http://app.test)',
}

beforeAll(async () => {
  t = await startApp({ env })
})
afterAll(async () => {
  await t?.close()
  await Promise.all(sites.map((s) => s.stop()))
})

async function newSite() {
  const s = await startSite()
  sites.push(s)
  return s
}

describe('crawling a website end to end', () => {
  let tenant: Tenant
  let site: FakeWebsite
  let sourceId: string
  let detail: any

  beforeAll(async () => {
    tenant = await createTenant(t)
    site = await newSite()
    const created = await tenant.api.post('/documents/sources/url', { url: `${site.url}/`, name: 'Acme docs', schedule: 'daily' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      name: 'Acme docs',
      url: `${site.url}/`,
      source_type: 'url',
      status: 'queued',
      schedule: 'daily',
      exclusion_patterns: [],
    })
    sourceId = created.body.id
    detail = await waitForCrawl(tenant, sourceId)
  })

  it('stores each reachable same-site page once, within depth 3, including sitemap-only pages', async () => {
    expect(
      pathsOf(
        site,
        detail.pages.map((p: { url: string }) => p.url),
      ),
    ).toEqual(EXPECTED_PAGES)
    expect(detail.recent_runs[0]).toMatchObject({ status: 'completed', trigger: 'initial', pages_found: EXPECTED_PAGES.length })
    expect(detail.pages_found).toBe(EXPECTED_PAGES.length)
    const docs = await pageDocuments(t, sourceId)
    expect(docs).toHaveLength(EXPECTED_PAGES.length)
    expect(new Set(docs.map((d) => d.source_url)).size).toBe(docs.length)
    expect(docs.every((d) => d.file_type === 'url')).toBe(true)
    // depth 4 is beyond the limit: never requested
    expect(site.fetched()).not.toContain('/docs/deep/3')
  })

  it('records why each other URL was not stored', () => {
    const reasons = Object.fromEntries(
      (detail.recent_runs[0].failed_urls as { url: string; reason: string }[]).map((f) => [f.url.replace(site.url, ''), f.reason]),
    )
    expect(reasons).toMatchObject({
      '/private/secret': 'blocked by robots.txt',
      '/private/from-sitemap': 'blocked by robots.txt',
      '/missing': 'http 404',
      '/loop-a': 'redirect loop',
      '/chain/0': 'too many redirects (more than 5)',
      '/huge': 'too large (over 5242880 bytes)',
      '/slow': 'timeout',
      '/logo.png': 'not a page (.png)',
      '/files/archive.zip': 'not a page (.zip)',
      '/data.json': 'not HTML (application/json)',
      '/hidden': 'noindex',
    })
  })

  it('never fetches what robots.txt disallows or what is obviously not a page', () => {
    const fetched = site.fetched()
    for (const p of ['/private/secret', '/private/from-sitemap', '/logo.png', '/files/archive.zip']) expect(fetched).not.toContain(p)
    expect(site.requests.every((r) => r.userAgent === env.CRAWLER_USER_AGENT)).toBe(true)
    // the redirect to /about and the tracking-parameter variant did not fetch /about twice
    expect(fetched.filter((p) => p.startsWith('/about'))).toEqual(['/about'])
    expect(fetched.filter((p) => p === '/old-page')).toHaveLength(1)
  })

  it('keeps the main content as Markdown with the page title', async () => {
    const docs = await pageDocuments(t, sourceId)
    const install = docs.find((d) => d.source_url === `${site.url}/docs/install`)!
    expect(install.title).toBe('Installing Acme')
    expect(install.parsed_text.startsWith('# Installing Acme\n\n')).toBe(true)
    expect(install.parsed_text).toContain('## Requirements')
    expect(install.parsed_text).toContain('- Node 20\n- PostgreSQL 15')
    expect(install.parsed_text).toContain('```bash\nnpm install acme\nacme init\n```')
    expect(install.parsed_text).not.toContain('Example Corp')
    const config = docs.find((d) => d.source_url === `${site.url}/docs/config`)!
    expect(config.parsed_text).toContain('| Key | Default |\n| --- | --- |\n| port | 8080 |')
    const notes = docs.find((d) => d.source_url === `${site.url}/notes.txt`)!
    expect(notes.parsed_text).toBe('Release notes\n\nVersion 2 adds dark mode and faster search.')
  })

  it('lists the source with uploaded documents, and the static path is not taken for a document id', async () => {
    const form = new FormData()
    form.append('file', new Blob(['# Handbook\n\nHow we answer support questions, step by step.']), 'handbook.md')
    const upload = await tenant.api.post('/documents', form)
    expect(upload.status).toBe(201)
    const r = await tenant.api.get('/documents/sources')
    expect(r.status).toBe(200)
    // uploaded files only: the crawled pages are under their source
    expect(r.body.documents.map((d: { id: string; filename: string }) => [d.id, d.filename])).toEqual([[upload.body.id, 'handbook.md']])
    expect(r.body.documents[0]).toMatchObject({ source_id: null, file_type: 'markdown' })
    expect(r.body.url_sources).toHaveLength(1)
    expect(r.body.url_sources[0]).toMatchObject({ id: sourceId, pages_found: EXPECTED_PAGES.length, schedule: 'daily' })
    expect(r.body.url_sources[0].next_crawl_at).not.toBeNull()
    const next = Date.parse(r.body.url_sources[0].next_crawl_at) - Date.parse(r.body.url_sources[0].last_crawled_at)
    expect(next).toBe(86_400_000)
  })
})

describe('indexing crawled pages', () => {
  it('hands every page to indexing: chunks exist and the source counts ready pages and chunks', async () => {
    const tenant = await createTenant(t)
    const site = await newSite()
    const created = await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })
    expect(created.status).toBe(201)
    expect(created.body.next_crawl_at).toBeNull()
    await waitForCrawl(tenant, created.body.id)
    const detail = await waitForIndexed(tenant, created.body.id)
    expect(detail.status).toBe('ready')
    expect(detail.pages_indexed).toBe(EXPECTED_PAGES.length)
    const chunks = await t.ctx.db
      .selectFrom('chunks')
      .innerJoin('documents', 'documents.id', 'chunks.document_id')
      .select(['chunks.document_id', 'chunks.source_url', 'chunks.content'])
      .where('documents.source_id', '=', created.body.id)
      .execute()
    expect(new Set(chunks.map((c) => c.document_id)).size).toBe(EXPECTED_PAGES.length)
    expect(detail.chunks_created).toBe(chunks.length)
    expect(chunks.some((c) => c.source_url === `${site.url}/docs/install` && c.content.includes('npm install acme'))).toBe(true)
    expect(detail.pages.every((p: { chunk_count: number }) => p.chunk_count > 0)).toBe(true)
    // a crawled page is a document like any other
    const doc = await tenant.api.get(`/documents/${detail.pages[0].id}`)
    expect(doc.status).toBe(200)
    expect(doc.body).toMatchObject({ file_type: 'url', source_id: created.body.id, status: 'ready' })
  })
})

describe('refresh', () => {
  it('re-crawls with conditional requests: changed pages re-indexed, unchanged untouched, vanished removed; at most once an hour', async () => {
    const tenant = await createTenant(t)
    const site = await newSite()
    const created = await tenant.api.post('/documents/sources/url', { url: `${site.url}/`, schedule: 'manual' })
    const id = created.body.id
    await waitForCrawl(tenant, id)
    await waitForIndexed(tenant, id)
    // only manual refreshes count: the first one right after the source was created is accepted
    const first = await tenant.api.post(`/documents/sources/${id}/refresh`)
    expect(first.status, first.text).toBe(200)
    await waitForCrawl(tenant, id, { runs: 2 })
    await waitForIndexed(tenant, id)
    // a loaded machine can still hold a repeated index job of the first crawl; let it finish before the snapshot
    for (let i = 0; i < 400; i++) {
      const busy = await t.ctx.db.selectFrom('jobs').select('id').where('kind', '=', 'documents.index').where('status', 'in', ['queued', 'running']).execute()
      if (busy.length === 0) break
      await new Promise((r) => setTimeout(r, 50))
    }
    const before = new Map((await pageDocuments(t, id)).map((d) => [d.source_url!.replace(site.url, ''), d]))
    const chunkIds = async (docId: string) =>
      (await t.ctx.db.selectFrom('chunks').select('id').where('document_id', '=', docId).orderBy('id').execute()).map((c) => c.id)
    const installChunks = await chunkIds(before.get('/docs/install')!.id)

    const tooSoon = await tenant.api.post(`/documents/sources/${id}/refresh`)
    expect(tooSoon.status).toBe(429)
    expect(tooSoon.body).toEqual({ detail: 'Refresh available in 60 min.' })
    expect(Number(tooSoon.headers.get('retry-after'))).toBeGreaterThan(3500)
    t.clock.advance(30 * 60_000)
    expect((await tenant.api.post(`/documents/sources/${id}/refresh`)).body).toEqual({ detail: 'Refresh available in 30 min.' })

    site.set('/changing', { body: html('Changelog', prose('Version two')) })
    site.remove('/vanishing')
    const docsMap = site.pages.get('/sitemap-docs.xml')!
    site.set('/sitemap-docs.xml', { ...docsMap, body: String(docsMap.body).replace('</urlset>', `<url><loc>${site.url}/brand-new</loc></url></urlset>`) })
    site.set('/brand-new', { body: html('Brand new', prose('Novelty')) })
    const mark = site.requests.length
    t.clock.advance(31 * 60_000)
    const refreshed = await tenant.api.post(`/documents/sources/${id}/refresh`)
    expect(refreshed.status).toBe(200)
    expect(['queued', 'indexing']).toContain(refreshed.body.status)

    const detail = await waitForCrawl(tenant, id, { runs: 3 })
    expect(detail.recent_runs[0]).toMatchObject({
      status: 'completed',
      trigger: 'manual',
      pages_found: 11,
      pages_indexed: 2,
      pages_unchanged: 9,
      pages_removed: 1,
    })
    expect(detail.recent_runs[1]).toMatchObject({ status: 'completed', trigger: 'manual', pages_indexed: 0, pages_unchanged: 11 })
    expect(detail.recent_runs[2]).toMatchObject({ trigger: 'initial', pages_indexed: 11 })
    await waitForIndexed(tenant, id)
    const after = new Map((await pageDocuments(t, id)).map((d) => [d.source_url!.replace(site.url, ''), d]))
    expect([...after.keys()].sort()).toEqual([...EXPECTED_PAGES.filter((p) => p !== '/vanishing'), '/brand-new'].sort())

    // unchanged: same row, same updated_at, same chunks, never queued for indexing again
    for (const p of ['/', '/docs/install', '/about', '/notes.txt']) {
      expect(after.get(p)!.id).toBe(before.get(p)!.id)
      expect(after.get(p)!.updated_at.toISOString()).toBe(before.get(p)!.updated_at.toISOString())
    }
    expect(await chunkIds(before.get('/docs/install')!.id)).toEqual(installChunks)
    const indexJobs = await t.ctx.db
      .selectFrom('jobs')
      .select('id')
      .where('dedupe_key', '=', `documents.index:${before.get('/about')!.id}`)
      .execute()
    expect(indexJobs).toHaveLength(1)

    // changed: same document, new text, re-chunked
    const changing = after.get('/changing')!
    expect(changing.id).toBe(before.get('/changing')!.id)
    expect(changing.parsed_text).toContain('Version two')
    expect(changing.updated_at.getTime()).toBeGreaterThan(before.get('/changing')!.updated_at.getTime())
    const changedChunks = await t.ctx.db.selectFrom('chunks').select('content').where('document_id', '=', changing.id).execute()
    expect(changedChunks.length).toBeGreaterThan(0)
    expect(changedChunks.every((c) => !c.content.includes('Version one'))).toBe(true)

    // vanished: document and chunks gone
    const vanishedId = before.get('/vanishing')!.id
    expect(await t.ctx.db.selectFrom('documents').select('id').where('id', '=', vanishedId).execute()).toEqual([])
    expect(await t.ctx.db.selectFrom('chunks').select('id').where('document_id', '=', vanishedId).execute()).toEqual([])

    // conditional requests were made and answered 304 for unchanged pages
    const second = site.requests.slice(mark)
    const home = second.find((r) => r.path === '/')!
    expect(home.ifNoneMatch).toMatch(/^"/)
    expect(home.status).toBe(304)
    expect(second.find((r) => r.path === '/changing')!.status).toBe(200)
  })
})

describe('owner controls', () => {
  it('skips excluded paths without fetching them', async () => {
    const tenant = await createTenant(t)
    const site = await newSite()
    const created = await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual', exclusions: ['/docs/**', '*.txt', ' '] })
    expect(created.status).toBe(201)
    expect(created.body.exclusion_patterns).toEqual(['/docs/**', '*.txt'])
    const detail = await waitForCrawl(tenant, created.body.id)
    const paths = pathsOf(
      site,
      detail.pages.map((p: { url: string }) => p.url),
    )
    expect(paths).toEqual(EXPECTED_PAGES.filter((p) => !p.startsWith('/docs/') && p !== '/notes.txt'))
    expect(site.fetched().filter((p) => p.startsWith('/docs') || p === '/notes.txt')).toEqual([])
  })

  it('stops at the page cap with a warning', async () => {
    const tenant = await createTenant(t)
    const site = await newSite()
    const created = await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual', max_pages: 3 })
    expect(created.body.max_pages).toBe(3)
    const detail = await waitForCrawl(tenant, created.body.id)
    expect(detail.pages).toHaveLength(3)
    expect(detail.pages_found).toBe(3)
    expect(detail.status).not.toBe('error')
    expect(detail.warning_message).toBe('The page limit of 3 was reached; some pages were not crawled.')
    expect(detail.recent_runs[0].failed_urls.some((f: { reason: string }) => f.reason === 'page limit of 3 reached')).toBe(true)
    // no more than the cap plus the pages in flight when it was reached were fetched
    const pageFetches = site.fetched().filter((p) => !p.startsWith('/robots') && !p.startsWith('/sitemap'))
    expect(pageFetches.length).toBeLessThanOrEqual(3 + 4)
  })

  it('deletes a page and never adds it back on later crawls', async () => {
    const tenant = await createTenant(t)
    const site = await newSite()
    const id = (await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })).body.id
    const detail = await waitForCrawl(tenant, id)
    const about = detail.pages.find((p: { url: string }) => p.url === `${site.url}/about`)
    const del = await tenant.api.delete(`/documents/sources/${id}/pages/${about.id}`)
    expect(del.status).toBe(204)
    expect((await tenant.api.get(`/documents/${about.id}`)).status).toBe(404)
    expect((await tenant.api.delete(`/documents/sources/${id}/pages/${about.id}`)).status).toBe(404)
    const after = (await tenant.api.get(`/documents/sources/${id}`)).body
    expect(after.pages.map((p: { id: string }) => p.id)).not.toContain(about.id)
    expect(after.pages_found).toBe(EXPECTED_PAGES.length - 1)

    const mark = site.requests.length
    t.clock.advance(61 * 60_000)
    expect((await tenant.api.post(`/documents/sources/${id}/refresh`)).status).toBe(200)
    const second = await waitForCrawl(tenant, id, { runs: 2 })
    expect(
      pathsOf(
        site,
        second.pages.map((p: { url: string }) => p.url),
      ),
    ).toEqual(EXPECTED_PAGES.filter((p) => p !== '/about'))
    expect(site.fetched(mark)).not.toContain('/about')
    expect(second.recent_runs[0].pages_removed).toBe(0)
  })

  it('updates name, schedule, exclusions, page cap and pause', async () => {
    const tenant = await createTenant(t)
    const site = await newSite()
    const id = (await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })).body.id
    const crawled = await waitForCrawl(tenant, id)
    expect(crawled.next_crawl_at).toBeNull()

    const weekly = await tenant.api.patch(`/documents/sources/${id}`, { name: 'Renamed', schedule: 'weekly', exclusions: ['/blog/**'], max_pages: 50 })
    expect(weekly.status).toBe(200)
    expect(weekly.body).toMatchObject({ name: 'Renamed', schedule: 'weekly', exclusion_patterns: ['/blog/**'], max_pages: 50 })
    expect(Date.parse(weekly.body.next_crawl_at) - Date.parse(crawled.last_crawled_at)).toBe(7 * 86_400_000)

    const paused = await tenant.api.patch(`/documents/sources/${id}`, { paused: true })
    expect(paused.body).toMatchObject({ status: 'paused', next_crawl_at: null })
    t.clock.advance(61 * 60_000)
    const refused = await tenant.api.post(`/documents/sources/${id}/refresh`)
    expect(refused.status).toBe(409)
    const resumed = await tenant.api.patch(`/documents/sources/${id}`, { paused: false })
    // pages may still be in the indexing queue on a loaded machine: either way the source is no longer paused
    expect(['ready', 'indexing']).toContain(resumed.body.status)
    expect(resumed.body.next_crawl_at).not.toBeNull()

    expect((await tenant.api.patch(`/documents/sources/${id}`, { schedule: 'hourly' })).status).toBe(422)
    expect((await tenant.api.patch(`/documents/sources/${id}`, { max_pages: 0 })).status).toBe(422)
    expect((await tenant.api.patch(`/documents/sources/${id}`, { exclusions: Array(101).fill('/x') })).status).toBe(422)
  })

  it('deletes a source with its pages and chunks', async () => {
    const tenant = await createTenant(t)
    const site = await newSite()
    const id = (await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })).body.id
    await waitForCrawl(tenant, id)
    await waitForIndexed(tenant, id)
    const docIds = (await pageDocuments(t, id)).map((d) => d.id)
    expect(docIds.length).toBe(EXPECTED_PAGES.length)
    expect((await tenant.api.delete(`/documents/sources/${id}`)).status).toBe(204)
    expect((await tenant.api.get(`/documents/sources/${id}`)).status).toBe(404)
    expect(await t.ctx.db.selectFrom('documents').select('id').where('id', 'in', docIds).execute()).toEqual([])
    expect(await t.ctx.db.selectFrom('chunks').select('id').where('document_id', 'in', docIds).execute()).toEqual([])
    expect(await t.ctx.db.selectFrom('crawl_runs').select('id').where('source_id', '=', id).execute()).toEqual([])
    expect((await tenant.api.get('/documents/sources')).body.url_sources).toEqual([])
    expect((await tenant.api.delete(`/documents/sources/${id}`)).status).toBe(404)
  })
})

describe('input and isolation', () => {
  it('validates the URL and refuses a duplicate source', async () => {
    const tenant = await createTenant(t)
    for (const url of ['ftp://example.com/', 'https://user:pw@example.com/', 'not a url', 'javascript:alert(1)']) {
      const r = await tenant.api.post('/documents/sources/url', { url })
      expect(r.status, url).toBe(422)
      expect(r.body.detail[0].loc).toEqual(['body', 'url'])
    }
    expect((await tenant.api.post('/documents/sources/url', { url: 'https://example.com/', schedule: 'hourly' })).status).toBe(422)
    expect((await tenant.api.post('/documents/sources/url', {})).status).toBe(422)
    expect((await tenant.api.post('/documents/sources/url', { url: 'https://example.com/', exclusions: ['x'.repeat(501)] })).status).toBe(422)
    const first = await tenant.api.post('/documents/sources/url', { url: 'https://EXAMPLE.com/?utm_source=x', schedule: 'manual' })
    expect(first.status).toBe(201)
    expect(first.body.url).toBe('https://example.com/')
    expect(first.body.name).toBe('example.com')
    const dup = await tenant.api.post('/documents/sources/url', { url: 'https://example.com/#top' })
    expect(dup.status).toBe(409)
    expect((await tenant.api.get('/documents/sources/not-a-uuid')).status).toBe(422)
    await tenant.api.delete(`/documents/sources/${first.body.id}`)
  })

  it('answers 404 on every id route for another tenant, and 401 without a token', async () => {
    const owner = await createTenant(t)
    const other = await createTenant(t)
    const site = await newSite()
    const id = (await owner.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })).body.id
    const detail = await waitForCrawl(owner, id)
    const pageId = detail.pages[0].id
    t.clock.advance(61 * 60_000)
    const calls = [
      other.api.get(`/documents/sources/${id}`),
      other.api.patch(`/documents/sources/${id}`, { name: 'mine now' }),
      other.api.post(`/documents/sources/${id}/refresh`),
      other.api.delete(`/documents/sources/${id}/pages/${pageId}`),
      other.api.delete(`/documents/sources/${id}`),
    ]
    for (const r of await Promise.all(calls)) {
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ detail: expect.any(String) })
    }
    // a page of the owner's source under the other tenant's own source is not found either
    const otherSite = await newSite()
    const otherId = (await other.api.post('/documents/sources/url', { url: otherSite.url, schedule: 'manual' })).body.id
    expect((await other.api.delete(`/documents/sources/${otherId}/pages/${pageId}`)).status).toBe(404)
    expect((await other.api.get('/documents/sources')).body.url_sources.map((s: { id: string }) => s.id)).toEqual([otherId])
    const still = await owner.api.get(`/documents/sources/${id}`)
    expect(still.status).toBe(200)
    expect(still.body.pages).toHaveLength(EXPECTED_PAGES.length)
    expect(still.body.name).not.toBe('mine now')
    const anon = t.api()
    expect((await anon.get('/documents/sources')).status).toBe(401)
    expect((await anon.post('/documents/sources/url', { url: site.url })).status).toBe(401)
  })
})
