import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FakeWebsite, html, links, prose } from './fakes/website.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { system } from './helpers/chat.js'
import { upload, uploadReady, waitReady } from './helpers/documents.js'
import { createTenant } from './helpers/factories.js'
import { waitForCrawl } from './helpers/sources.js'

/**
 * Long work reports counts through its existing status endpoints (issue 16, item 7), so the dashboard can
 * draw progress bars: a crawl while it runs, a document's indexing (parsing, then embedding), and a gap
 * analyzer run (its summary's `run`).
 */
let t: TestApp
let fake: FakeLlm
let site: FakeWebsite
beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', CRAWLER_DELAY_MS: '0', CRAWLER_CONCURRENCY: '1' } })
  site = await new FakeWebsite({
    '/': { body: html('Home', prose('home') + links(['/a', '/b', '/c'])) },
    '/a': { body: html('A', prose('alpha')) },
    // A slow page holds the crawl open long enough to be seen half-way.
    '/b': { body: html('B', prose('bravo')), delayMs: 1500 },
    '/c': { body: html('C', prose('charlie')) },
  }).start()
})
afterAll(async () => {
  await t?.close()
  await site?.stop()
  await fake?.close()
})

describe('progress counts', () => {
  it('a running crawl shows URLs handled of URLs found; a finished one shows pages indexed of pages found', async () => {
    const tenant = await createTenant(t)
    const created = await tenant.api.post('/documents/sources/url', { url: `${site.url}/`, schedule: 'manual' })
    expect(created.status, created.text).toBe(201)
    expect(created.body.progress).toEqual({ crawl: null, indexing: { done: 0, total: 0 } })
    const id = created.body.id

    let midway: { done: number; total: number } | null = null
    const deadline = Date.now() + 15_000
    while (!midway && Date.now() < deadline) {
      const d = (await tenant.api.get(`/documents/sources/${id}`)).body
      if (d.progress.crawl && d.progress.crawl.total >= 4 && d.progress.crawl.done < d.progress.crawl.total) midway = d.progress.crawl
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(midway).toEqual({ done: expect.any(Number), total: 4 })
    // The list shows the same counts.
    const listed = (await tenant.api.get('/documents/sources')).body.url_sources.find((s: { id: string }) => s.id === id)
    expect(listed.progress.indexing.total).toBeGreaterThanOrEqual(0)

    await waitForCrawl(tenant, id)
    const deadline2 = Date.now() + 15_000
    let final: any
    do {
      final = (await tenant.api.get(`/documents/sources/${id}`)).body
      if (final.progress.indexing.done === 4) break
      await new Promise((r) => setTimeout(r, 50))
    } while (Date.now() < deadline2)
    expect(final.progress).toEqual({ crawl: null, indexing: { done: 4, total: 4 } })
    expect(final.pages_indexed).toBe(4)
  })

  it("a document's detail shows embedding progress: chunks with a vector of all chunks", async () => {
    const text = Array.from({ length: 8 }, (_, i) => `## Section ${i}\n\n${'Refunds take five business days to process. '.repeat(60)}`).join('\n\n')
    // Without a model key nothing can be embedded: searchable, but 0 of n vectors.
    const keyless = await createTenant(t, { llmKey: null })
    const r1 = await upload(keyless.api, 'big.md', `# Big\n\n${text}`)
    expect(r1.status).toBe(201)
    const d1 = await waitReady(t, keyless.api, r1.body.id)
    const p1 = (await keyless.api.get(`/documents/${d1.id}`)).body.progress
    expect(p1).toEqual({ stage: 'embedding', done: 0, total: d1.chunk_count })
    expect(d1.chunk_count).toBeGreaterThan(1)

    const owner = await createTenant(t)
    const r2 = await upload(owner.api, 'big.md', `# Big\n\n${text}`)
    const d2 = await waitReady(t, owner.api, r2.body.id)
    await expect
      .poll(async () => (await owner.api.get(`/documents/${d2.id}`)).body.progress, { timeout: 15_000 })
      .toEqual({ stage: 'done', done: d2.chunk_count, total: d2.chunk_count })
  })

  it('a gap analyzer run shows steps done of steps known while it runs, and all of them once done', async () => {
    const owner = await createTenant(t)
    await uploadReady(t, owner.api, 'refunds.md', '# Refunds\n\nRefunds for annual plans arrive within 5 business days.\n')
    const topics = ['refunds', 'invoices', 'password reset', 'data export']
    // the topic discovery answers slowly, so the run is seen with its first counts
    fake.script((req) => (req.json && system(req).includes('documentation topics its customers need') ? { delayMs: 1200, json: { topics } } : undefined))
    expect((await owner.api.get('/gap-analyzer/summary')).body.run).toBeNull()
    const r = await owner.api.post('/gap-analyzer/recalculate?mode=mode_a')
    expect(r.status, r.text).toBe(202)

    const seen: { status: string; progress: { done: number; total: number } | null }[] = []
    await expect
      .poll(
        async () => {
          const run = (await owner.api.get('/gap-analyzer/summary')).body.run
          seen.push({ status: run.status, progress: run.progress })
          return run.status
        },
        { timeout: 15_000, interval: 50 },
      )
      .toBe('done')
    const running = seen.filter((s) => s.status === 'running')
    // discovery and writing are known once it starts (a poll just before sees 0 of 0); each topic's coverage is a
    // step once the topics are found
    expect(running.map((s) => s.progress)).toContainEqual({ done: 0, total: 2 })
    for (const q of seen.filter((s) => s.status === 'queued')) expect(q.progress).toBeNull()
    const done = (await owner.api.get('/gap-analyzer/summary')).body
    expect(done.run).toMatchObject({ id: r.body.run_id, mode: 'mode_a', status: 'done', finished_at: expect.any(String) })
    expect(done.run.progress.done).toBe(done.run.progress.total)
    expect(done.run.progress.total).toBeGreaterThanOrEqual(2 + topics.length)
    // the list carries the same summary, and counts never go backwards
    expect((await owner.api.get('/gap-analyzer')).body.summary.run).toEqual(done.run)
    for (const k of ['done', 'total'] as const) {
      const xs = running.map((s) => s.progress![k])
      expect(xs).toEqual([...xs].sort((a, b) => a - b))
    }
  })
})
