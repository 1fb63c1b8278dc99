import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { openDatabase, type DatabaseHandle, type Db } from '../src/db/client.js'
import { JobQueue } from '../src/jobs/queue.js'
import { systemClock } from '../src/lib/clock.js'
import type { LlmClient } from '../src/modules/llm/llm.js'
import { createRetrievalRepo } from '../src/modules/retrieval/retrieval.repo.js'
import { createRetrievalService } from '../src/modules/retrieval/retrieval.service.js'
import { preferredIndexType, vectorIndexSpec } from '../src/modules/retrieval/vector-index.fns.js'
import { createVectorIndexes, vectorIndexJobs } from '../src/modules/retrieval/vector-index.js'
import { createVectorIndexRepo } from '../src/modules/retrieval/vector-index.repo.js'
import { rng } from './helpers/rng.js'

/**
 * pgvector's shared HNSW index (issue 51) on the embedded database, which has pgvector: a small workspace keeps the exact
 * scan, a workspace past the (test-sized) threshold enqueues the index build and searches through the index once it is
 * valid, and the index's top 40 is that of the exact scan for at least 95 % of its rows. On PostgreSQL without pgvector
 * there is no index to test (test/retrieval-vector-cache.test.ts covers that side).
 */
const DIMS = 96
const MODEL = 'test-embed'
const MIN_CHUNKS = 400

let handle: DatabaseHandle
let db: Db

/** Vectors around 40 centres, as topics cluster: the harder case for a graph than uniform noise is not needed here. */
function vectors(n: number, seed: number): number[][] {
  const r = rng(seed)
  const gauss = () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r())
  const centres = Array.from({ length: 40 }, () => Array.from({ length: DIMS }, gauss))
  return Array.from({ length: n }, (_, i) => centres[i % centres.length]!.map((c) => c + 0.8 * gauss()))
}

