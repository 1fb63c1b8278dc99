/**
 * Retrieval quality on a BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv):
 *
 *   npm run eval:retrieval -- ../shared/data/retrieval/beir-scifact [--split train] [--mode bm25,vector,hybrid,tsrank]
 *        [--db postgres://...] [--k1 1.2] [--b 0.75] [--title-weight 3] [--limit-docs N] [--limit-queries N] [--budget 500] [--rounds 1]
 *        [--lexical-cache-mb 32] [--keep] [--tenant <id of a kept index>] [--embed-base-url URL --embed-model NAME] (key: EMBED_API_KEY)
 *
 * The corpus is indexed THROUGH THE REAL CODE: the documents service's indexText (the same chunking,
 * tsvector configuration and SQL as uploads; the lexical statistics follow by trigger), into an embedded
 * PGlite by default or the PostgreSQL given with --db (a tenant of its own, removed afterwards). Queries
 * run through the retrieval service; a document scores as its best chunk. Prints nDCG@10, MRR@10,
 * Recall@10, Recall@100 and p50/p95 query latency, one line per mode: bm25 (the lexical top 300), vector
 * (cosine top 100 over the chunks' embeddings), hybrid (the service's search() as a chat turn calls it: BM25
 * and vectors fused by RRF, then MMR to the top 10, so its Recall@100 is its Recall@10) and ts_rank
 * (PostgreSQL's, a baseline, on request). Vectors need an embedder: no package on the npm registry ships a
 * retrieval-grade sentence-embedding model (README, "Retrieval"), so without --embed-base-url (an
 * OpenAI-compatible /embeddings) the vector line says it was skipped and hybrid is BM25 through fusion and MMR.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import pino from 'pino'
import { openDatabase, type Db } from '../src/db/client.js'
import { JobQueue } from '../src/jobs/queue.js'
import { systemClock } from '../src/lib/clock.js'
import { createDocumentsRepo } from '../src/modules/documents/documents.repo.js'
import { createDocumentsService } from '../src/modules/documents/documents.service.js'
import type { LlmClient } from '../src/modules/llm/llm.js'
import { createOpenAiClient } from '../src/modules/llm/openai-client.js'
import { DEFAULT_BM25, orQuery } from '../src/modules/retrieval/bm25.fns.js'
import { cosine } from '../src/modules/retrieval/fusion.fns.js'
import { createRetrievalRepo } from '../src/modules/retrieval/retrieval.repo.js'
import { createRetrievalService } from '../src/modules/retrieval/retrieval.service.js'
import { readJsonl } from './support.js'

interface Args {
  dir: string
  split: string
  modes: string[]
  embedBaseUrl?: string
  embedModel: string
  db?: string
  k1: number
  b: number
  titleWeight: number
  limitDocs?: number
  limitQueries?: number
  keep: boolean
  budget: number
  tenant?: string
  rounds: number
  lexicalCacheMb: number
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    dir: '',
    split: 'train',
    modes: ['bm25', 'vector', 'hybrid'],
    embedModel: process.env.EMBEDDING_MODEL ?? 'text-embedding-3-small',
    k1: DEFAULT_BM25.k1,
    b: DEFAULT_BM25.b,
    titleWeight: DEFAULT_BM25.titleWeight ?? 1,
    keep: false,
    budget: 500,
    rounds: 1,
    lexicalCacheMb: 32,
  }
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i]!
    const next = () => argv[++i] ?? ''
    if (v === '--split') a.split = next()
    else if (v === '--mode') a.modes = next().split(',')
    else if (v === '--embed-base-url') a.embedBaseUrl = next()
    else if (v === '--embed-model') a.embedModel = next()
    else if (v === '--db') a.db = next()
    else if (v === '--k1') a.k1 = Number(next())
    else if (v === '--b') a.b = Number(next())
    else if (v === '--title-weight') a.titleWeight = Number(next())
    else if (v === '--limit-docs') a.limitDocs = Number(next())
    else if (v === '--limit-queries') a.limitQueries = Number(next())
    else if (v === '--keep') a.keep = true
    else if (v === '--budget') a.budget = Number(next())
    else if (v === '--tenant') a.tenant = next()
    else if (v === '--rounds') a.rounds = Number(next())
    else if (v === '--lexical-cache-mb') a.lexicalCacheMb = Number(next())
    else if (!v.startsWith('--')) a.dir = v
  }
  if (!a.dir) {
    console.error('usage: npm run eval:retrieval -- <beir-dir> [--split train] [--mode bm25,vector,hybrid,tsrank] [--db url]')
    process.exit(2)
  }
  return a
}

function readQrels(dir: string, split: string): Map<string, Map<string, number>> {
  const files = readdirSync(join(dir, 'qrels'))
  const file = files.find((f) => f === `${split}.tsv`) ?? files[0]
  if (!file) throw new Error('no qrels file')
  const out = new Map<string, Map<string, number>>()
  for (const line of readFileSync(join(dir, 'qrels', file), 'utf8')
    .split('\n')
    .slice(1)) {
    const [q, d, s] = line.trim().split('\t')
    if (!q || !d) continue
    const score = Number(s)
    if (!(score > 0)) continue
    if (!out.has(q)) out.set(q, new Map())
    out.get(q)!.set(d, score)
  }
  return out
}

/** The standard trec_eval definitions (graded gain 2^rel - 1 with log2 discount for nDCG). */
function metrics(ranked: string[], rel: Map<string, number>) {
  const dcg = (gains: number[]) => gains.reduce((acc, g, i) => acc + (2 ** g - 1) / Math.log2(i + 2), 0)
  const top10 = ranked.slice(0, 10)
  const ideal = [...rel.values()].sort((x, y) => y - x).slice(0, 10)
  const ndcg = ideal.length ? dcg(top10.map((d) => rel.get(d) ?? 0)) / dcg(ideal) : 0
  const first = top10.findIndex((d) => rel.has(d))
  const recall = (k: number) => ranked.slice(0, k).filter((d) => rel.has(d)).length / rel.size
  return { ndcg10: ndcg, mrr10: first >= 0 ? 1 / (first + 1) : 0, recall10: recall(10), recall100: recall(100) }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0
}

