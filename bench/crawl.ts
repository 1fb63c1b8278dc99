/**
 * Crawl throughput (npm run bench:crawl -- [--pages 1000] [--concurrency 8]):
 *
 * A generated site on 127.0.0.1 (a home page, 9 sections, 10 pages per section, 10 leaves per page, so
 * 1,000 pages within depth 3; each page a few paragraphs, a list, a code block and its links) is crawled
 * end to end by the real crawl job on one process with the embedded database (PGlite) or DATABASE_URL:
 * robots.txt, fetch, Readability + Markdown, page documents, frontier, index jobs. Politeness delay 0.
 *
 * With DATABASE_URL the run uses a scratch database created on that server (and dropped after).
 * `--crawl-only` leaves the indexing jobs out (the crawl's own cost).
 *
 * Prints: pages stored per second (the crawl job, from enqueue to its run finishing) and the time until
 * every page is also chunked and indexed (the documents module's jobs, lexical only: no model key).
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import { loadConfig } from '../src/config.js'
import { closeContext, createContext } from '../src/context.js'
import { wireModules } from '../src/modules/index.js'
import { createSourcesRepo } from '../src/modules/documents/sources/sources.repo.js'
import { createSourcesService } from '../src/modules/documents/sources/sources.service.js'
import { createWorker } from '../src/runtime.js'
import { FakeWebsite, html, links, prose } from '../test/fakes/website.js'
import { scratchDatabase } from './support.js'

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const PAGES = arg('pages', 1000)
const CONCURRENCY = arg('concurrency', 8)
/** Leave indexing out (pages stay "processing"): the crawl's own cost without the indexer's writes. */
const CRAWL_ONLY = process.argv.includes('--crawl-only')

function generateSite(total: number): FakeWebsite {
  const site = new FakeWebsite().set('/robots.txt', { contentType: 'text/plain', body: 'User-agent: *\nDisallow: /admin/\n' })
  // breadth-first ids: page i's children are 10i+1..10i+10 (the home page has 9 children)
  const childrenOf = (i: number) => Array.from({ length: 10 }, (_, k) => (i === 0 ? k + 1 : i * 10 + k)).filter((c) => c > 0 && c < total && c !== i)
  const path = (i: number) => (i === 0 ? '/' : `/docs/${i}`)
  for (let i = 0; i < total; i++) {
    const kids = i === 0 ? childrenOf(0).slice(0, 9) : childrenOf(i)
    const body =
      prose(`Topic ${i}`, 4) +
      `<h2>Steps</h2><ol><li>Open page ${i}</li><li>Read it</li><li>Follow the links</li></ol>` +
      `<pre><code class="language-js">const page = ${i}\nconsole.log(page)</code></pre>` +
      links(kids.map(path))
    site.set(path(i), { body: html(`Page ${i}`, body) })
  }
  return site
}

async function main() {
  const site = await generateSite(PAGES).start()
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-bench-crawl-'))
  const scratch = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL, 'crawl') : null
  const config = loadConfig(
    {
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      DATABASE_URL: scratch?.url,
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      WORKER_POLL_MS: '20',
      CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true',
      CRAWLER_DELAY_MS: '0',
      CRAWLER_CONCURRENCY: String(CONCURRENCY),
      MAX_DOCUMENTS_PER_TENANT: String(PAGES + 100),
    },
    () => {},
  )
  const ctx = await createContext(config, { pgliteDir: 'memory' })
  const modules = wireModules(ctx)
  const worker = createWorker(ctx, CRAWL_ONLY ? { ...modules, jobs: modules.jobs.filter((j) => j.kind.startsWith('sources.')) } : modules)
  try {
    const now = new Date()
    const user = await ctx.db
      .insertInto('users')
      .values({
        email: `bench-${randomBytes(4).toString('hex')}@example.test`,
        password_hash: 'x',
        is_verified: true,
        tenant_id: null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    const tenant = await ctx.db
      .insertInto('tenants')
      .values({
        name: 'bench',
        owner_user_id: user.id,
        llm_key_enc: null,
        llm_key_hint: null,
        support_email: null,
        kyc_secret_enc: null,
        kyc_secret_hint: null,
        kyc_prev_secret_enc: null,
        kyc_prev_valid_until: null,
        pii_optional_types: '[]',
        l2_email: null,
        escalation_language: null,
        created_at: now,
        updated_at: now,
      } as never)
      .returning('id')
      .executeTakeFirstOrThrow()
    const sources = createSourcesService({ db: ctx.db, clock: ctx.clock, queue: ctx.queue, repo: createSourcesRepo(ctx.db), defaultMaxPages: PAGES })

    await worker.start()
    const t0 = performance.now()
    const source = await sources.create(tenant.id, { url: site.url, schedule: 'manual', max_pages: PAGES })
    // Cheap polls (one row each), so the measuring does not load the single-connection database.
    let crawledAt = 0
    for (;;) {
      await new Promise((r) => setTimeout(r, 100))
      if (!crawledAt) {
        const run = await ctx.db.selectFrom('crawl_runs').select('status').where('source_id', '=', source.id).executeTakeFirst()
        if (run && run.status !== 'running') crawledAt = performance.now()
      }
      if (crawledAt) {
        if (CRAWL_ONLY) break
        const busy = await sql<{ n: number }>`SELECT count(*)::int AS n FROM documents WHERE source_id = ${source.id} AND status = 'processing'`.execute(ctx.db)
        if (busy.rows[0]!.n === 0) break
      }
      if (performance.now() - t0 > 600_000) throw new Error('bench timed out')
    }
    const indexedAt = performance.now()
    const detail = await sources.detail(tenant.id, source.id)
    const run = detail.recent_runs[0]!
    const chunks = await sql<{ n: number }>`SELECT count(*)::int AS n FROM chunks WHERE tenant_id = ${tenant.id}`.execute(ctx.db)
    const crawlS = (crawledAt - t0) / 1000
    const allS = (indexedAt - t0) / 1000
    console.log(`database: ${ctx.database.kind}, crawler concurrency ${CONCURRENCY}, politeness delay 0 ms`)
    console.log(`site: ${PAGES} pages on ${site.url}; run ${run.status}: ${run.pages_found} pages stored, ${run.failed_urls.length} failed`)
    console.log(`crawl (fetch + extract + store + frontier): ${crawlS.toFixed(2)} s = ${(run.pages_found / crawlS).toFixed(1)} pages/s`)
    if (!CRAWL_ONLY)
      console.log(
        `until every page is chunked and indexed: ${allS.toFixed(2)} s = ${(run.pages_found / allS).toFixed(1)} pages/s (${chunks.rows[0]!.n} chunks)`,
      )
    console.log(`requests served by the site: ${site.requests.length}`)
  } finally {
    await worker.stop(2000)
    await closeContext(ctx)
    await site.stop()
    rmSync(dataDir, { recursive: true, force: true })
    await scratch?.drop()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
