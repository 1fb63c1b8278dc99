import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { pageDocuments, waitForCrawl } from './helpers/sources.js'
import { makePdf } from './fixtures/files.js'
import { FakeWebsite, html, links, prose } from './fakes/website.js'

let t: TestApp
const site = new FakeWebsite()

beforeAll(async () => {
  t = await startApp({ env: { CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', CRAWLER_DELAY_MS: '0', CRAWLER_MAX_PAGE_BYTES: String(1024 * 1024) } })
  site
    .set('/', { body: html('Home', prose('Home') + links(['/gzipped', '/latin1', '/guide.pdf', '/readme.md', '/bomb', '/empty'])) })
    .set('/gzipped', { body: gzipSync(html('Compressed page', prose('Squeezed'))), headers: { 'content-encoding': 'gzip' } })
    .set('/latin1', {
      contentType: 'text/html; charset=iso-8859-1',
      body: Buffer.from(html('Crème brûlée', prose('Café au lait à volonté')), 'latin1'),
    })
    .set('/guide.pdf', { contentType: 'application/pdf', body: Buffer.from(await makePdf({ marker: 'refund window is thirty days' })) })
    .set('/readme.md', { contentType: 'text/markdown', body: '# Readme\n\n```sh\nmake install\n```\n' })
    // 2 MB of zeros compress to a few KB; decoded they pass the 1 MB limit
    .set('/bomb', { body: gzipSync(Buffer.alloc(2 * 1024 * 1024, 0x20)), headers: { 'content-encoding': 'gzip' } })
    .set('/empty', { body: '<html><head><title>Nothing</title></head><body></body></html>' })
  await site.start()
})
afterAll(async () => {
  await t?.close()
  await site.stop()
})

it('decodes compressed and non-UTF-8 pages, parses PDFs and Markdown, limits the decoded size', async () => {
  const tenant = await createTenant(t)
  const id = (await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })).body.id
  const detail = await waitForCrawl(tenant, id)
  const docs = new Map((await pageDocuments(t, id)).map((d) => [d.source_url!.replace(site.url, ''), d]))
  expect([...docs.keys()].sort()).toEqual(['/', '/guide.pdf', '/gzipped', '/latin1', '/readme.md'])
  expect(docs.get('/gzipped')!.parsed_text).toContain('Squeezed explained in plain words')
  expect(docs.get('/latin1')!.title).toBe('Crème brûlée')
  expect(docs.get('/latin1')!.parsed_text).toContain('Café au lait à volonté')
  expect(docs.get('/guide.pdf')!.parsed_text).toContain('refund window is thirty days')
  expect(docs.get('/readme.md')!).toMatchObject({ title: 'Readme', parsed_text: '# Readme\n\n```sh\nmake install\n```' })
  const reasons = Object.fromEntries(detail.recent_runs[0].failed_urls.map((f: { url: string; reason: string }) => [f.url.replace(site.url, ''), f.reason]))
  expect(reasons).toEqual({ '/bomb': 'too large (over 1048576 bytes)', '/empty': 'no text content' })
})