async function newTenant(db: Db): Promise<string> {
  const now = new Date()
  const user = await db
    .insertInto('users')
    .values({ email: `eval-${randomUUID()}@bench.test`, password_hash: 'x', created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow()
  const t = await db
    .insertInto('tenants')
    .values({ name: 'retrieval eval', owner_user_id: user.id, pii_optional_types: '[]', created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow()
  return t.id
}

/** ts_rank baseline: the same OR of the query's lexemes, ranked by PostgreSQL's ts_rank. */
async function tsRankSearch(db: Db, tenantId: string, query: string, k: number): Promise<{ document_id: string; score: number }[]> {
  const { rows: lex } = await sql<{ term: string }>`
    SELECT DISTINCT u.lexeme AS term FROM lexical_corpus c, unnest(c.langs) cfg, unnest(to_tsvector(cfg::regconfig, ${query})) u WHERE c.tenant_id = ${tenantId}`.execute(
    db,
  )
  if (!lex.length) return []
  const q = orQuery(lex.map((r) => r.term))
  const { rows } = await sql<{ document_id: string; score: number }>`
    SELECT document_id, max(ts_rank(tsv, ${q}::tsquery))::float8 AS score FROM chunks
    WHERE tenant_id = ${tenantId} AND tsv @@ ${q}::tsquery GROUP BY document_id ORDER BY score DESC LIMIT ${k}`.execute(db)
  return rows
}

/** Embeds the tenant's chunks that have no vector yet, 64 at a time (what the indexing job does per document). */
async function embedChunks(db: Db, pgvector: boolean, tenantId: string, llm: LlmClient, model: string, apiKey: string): Promise<number> {
  let n = 0
  for (;;) {
    const rows = await db.selectFrom('chunks').select(['id', 'content']).where('tenant_id', '=', tenantId).where('embedding', 'is', null).limit(64).execute()
    if (rows.length === 0) return n
    const { vectors } = await llm.embed({ apiKey, model, input: rows.map((r) => r.content) })
    for (const [i, r] of rows.entries()) {
      const v = vectors[i] ?? []
      const value = pgvector ? sql`${`[${v.join(',')}]`}::vector` : sql`${v}::real[]`
      await sql`UPDATE chunks SET embedding = ${value}, embedding_model = ${model} WHERE tenant_id = ${tenantId} AND id = ${r.id}`.execute(db)
    }
    n += rows.length
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2))
  const log = pino({ level: 'silent' })
  const handle = await openDatabase({ url: args.db ?? process.env.DATABASE_URL, pgliteDir: 'memory', poolSize: 4 })
  const db = handle.db
  const tenantId = args.tenant ?? (await newTenant(db))
  if (args.tenant) args.keep = true
  try {
    let corpus = readJsonl<{ _id: string; title?: string; text: string }>(join(args.dir, 'corpus.jsonl'))
    const queries = new Map(readJsonl<{ _id: string; text: string }>(join(args.dir, 'queries.jsonl')).map((q) => [q._id, q.text]))
    const qrels = readQrels(args.dir, args.split)
    if (args.limitDocs) {
      const needed = new Set([...qrels.values()].flatMap((m) => [...m.keys()]))
      corpus = [...corpus.filter((d) => needed.has(d._id)), ...corpus.filter((d) => !needed.has(d._id))].slice(0, args.limitDocs)
    }

    const documents = createDocumentsService({
      db,
      clock: systemClock,
      log: log as never,
      repo: createDocumentsRepo(db),
      queue: new JobQueue(db, systemClock),
      // texts this short are chunked inline; the worker pool is never asked
      parser: { chunk: () => Promise.reject(new Error('not used')), parse: () => Promise.reject(new Error('not used')), close: async () => {} } as never,
      llm: null as never,
      llmKey: async () => null,
      settings: { maxUploadBytes: 1 << 30, maxDocuments: 1 << 30, embeddingModel: 'none', embeddingBatch: 64, chunk: {} },
    })
    const t0 = performance.now()
    const docIdToBeir = new Map<string, string>()
    let chunks = 0
    let skipped = 0
    if (args.tenant) {
      // an index kept by an earlier run (--keep): map its documents back to the corpus ids
      for (const d of await db.selectFrom('documents').select(['id', 'filename']).where('tenant_id', '=', tenantId).execute()) {
        docIdToBeir.set(d.id, d.filename.replace(/\.txt$/, ''))
      }
      corpus = []
    }
    for (const [i, d] of corpus.entries()) {
      try {
        const r = await documents.indexText(
          tenantId,
          { filename: `${d._id}.txt`, title: d.title || null, text: d.text || d.title || '-' },
          { embed: false, enforceCapacity: false },
        )
        docIdToBeir.set(r.document.id, d._id)
        chunks += r.chunkCount
      } catch {
        skipped++ // duplicate texts are refused by the uploads' dedupe
      }
      if ((i + 1) % 1000 === 0) process.stderr.write(`indexed ${i + 1}/${corpus.length}\n`)
    }
    const indexSec = (performance.now() - t0) / 1000
    console.log(
      `database: ${handle.kind}${handle.features.vector ? ' (pgvector)' : ''}; indexed ${docIdToBeir.size} documents (${skipped} skipped) as ${chunks} chunks in ${indexSec.toFixed(1)} s`,
    )

    const repo = createRetrievalRepo(db, handle.features)
    const apiKey = process.env.EMBED_API_KEY ?? 'none'
    const llm = args.embedBaseUrl ? createOpenAiClient(args.embedBaseUrl) : null
    if (llm) {
      const te = performance.now()
      const n = await embedChunks(db, handle.features.vector, tenantId, llm, args.embedModel, apiKey)
      console.log(`embedded ${n} chunks with ${args.embedModel} in ${((performance.now() - te) / 1000).toFixed(1)} s`)
    }
    const retrieval = createRetrievalService({
      repo,
      llm: llm ?? { embed: async () => ({ vectors: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }) },
      features: handle.features,
      embeddingModel: args.embedModel,
      lexicalBudget: args.budget,
      lexicalRounds: args.rounds,
      vectorCacheBytes: 256 * 1024 * 1024,
      lexicalCacheBytes: args.lexicalCacheMb * 1024 * 1024,
      bm25: { k1: args.k1, b: args.b, titleWeight: args.titleWeight },
    })

    let evalQueries = [...qrels.keys()].filter((q) => queries.has(q))
    if (args.limitQueries) evalQueries = evalQueries.slice(0, args.limitQueries)
    const runs: { name: string; search: (q: string) => Promise<string[]> }[] = []
    const toBeir = (ids: { document_id: string; score: number }[]) => {
      const best = new Map<string, number>()
      for (const r of ids) if (!best.has(r.document_id) || best.get(r.document_id)! < r.score) best.set(r.document_id, r.score)
      return [...best.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([id]) => docIdToBeir.get(id)!)
        .filter(Boolean)
    }
    const want = (m: string) => args.modes.includes(m)
    if (want('bm25')) {
      runs.push({
        name: `bm25 (k1 ${args.k1}, b ${args.b}, title ${args.titleWeight})`,
        search: async (q) => toBeir((await retrieval.lexical(tenantId, q, 300)).rows),
      })
    }
    if (want('vector')) {
      if (llm) {
        const all: { document_id: string; embedding: number[] }[] = []
        if (!handle.features.vector) for await (const page of repo.allEmbeddings(tenantId, args.embedModel)) all.push(...page)
        runs.push({
          name: `vector (${args.embedModel})`,
          search: async (q) => {
            const v = (await llm.embed({ apiKey, model: args.embedModel, input: [q] })).vectors[0] ?? []
            if (handle.features.vector) return toBeir(await repo.vectorSearch(tenantId, v, args.embedModel, 100))
            return toBeir(all.map((r) => ({ document_id: r.document_id, score: cosine(v, r.embedding) })))
          },
        })
      } else console.log('vector                   skipped: no embedder (none ships on npm; --embed-base-url for an OpenAI-compatible one)')
    }
    if (want('hybrid')) {
      const hits = (r: { hits: { documentId: string | null; score: number }[] }) =>
        toBeir(r.hits.flatMap((h, i) => (h.documentId ? [{ document_id: h.documentId, score: r.hits.length - i }] : [])))
      runs.push({
        name: llm ? 'hybrid (bm25+vector)' : 'hybrid (bm25 only)',
        search: async (q) => hits(await retrieval.search(tenantId, q, { apiKey, k: 10 })),
      })
    }
    if (want('tsrank')) runs.push({ name: 'ts_rank (baseline)', search: async (q) => toBeir(await tsRankSearch(db, tenantId, q, 300)) })

    // one warm-up query so the first measured one does not pay for plan caches
    for (const r of runs) await r.search(queries.get(evalQueries[0]!)!)
    for (const run of runs) {
      const sums = { ndcg10: 0, mrr10: 0, recall10: 0, recall100: 0 }
      const lat: number[] = []
      for (const qid of evalQueries) {
        const s = performance.now()
        const ranked = await run.search(queries.get(qid)!)
        lat.push(performance.now() - s)
        const m = metrics(ranked, qrels.get(qid)!)
        for (const k of Object.keys(sums) as (keyof typeof sums)[]) sums[k] += m[k]
      }
      const n = evalQueries.length
      const f = (x: number) => (x / n).toFixed(4)
      console.log(
        `${run.name.padEnd(24)} queries ${n}  nDCG@10 ${f(sums.ndcg10)}  MRR@10 ${f(sums.mrr10)}  Recall@10 ${f(sums.recall10)}  Recall@100 ${f(sums.recall100)}  latency p50 ${pct(lat, 50).toFixed(1)} ms  p95 ${pct(lat, 95).toFixed(1)} ms`,
      )
    }
  } finally {
    // the eval tenant goes with everything it indexed (unless --keep, to look at it afterwards)
    if (args.keep) console.log(`kept tenant ${tenantId}`)
    else
      await db
        .deleteFrom('tenants')
        .where('id', '=', tenantId)
        .execute()
        .catch(() => {})
    if (!args.keep)
      await db
        .deleteFrom('users')
        .where('email', 'like', 'eval-%@bench.test')
        .where('tenant_id', 'is', null)
        .execute()
        .catch(() => {})
    await handle.close()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
