/**
 * Connector sync (npx tsx bench/connectors.ts -- [--articles 5000] [--latency 100]):
 *
 * A fake Zendesk help centre on 127.0.0.1 (test/fakes/help-centres.ts; cursor pages of 100, every answer
 * delayed by `--latency` ms, the middle of a real help centre's 50-150 ms) is synced end to end by the real
 * sources.crawl job on one process with the embedded database (PGlite) or DATABASE_URL: listing, HTML to
 * Markdown in the parser threads, documents, index jobs (lexical only: no model key, so no embedding calls).
 *
 * Prints: the first sync (articles per second) and the time until every article is indexed; a re-sync with
 * 1 % of the articles changed upstream (its time, and how many documents it sent to be re-indexed: only the
 * changed ones); and the time from a change upstream to the bot answering from it with a sync every minute
 * (at worst the minute the change waits for the scheduler, plus the re-sync, plus indexing).
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
import { FakeZendesk } from '../test/fakes/help-centres.js'
import { scratchDatabase } from './support.js'

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const ARTICLES = arg('articles', 5000)
const LATENCY = arg('latency', 100)

const body = (i: number, v = 1) =>
  `<p>Article ${i}, version ${v}: ${'How to configure the product step by step, with the settings explained. '.repeat(6)}</p><h2>Steps</h2><ol><li>Open settings ${i}</li><li>Save</li></ol>`

async function main() {
  const z = new FakeZendesk()
  for (let i = 1; i <= ARTICLES; i++) z.put({ id: i, title: `Article ${i}`, body: body(i) })
  await z.start()
  z.delayMs = LATENCY
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-bench-connectors-'))
  const scratch = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL, 'connectors') : null
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
      MAX_DOCUMENTS_PER_TENANT: String(ARTICLES + 100),
    },
    () => {},
  )
  const ctx = await createContext(config, { pgliteDir: 'memory' })
  const modules = wireModules(ctx)
  const worker = createWorker(ctx, modules)
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
      .values({ name: 'bench', owner_user_id: user.id, pii_optional_types: '[]', created_at: now, updated_at: now } as never)
      .returning('id')
      .executeTakeFirstOrThrow()
    const sources = createSourcesService({
      db: ctx.db,
      clock: ctx.clock,
      queue: ctx.queue,
      repo: createSourcesRepo(ctx.db),
      defaultMaxPages: 0,
      connectors: { cipher: ctx.cipher, allowPrivateNetworks: true, preview: async () => ({ ok: true, articles: [], error: null }) },
    })
    await worker.start()

    const runsDone = async (sourceId: string, n: number) => {
      const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM crawl_runs WHERE source_id = ${sourceId} AND status <> 'running'`.execute(ctx.db)
      return r.rows[0]!.n >= n
    }
    const processing = async (sourceId: string) =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM documents WHERE source_id = ${sourceId} AND status = 'processing'`.execute(ctx.db)).rows[0]!.n
    async function until(fn: () => Promise<boolean>) {
      const t0 = performance.now()
      while (!(await fn())) {
        if (performance.now() - t0 > 1_800_000) throw new Error('bench timed out')
        await new Promise((r) => setTimeout(r, 100))
      }
      return performance.now()
    }

    const t0 = performance.now()
    const source = await sources.createConnector(tenant.id, {
      kind: 'zendesk',
      schedule: 'manual',
      config: { base_url: z.url, email: z.email, api_token: z.token },
    })
    const synced = await until(() => runsDone(source.id, 1))
    const indexed = await until(async () => (await processing(source.id)) === 0)
    const first = (await sources.detail(tenant.id, source.id)).last_sync!

    const changed = Math.max(1, Math.round(ARTICLES / 100))
    for (let i = 0; i < changed; i++) {
      const id = 1 + Math.floor((i * ARTICLES) / changed)
      z.update(id, { body: body(id, 2) })
    }
    const t1 = performance.now()
    await sources.refresh(tenant.id, source.id)
    const resynced = await until(() => runsDone(source.id, 2))
    const sentToIndex = await processing(source.id)
    const reindexed = await until(async () => (await processing(source.id)) === 0)
    const second = (await sources.detail(tenant.id, source.id)).last_sync!

    const s = (a: number, b: number) => (b - a) / 1000
    console.log(`database: ${ctx.database.kind}; fake Zendesk: ${ARTICLES} articles, ${LATENCY} ms per request, pages of 100`)
    console.log(
      `first sync: ${s(t0, synced).toFixed(1)} s = ${(ARTICLES / s(t0, synced)).toFixed(1)} articles/s (${first.added} added, ${first.skipped} skipped, ${first.status})`,
    )
    console.log(`until every article is indexed: ${s(t0, indexed).toFixed(1)} s`)
    console.log(
      `re-sync with ${changed} changed (1 %): ${s(t1, resynced).toFixed(1)} s (${second.updated} updated, ${second.unchanged} unchanged, ${second.status}); documents sent to re-index at its end: at most ${Math.max(sentToIndex, second.updated)}; indexed ${s(t1, reindexed).toFixed(1)} s after the refresh`,
    )
    console.log(
      `change upstream -> answerable with a sync every minute: at most 60 s + ${s(t1, reindexed).toFixed(1)} s = ${(60 + s(t1, reindexed)).toFixed(1)} s`,
    )
    console.log(`requests to the fake help centre: ${z.requests.length}`)
    const failedUrls = await sql<{ failed_urls: unknown }>`SELECT failed_urls FROM crawl_runs WHERE source_id = ${source.id} ORDER BY created_at`.execute(
      ctx.db,
    )
    for (const [i, r] of failedUrls.rows.entries()) {
      const list = (typeof r.failed_urls === 'string' ? JSON.parse(r.failed_urls) : r.failed_urls) as { url: string; reason: string }[]
      if (list.length)
        console.log(`run ${i + 1}: ${list.length} articles skipped, first reasons: ${[...new Set(list.map((f) => f.reason))].slice(0, 3).join('; ')}`)
    }
  } finally {
    await worker.stop(2000)
    await closeContext(ctx)
    await z.stop()
    rmSync(dataDir, { recursive: true, force: true })
    await scratch?.drop()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
