import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FakeWebsite, html, links, prose } from './fakes/website.js'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { pageDocuments, waitForCrawl } from './helpers/sources.js'

let t: TestApp
const sites: FakeWebsite[] = []
beforeAll(async () => {
  t = await startApp({ env: { CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', CRAWLER_DELAY_MS: '0', CRAWLER_PAGE_TIMEOUT_MS: '3000' } })
})
afterAll(async () => {
  await t?.close()
  await Promise.all(sites.map((s) => s.stop()))
})

async function site(pages: Record<string, Parameters<FakeWebsite['set']>[1]>): Promise<FakeWebsite> {
  const s = new FakeWebsite(pages)
  await s.start()
  sites.push(s)
  return s
}

/** The same server seen under another host name: "localhost" is another site than "127.0.0.1". */
const otherHost = (s: FakeWebsite) => s.url.replace('127.0.0.1', 'localhost')

const failedOf = (detail: any) => Object.fromEntries((detail.recent_runs[0].failed_urls as { url: string; reason: string }[]).map((f) => [f.url, f.reason]))

describe('crawler scope: same-site redirects only', () => {
  it('does not follow the start URL to another host, and says so in the failed URLs', async () => {
    const elsewhere = await site({
      '/': { body: html('Elsewhere', prose('Foreign') + links(['/foreign-page'])) },
      '/foreign-page': { body: html('Foreign', prose('Foreign')) },
    })
    const start = await site({ '/': { redirect: `${otherHost(elsewhere)}/` } })
    const tenant = await createTenant(t)
    const created = await tenant.api.post('/documents/sources/url', { url: `${start.url}/`, schedule: 'manual' })
    expect(created.status, created.text).toBe(201)
    const detail = await waitForCrawl(tenant, created.body.id)
    expect(elsewhere.fetched()).toEqual([])
    expect(await pageDocuments(t, created.body.id)).toEqual([])
    expect(failedOf(detail)).toEqual({
      [`${start.url}/`]: `redirect to ${otherHost(elsewhere)}/ refused: it is on another site (only same-site redirects are followed)`,
    })
  })

  it('follows same-site redirects, refuses off-site ones from inner pages, and names a bad redirect scheme readably', async () => {
    const elsewhere = await site({ '/page': { body: html('Foreign', prose('Foreign')) } })
    const home = await site({})
    home
      .set('/', { redirect: '/home' })
      .set('/home', { body: html('Home', prose('Home') + links(['/moved', '/ftp', '/guide'])) })
      .set('/moved', { redirect: `${otherHost(elsewhere)}/page` })
      .set('/ftp', { redirect: 'ftp://files.example.com/guide.txt' })
      .set('/guide', { body: html('Guide', prose('Guide')) })
    const tenant = await createTenant(t)
    const created = await tenant.api.post('/documents/sources/url', { url: `${home.url}/`, schedule: 'manual' })
    const detail = await waitForCrawl(tenant, created.body.id)
    const stored = (await pageDocuments(t, created.body.id)).map((d) => d.source_url).sort()
    expect(stored).toEqual([`${home.url}/guide`, `${home.url}/home`])
    expect(elsewhere.fetched()).toEqual([])
    const failed = failedOf(detail)
    expect(failed[`${home.url}/moved`]).toBe(`redirect to ${otherHost(elsewhere)}/page refused: it is on another site (only same-site redirects are followed)`)
    expect(failed[`${home.url}/ftp`]).toBe('redirect refused: only http and https URLs can be crawled')
  })
})
