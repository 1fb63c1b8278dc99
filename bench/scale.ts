/**
 * bench:scale (issue 51): a vector search's cost against the size of a workspace's knowledge, on pgvector's exact scan
 * and on its shared HNSW index, with many small workspaces beside the large one.
 *
 *   npx tsx bench/scale.ts                      embedded database (PGlite with pgvector), sizes 3 and 20,000
 *   SCALE_SIZES=3,20000,200000 npx tsx bench/scale.ts
 *   DATABASE_URL=postgres://.../scratch npx tsx bench/scale.ts   a scratch database of its own (it is filled, not dropped)
 *
 * What it measures is retrieval's share of a turn (the statistics, BM25, the vector search, fusion, chunk details:
 * everything of a turn that grows with the knowledge), through the retrieval service itself with an embedding fake
 * that maps each question to its page's vector (plus noise): the questions share no word with their pages, so only
 * the vector side can find them. Per size: p50/p95 of a search, CPU per search (process CPU; on the embedded database
 * that includes the database, on PostgreSQL the server's is not seen here), whether the page reached the top 6,
 * recall@40 of the index against the exact scan, the index build time and the process's memory. Ratios are against
 * the 3-chunk workspace of the same run, measured before and after the large one exists.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { sql } from 'kysely'
import { openDatabase, type Db } from '../src/db/client.js'
import { JobQueue } from '../src/jobs/queue.js'
import { systemClock } from '../src/lib/clock.js'
import type { LlmClient } from '../src/modules/llm/llm.js'
import { createRetrievalRepo } from '../src/modules/retrieval/retrieval.repo.js'
import { createRetrievalService, type RetrievalResult } from '../src/modules/retrieval/retrieval.service.js'
import { preferredIndexType, vectorIndexSpec } from '../src/modules/retrieval/vector-index.fns.js'
import { createVectorIndexes, vectorIndexJobs } from '../src/modules/retrieval/vector-index.js'
import { createVectorIndexRepo } from '../src/modules/retrieval/vector-index.repo.js'

const SIZES = (process.env.SCALE_SIZES ?? '3,20000').split(',').map(Number)
const SMALL = Number(process.env.SCALE_SMALL ?? 200)
const DIMS = Number(process.env.SCALE_DIMS ?? 1536)
const QUERIES = Number(process.env.SCALE_QUERIES ?? 30)
const EF = Number(process.env.SCALE_EF_SEARCH ?? 100)
const MODEL = 'bench-embed'
/** maintenance_work_mem of the index build, in MB (the graph is built far faster while it fits) */
const BUILD_MB = Number(process.env.SCALE_BUILD_MB ?? 512)
/** sizes above this get no index build (SCALE_INDEX_MAX; e.g. 1M x 1,536 on two shared cores would take hours) */
const INDEX_MAX = Number(process.env.SCALE_INDEX_MAX ?? Number.POSITIVE_INFINITY)

function rng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const rand = rng(51)
const gauss = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand())
/** Topics: pages cluster around 500 centres, as help centres' pages do around their products' areas. */
const CENTRES = Array.from({ length: 500 }, () => Float32Array.from({ length: DIMS }, gauss))
const pageVector = (i: number) => {
  const c = CENTRES[i % CENTRES.length]!
  return Array.from(c, (x) => x + 0.7 * gauss())
}
const VOCAB = Array.from({ length: 3000 }, (_, i) => `term${i.toString(36)}`)
const pageText = () => Array.from({ length: 60 }, () => VOCAB[Math.floor(rand() * VOCAB.length)]).join(' ')
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const r1 = (x: number) => Math.round(x * 10) / 10

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')

/**
 * CPU seconds of the database server's backends serving this database (PostgreSQL on this machine: /proc of the pids
 * pg_stat_activity names); null on the embedded database, whose CPU is the process's own.
 */