async function newTenant(): Promise<string> {
  const user = await db
    .insertInto('users')
    .values({ email: `${randomUUID()}@x.test`, password_hash: 'x', created_at: new Date(), updated_at: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow()
  const t = await db
    .insertInto('tenants')
    .values({ name: 't', owner_user_id: user.id, pii_optional_types: '[]', created_at: new Date(), updated_at: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow()
  return t.id
}

/** A workspace of one document whose chunks carry `embs` (their words shared by all, so words decide nothing). */
async function workspace(embs: number[][]): Promise<{ tenantId: string; ids: string[] }> {
  const tenantId = await newTenant()
  const doc = await db
    .insertInto('documents')
    .values({ tenant_id: tenantId, filename: 'kb.md', file_type: 'markdown', title: 'kb', content_hash: randomUUID(), size_bytes: 1 })
    .returning('id')
    .executeTakeFirstOrThrow()
  const ids: string[] = []
  for (let at = 0; at < embs.length; at += 500) {
    const values = embs
      .slice(at, at + 500)
      .map(
        (v, i) =>
          sql`(${tenantId}::uuid, ${doc.id}::uuid, ${at + i}, 'general notes', 2, 'english', to_tsvector('english', 'general notes'), ${`[${v.join(',')}]`}::vector, ${MODEL})`,
      )
    const { rows } = await sql<{ id: string }>`
      INSERT INTO chunks (tenant_id, document_id, ordinal, content, token_count, lang, tsv, embedding, embedding_model) VALUES ${sql.join(values)}
      RETURNING id`.execute(db)
    ids.push(...rows.map((r) => r.id))
  }
  return { tenantId, ids }
}

beforeAll(async () => {
  handle = await openDatabase({ url: inject('databaseUrl'), pgliteDir: 'memory' })
  db = handle.db
})
afterAll(async () => handle?.close())

describe('vector search through the shared HNSW index (pgvector)', () => {
  it('keeps small workspaces exact, builds the index for one past the size, then searches through it with the exact top 40', async (t) => {
    if (!handle.features.vector) return t.skip()
    const data = vectors(1200, 7)
    const big = await workspace(data.slice(0, 1000))
    const small = await workspace(data.slice(1000, 1100))
    const queries = vectors(20, 99)

    const byText = new Map<string, number[]>()
    const llm: Pick<LlmClient, 'embed'> = {
      embed: async (o) => ({ vectors: o.input.map((q) => byText.get(q) ?? []), usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } }),
    }
    queries.forEach((v, i) => byText.set(`question ${i}`, v))
    const queue = new JobQueue(db, systemClock, handle.changes)
    const indexRepo = createVectorIndexRepo(db, handle.kind)
    const repo = createRetrievalRepo(db, handle.features)
    const indexes = createVectorIndexes({
      repo: indexRepo,
      queue,
      changes: handle.changes,
      settings: { model: MODEL, minChunks: MIN_CHUNKS, efSearch: 100, prefer: preferredIndexType(handle.kind) },
    })
    const retrieval = createRetrievalService({
      repo,
      llm,
      features: handle.features,
      embeddingModel: MODEL,
      lexicalBudget: 500,
      vectorCacheBytes: 0,
      vectorIndexes: indexes,
    })
    const spec = vectorIndexSpec(MODEL, DIMS, preferredIndexType(handle.kind))!

    // before the index: both exact; the big workspace asks for its index once
    expect((await retrieval.search(small.tenantId, 'question 0', { apiKey: 'k' })).vectorPath).toBe('exact')
    expect((await retrieval.search(big.tenantId, 'question 0', { apiKey: 'k' })).vectorPath).toBe('exact')
    const queued = await db.selectFrom('jobs').select(['payload', 'status']).where('kind', '=', 'retrieval.vector_index').execute()
    expect(queued.map((j) => (typeof j.payload === 'string' ? JSON.parse(j.payload) : j.payload))).toEqual([{ model: MODEL, dims: DIMS, type: spec.type }])
    expect(await indexRepo.state(spec)).toBe('absent')

    // the job builds it (twice is harmless) and announces it: the next search of the big workspace goes through it
    const [job] = vectorIndexJobs({ db, repo: indexRepo, changes: handle.changes, maintenanceMb: 64, log: { info() {} } })
    const ctx = { jobId: 'j', attempt: 1, signal: new AbortController().signal }
    await job!.handler({ model: MODEL, dims: DIMS, type: spec.type }, ctx)
    await job!.handler({ model: MODEL, dims: DIMS, type: spec.type }, ctx)
    expect(await indexRepo.state(spec)).toBe('valid')
    const res = await retrieval.search(big.tenantId, 'question 1', { apiKey: 'k' })
    expect(res.vectorPath).toBe('index')
    expect(res.hits.length).toBeGreaterThan(0)
    expect(big.ids).toContain(res.hits[0]!.id)
    expect((await retrieval.search(small.tenantId, 'question 1', { apiKey: 'k' })).vectorPath).toBe('exact')

    // the planner takes the index for the index path's statement (its cast and predicate match), not for the exact one
    const plan = async (index: boolean) => {
      const q = `[${queries[0]!.join(',')}]`
      const inner = index
        ? sql`SELECT id FROM chunks WHERE tenant_id = ${big.tenantId} AND embedding_model = ${sql.lit(MODEL)} AND vector_dims(embedding) = ${sql.lit(DIMS)}
              ORDER BY (embedding::${sql.raw(`${spec.type}(96)`)}) <=> ${q}::${sql.raw(`${spec.type}(96)`)} LIMIT 40`
        : sql`SELECT id FROM chunks WHERE tenant_id = ${big.tenantId} AND embedding IS NOT NULL AND vector_dims(embedding) = ${DIMS}
              ORDER BY embedding <=> ${q}::vector LIMIT 40`
      const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${inner}`.execute(db)
      return rows.map((r) => r['QUERY PLAN']).join('\n')
    }
    expect(await plan(true)).toContain(spec.name)
    expect(await plan(false)).not.toContain(spec.name)

    // recall@40 of the index path (ef_search 100, iterative scan, exact re-order) against the exact scan
    let found = 0
    let total = 0
    for (const q of queries) {
      const exact = await repo.vectorSearch(big.tenantId, q, MODEL, 40)
      const approx = await repo.vectorSearch(big.tenantId, q, MODEL, 40, { spec, efSearch: 100 })
      expect(approx).toHaveLength(40)
      expect(approx.every((r) => big.ids.includes(r.id))).toBe(true)
      const truth = new Set(exact.map((r) => r.id))
      found += approx.filter((r) => truth.has(r.id)).length
      total += exact.length
    }
    expect(found / total).toBeGreaterThanOrEqual(0.95)
  })
})