async function serverCpuMs(db: Db, kind: string): Promise<number | null> {
  if (kind !== 'postgres') return null
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`.execute(
    db,
  )
  let ticks = 0
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(f[11]) + Number(f[12])
    } catch {
      return null
    }
  }
  return ticks * 10
}

async function tenant(db: Db): Promise<string> {
  const u = await sql<{
    id: string
  }>`INSERT INTO users (email, password_hash, created_at, updated_at) VALUES (${`${randomUUID()}@bench.test`}, 'x', now(), now()) RETURNING id`.execute(db)
  const t = await sql<{
    id: string
  }>`INSERT INTO tenants (name, owner_user_id, pii_optional_types, created_at, updated_at) VALUES ('bench', ${u.rows[0]!.id}, '[]', now(), now()) RETURNING id`.execute(
    db,
  )
  return t.rows[0]!.id
}

/** A workspace of n chunks; returns its chunks' ids and vectors (of the first `keep`, for questions). */
async function fill(db: Db, tenantId: string, n: number, keep: number, vector: boolean): Promise<{ ids: string[]; vecs: number[][] }> {
  const doc = await sql<{
    id: string
  }>`INSERT INTO documents (tenant_id, filename, file_type, title, content_hash, size_bytes) VALUES (${tenantId}, 'kb.md', 'markdown', 'kb', ${randomUUID()}, 1) RETURNING id`.execute(
    db,
  )
  const ids: string[] = []
  const vecs: number[][] = []
  const batch = 200
  for (let at = 0; at < n; at += batch) {
    const rows = []
    for (let i = at; i < Math.min(n, at + batch); i++) {
      const v = pageVector(i)
      if (vecs.length < keep) vecs.push(v)
      const text = pageText()
      rows.push(
        sql`(${tenantId}::uuid, ${doc.rows[0]!.id}::uuid, ${i}, ${text}, 60, 'english', to_tsvector('english', ${text}), ${vector ? sql`${`[${v.map((x) => x.toFixed(4)).join(',')}]`}::vector` : sql`${`{${v.map((x) => x.toFixed(4)).join(',')}}`}::real[]`}, ${MODEL})`,
      )
    }
    const r = await sql<{
      id: string
    }>`INSERT INTO chunks (tenant_id, document_id, ordinal, content, token_count, lang, tsv, embedding, embedding_model) VALUES ${sql.join(rows)} RETURNING id`.execute(
      db,
    )
    ids.push(...r.rows.map((x) => x.id))
  }
  return { ids, vecs }
}

async function main() {
  const handle = await openDatabase({ url: process.env.DATABASE_URL, pgliteDir: 'memory' })
  const { db } = handle
  const vector = handle.features.vector
  console.log(
    `bench:scale on ${handle.kind} ${vector ? 'with' : 'without'} pgvector, ${DIMS} dimensions, ${SMALL} small workspaces of 3 chunks, ${QUERIES} questions a size, ef_search ${EF}, load ${load()}`,
  )
  const byText = new Map<string, number[]>()
  const llm: Pick<LlmClient, 'embed'> = {
    embed: async (o) => ({ vectors: o.input.map((q) => byText.get(q) ?? []), usage: { prompt_tokens: 8, completion_tokens: 0, total_tokens: 8 } }),
  }
  const repo = createRetrievalRepo(db, handle.features)
  const indexRepo = createVectorIndexRepo(db, handle.kind)
  const base = {
    repo,
    llm,
    features: handle.features,
    embeddingModel: MODEL,
    lexicalBudget: 500,
    vectorCacheBytes: 80 * 1024 * 1024,
    lexicalCacheBytes: 32 * 1024 * 1024,
    detailCacheBytes: 16 * 1024 * 1024,
  }
  const exact = createRetrievalService(base)
  const queue = new JobQueue(db, systemClock, handle.changes)
  const indexed = createVectorIndexes({
    repo: indexRepo,
    queue,
    changes: handle.changes,
    settings: { model: MODEL, minChunks: 1000, efSearch: EF, prefer: preferredIndexType(handle.kind) },
  })
  const viaIndex = createRetrievalService({ ...base, vectorIndexes: indexed })

  // many small workspaces beside the large one, and the 3-chunk yardstick among them
  const t0 = performance.now()
  const smalls: { id: string; ids: string[]; vecs: number[][] }[] = []
  for (let s = 0; s < SMALL; s++) {
    const id = await tenant(db)
    smalls.push({ id, ...(await fill(db, id, 3, 3, vector)) })
  }
  console.log(`${SMALL} small workspaces in ${r1((performance.now() - t0) / 1000)} s`)

  let q = 0
  /** Asks `n` questions of a workspace, each mapped to one of its pages' vectors plus noise; the page must come back. */
  async function ask(service: typeof exact, tenantId: string, pages: { ids: string[]; vecs: number[][] }) {
    const times: number[] = []
    let cpu = 0
    let server = 0
    let found = 0
    let path: RetrievalResult['vectorPath']
    for (let i = 0; i < QUERIES; i++) {
      const p = i % pages.vecs.length
      const text = `question number ${q++} about zzqx`
      byText.set(
        text,
        pages.vecs[p]!.map((x) => x + 0.3 * gauss()),
      )
      const s0 = await serverCpuMs(db, handle.kind)
      const c0 = process.cpuUsage()
      const w0 = performance.now()
      const res = await service.search(tenantId, text, { apiKey: 'bench', k: 6 })
      times.push(performance.now() - w0)
      const c = process.cpuUsage(c0)
      cpu += (c.user + c.system) / 1000
      const s1 = await serverCpuMs(db, handle.kind)
      if (s0 !== null && s1 !== null) server += s1 - s0
      path = res.vectorPath
      if (res.hits.some((h) => h.id === pages.ids[p])) found++
    }
    return { p50: pct(times, 50), p95: pct(times, 95), cpu: cpu / QUERIES, server: server / QUERIES, found, path }
  }
  const line = (label: string, r: Awaited<ReturnType<typeof ask>>, yard?: Awaited<ReturnType<typeof ask>>) =>
    console.log(
      `${label.padEnd(34)} p50 ${r1(r.p50)} ms, p95 ${r1(r.p95)} ms, CPU ${r1(r.cpu)}${handle.kind === 'postgres' ? ` + ${r1(r.server)} (PostgreSQL)` : ''} ms a search, page in the top 6: ${r.found}/${QUERIES}, path ${r.path}` +
        (yard ? ` | ratio to 3 chunks: p95 ${r1(r.p95 / yard.p95)}x, CPU ${r1((r.cpu + r.server) / (yard.cpu + yard.server))}x` : '') +
        `, load ${load()}`,
    )
  const yardstick = smalls[0]!
  // warm up (statement plans, caches) before anything is counted
  await ask(exact, yardstick.id, yardstick)
  const small0 = await ask(exact, yardstick.id, yardstick)
  line('3 chunks, before the large one', small0)

  for (const size of SIZES.filter((s) => s > 3)) {
    const id = await tenant(db)
    const f0 = performance.now()
    const pages = await fill(db, id, size, QUERIES, vector)
    console.log(`\n${size} chunks: filled in ${r1((performance.now() - f0) / 1000)} s (${Math.round(size / ((performance.now() - f0) / 1000))} chunks/s)`)
    await sql`ANALYZE chunks`.execute(db)
    if (handle.kind === 'postgres') {
      const { rows } = await sql<{ size: string }>`SELECT pg_size_pretty(pg_total_relation_size('chunks')) AS size`.execute(db)
      console.log(`chunks table with its indexes: ${rows[0]!.size}`)
    }
    await ask(exact, id, pages)
    const ex = await ask(exact, id, pages)
    line(`${size} chunks, ${vector ? 'exact scan' : 'without pgvector'}`, ex, small0)
    const spec = vectorIndexSpec(MODEL, DIMS, preferredIndexType(handle.kind))!
    if (vector && size <= INDEX_MAX) {
      const b0 = performance.now()
      const [job] = vectorIndexJobs({ db, repo: indexRepo, changes: handle.changes, maintenanceMb: BUILD_MB, log: { info() {} } })
      await job!.handler({ model: MODEL, dims: DIMS, type: spec.type }, { jobId: 'bench', attempt: 1, signal: new AbortController().signal })
      console.log(
        `HNSW index (${spec.type}, cosine, m 16, ef_construction 64) over the table: ${r1((performance.now() - b0) / 1000)} s (${await indexRepo.state(spec)})`,
      )
      await sql`ANALYZE chunks`.execute(db)
      await ask(viaIndex, id, pages)
      const ix = await ask(viaIndex, id, pages)
      line(`${size} chunks, HNSW index`, ix, small0)
      // recall@40 of the index path against the exact scan, on the questions' vectors
      let hit = 0
      let all = 0
      for (let i = 0; i < QUERIES; i++) {
        const v = pages.vecs[i % pages.vecs.length]!.map((x) => x + 0.3 * gauss())
        const truth = new Set((await repo.vectorSearch(id, v, MODEL, 40)).map((r) => r.id))
        const got = await repo.vectorSearch(id, v, MODEL, 40, { spec, efSearch: EF })
        hit += got.filter((r) => truth.has(r.id)).length
        all += truth.size
      }
      console.log(`recall@40 of the index against the exact scan: ${(hit / all).toFixed(3)}`)
    }
    const small = await ask(viaIndex, yardstick.id, yardstick)
    line('3 chunks, beside it', small, small0)
    const other = smalls[Math.floor(SMALL / 2)]!
    line('another small workspace, beside it', await ask(viaIndex, other.id, other), small0)
    const mem = process.memoryUsage()
    console.log(
      `process memory: rss ${Math.round(mem.rss / 1048576)} MB, heap ${Math.round(mem.heapUsed / 1048576)} MB, external+buffers ${Math.round((mem.external + mem.arrayBuffers) / 1048576)} MB`,
    )
    if (vector) await sql`DROP INDEX IF EXISTS ${sql.id(spec.name)}`.execute(db)
  }
  await handle.close()
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
