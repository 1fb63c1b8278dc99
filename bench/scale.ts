/**
 * bench:scale (issue 51): a vector search's cost against the size of a workspace's knowledge, on pgvector's exact scan
 * and on its shared HNSW index, with many small workspaces beside the large one.
 *
 *   npx tsx bench/scale.ts                      embedded database (PGlite with pgvector), sizes 3 and 20,000
 *   SCALE_SIZES=3,20000,200000 npx tsx bench/scale.ts
 *   DATABASE_URL=postgres://.../scratch npx tsx bench/scale.ts   a scratch database of its own (it is filled, not dropped)
 *   SCALE_FILL=copy                 the large workspaces written in bulk (COPY; arrays on the embedded database): 1M in minutes
 *   SCALE_REUSE=1 SCALE_ONE_BUILD=1 an earlier run's workspaces searched again; one index build over all of them
 *   SCALE_EXACT_QUERIES, SCALE_RECALL_QUERIES, SCALE_EF_SEARCH, SCALE_BUILD_MB, SCALE_KEEP_INDEX=1, SCALE_PGLITE_DIR
 *   (the 1M run and its settings: docs/performance.md, issue 51 session 24)
 *   SCALE_VECTORS=latent|iid        the pages' and questions' vectors (bench/scale-vectors.ts says why latent is the
 *                                   default since session 25: iid is the worst case of any graph index, not text embeddings)
 *   SCALE_EF_SWEEP=40,100,200,400   recall@40 (plain and with distance tolerance) and the index statement's cost at each
 *                                   ef_search (bench/scale-recall.ts)
 *   SCALE_TURNS=N [SCALE_TURNS_ONLY=1]  N whole turns a workspace through the real service over HTTP, PostgreSQL only
 *                                   (bench/scale-turns.ts); session 25's figures: docs/performance.md
 *   SCALE_PREWARM=1                 with SCALE_ONE_BUILD on PostgreSQL: before measuring on the index, pg_prewarm (the
 *                                   contrib module, created in the scratch database) loads chunks' HNSW index(es), its
 *                                   heap and its TOAST table into shared buffers, as a server sized to hold them would
 *                                   have them (session 26: docs/performance.md); MB and time printed. shared_buffers
 *                                   must be larger than those, else the later relations push out the earlier
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
import pg from 'pg'
import { openDatabase, type Db } from '../src/db/client.js'
import { JobQueue } from '../src/jobs/queue.js'
import { systemClock } from '../src/lib/clock.js'
import type { LlmClient } from '../src/modules/llm/llm.js'
import { createRetrievalRepo } from '../src/modules/retrieval/retrieval.repo.js'
import { createRetrievalService, type RetrievalResult } from '../src/modules/retrieval/retrieval.service.js'
import { preferredIndexType, vectorIndexSpec } from '../src/modules/retrieval/vector-index.fns.js'
import { createVectorIndexes, vectorIndexJobs } from '../src/modules/retrieval/vector-index.js'
import { createVectorIndexRepo } from '../src/modules/retrieval/vector-index.repo.js'
import { recallSweep } from './scale-recall.js'
import { wholeTurns } from './scale-turns.js'
import { type VectorKind, vectorGenerators } from './scale-vectors.js'
import { rng } from '../test/helpers/rng.js'

const SIZES = (process.env.SCALE_SIZES ?? '3,20000').split(',').map(Number)
const SMALL = Number(process.env.SCALE_SMALL ?? 200)
const DIMS = Number(process.env.SCALE_DIMS ?? 1536)
const QUERIES = Number(process.env.SCALE_QUERIES ?? 30)
const EF = Number(process.env.SCALE_EF_SEARCH ?? 100)
const MODEL = 'bench-embed'
/** SCALE_EF_SWEEP=40,100,200,400: recall and the index statement's cost at each ef_search (default: SCALE_EF_SEARCH's alone) */
/** SCALE_TURNS=N: N whole turns a workspace through the real service over HTTP (bench/scale-turns.ts; PostgreSQL only) */
const TURNS = Number(process.env.SCALE_TURNS ?? 0)
/** SCALE_TURNS_ONLY=1: with SCALE_ONE_BUILD, the index searches and recall are skipped, only the turns measured */
const TURNS_ONLY = process.env.SCALE_TURNS_ONLY === '1'
const EF_SWEEP = (process.env.SCALE_EF_SWEEP ?? String(EF)).split(',').map(Number)
/** maintenance_work_mem of the index build, in MB (the graph is built far faster while it fits) */
const BUILD_MB = Number(process.env.SCALE_BUILD_MB ?? 512)
/** sizes above this get no index build (SCALE_INDEX_MAX; e.g. 1M x 1,536 on two shared cores would take hours) */
const INDEX_MAX = Number(process.env.SCALE_INDEX_MAX ?? Number.POSITIVE_INFINITY)
/** questions on the exact scan and for recall (SCALE_EXACT_QUERIES; at 1M each exact scan costs seconds); 0: none */
const EXACT_QUERIES = Number(process.env.SCALE_EXACT_QUERIES ?? QUERIES)
/** questions for recall@40 (each one exact scan beside the index search); SCALE_RECALL_QUERIES, default as many as the exact scan's */
const RECALL_QUERIES = Number(process.env.SCALE_RECALL_QUERIES ?? (EXACT_QUERIES || QUERIES))
/** SCALE_REUSE=1: the workspaces of an earlier run on this database (same sizes) are searched again, not filled again */
const REUSE = process.env.SCALE_REUSE === '1'
/** SCALE_ONE_BUILD=1: every size filled first, then one index over all of them (instead of one build per size) */
const ONE_BUILD = process.env.SCALE_ONE_BUILD === '1'
/** SCALE_KEEP_INDEX=1: the index is left in place at the end (for EXPLAIN, or a later SCALE_REUSE run) */
const KEEP_INDEX = process.env.SCALE_KEEP_INDEX === '1'
/** SCALE_PREWARM=1: the HNSW index(es), heap and TOAST of chunks loaded into shared buffers before measuring (pg_prewarm) */
const PREWARM = process.env.SCALE_PREWARM === '1'

const rand = rng(51)
/** SCALE_VECTORS: latent (default) or iid, the generators and why: bench/scale-vectors.ts */
const VECTORS = (process.env.SCALE_VECTORS ?? 'latent') as VectorKind
if (VECTORS !== 'latent' && VECTORS !== 'iid') throw new Error(`SCALE_VECTORS=${VECTORS}: latent or iid`)
const generators = vectorGenerators(VECTORS, DIMS, rand, Number(process.env.SCALE_LATENT_DIMS ?? 32))
const pageVector = generators.page
const questionVector = generators.question
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
  let parent = 0
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(f[11]) + Number(f[12])
      parent = Number(f[1])
    } catch {
      return null
    }
  }
  // the exact scan runs in parallel workers, which exit after each statement: their CPU is counted in the postmaster's
  // (their parent's) reaped-children time; on a shared server that includes other databases' exited backends, so the
  // figures are for a private cluster (autovacuum off while measuring)
  if (parent > 1) {
    try {
      const stat = readFileSync(`/proc/${parent}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(f[13]) + Number(f[14])
    } catch {}
  }
  return ticks * 10
}

/**
 * SCALE_PREWARM=1: chunks' HNSW indexes, its heap, its TOAST relation and the TOAST index read into shared buffers with pg_prewarm
 * ('buffer' mode), so the searches measured find them there as on a server whose shared_buffers hold them.
 */
async function prewarmChunks(db: Db) {
  await sql`CREATE EXTENSION IF NOT EXISTS pg_prewarm`.execute(db)
  const { rows } = await sql<{ rel: string }>`
    SELECT i.indexrelid::regclass::text AS rel FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
    WHERE i.indrelid = 'chunks'::regclass AND a.amname = 'hnsw'
    UNION ALL SELECT 'chunks'
    UNION ALL SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'chunks'::regclass AND reltoastrelid <> 0
    UNION ALL SELECT i.indexrelid::regclass::text FROM pg_index i JOIN pg_class c ON c.reltoastrelid = i.indrelid WHERE c.oid = 'chunks'::regclass`.execute(db)
  const { rows: sb } = await sql<{ setting: string }>`SELECT current_setting('shared_buffers') AS setting`.execute(db)
  let total = 0
  const t0 = performance.now()
  for (const { rel } of rows) {
    const r0 = performance.now()
    const { rows: got } = await sql<{ blocks: string }>`SELECT pg_prewarm(${rel}::regclass) AS blocks`.execute(db)
    const mb = (Number(got[0]!.blocks) * 8) / 1024
    total += mb
    console.log(`  prewarmed ${rel}: ${Math.round(mb)} MB in ${r1((performance.now() - r0) / 1000)} s, load ${load()}`)
  }
  console.log(`prewarm: ${Math.round(total)} MB into shared_buffers of ${sb[0]!.setting} in ${r1((performance.now() - t0) / 1000)} s, load ${load()}`)
}

const relationSize = async (db: Db, name: string) =>
  (await sql<{ size: string }>`SELECT pg_size_pretty(pg_relation_size(${name}::regclass)) AS size`.execute(db)).rows[0]!.size

/** Bench workspaces of exactly `n` chunks left by an earlier run (lexical_corpus counts them). */
async function workspacesOf(db: Db, n: number, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT c.tenant_id AS id FROM lexical_corpus c JOIN tenants t ON t.id = c.tenant_id
    WHERE t.name = 'bench' AND c.n_chunks = ${n} AND c.n_embedded = ${n} ORDER BY t.created_at, t.id LIMIT ${limit}`.execute(db)
  return rows.map((r) => r.id)
}

/** The first `keep` pages of an earlier run's workspace: their ids and stored vectors (the questions are drawn around these). */
async function pagesOf(db: Db, tenantId: string, keep: number, vector: boolean): Promise<{ ids: string[]; vecs: number[][] }> {
  const { rows } = await sql<{ id: string; v: string }>`
    SELECT id, ${vector ? sql`embedding::text` : sql`array_to_string(embedding, ',')`} AS v FROM chunks
    WHERE tenant_id = ${tenantId} ORDER BY ordinal LIMIT ${keep}`.execute(db)
  return {
    ids: rows.map((r) => r.id),
    vecs: rows.map((r) =>
      r.v
        .replace(/[[\]{}]/g, '')
        .split(',')
        .map(Number),
    ),
  }
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

/**
 * SCALE_FILL=copy (PostgreSQL): the large workspace's chunks written straight into `chunks` with COPY, 20,000 rows a
 * statement, so a million fill in minutes instead of the default INSERT's hours. The rows are the default fill's, which
 * are the columns the app's ingestion writes (documents.repo.ts: tenant, document, ordinal, content, token count,
 * language, tsvector) plus the embedding and its model as the embedding job writes them (a `vector` literal): the
 * same page texts and page vectors from the same generators, ids made here (gen_random_uuid's kind), the tsvector
 * built here from each vocabulary word's lexeme as PostgreSQL's own `to_tsvector('english', ...)` gives it (asked once,
 * then checked against `to_tsvector` on the first 1,000 rows written: a mismatch stops the run), and the lexical
 * triggers fire on each COPY statement as on each INSERT (COPY runs statement triggers with their transition tables),
 * so `lexical_terms` and `lexical_corpus` come out as the app's would. The vectors are written with 4 decimals, as the
 * default fill writes them.
 */
const FILL = process.env.SCALE_FILL ?? 'insert'
const COPY_ROWS = 20_000

/** '[x,y,...]' with 4 decimals into `buf` at `at`, without a string per number; returns the new offset. */
function writeVector(buf: Buffer, at: number, v: ArrayLike<number>): number {
  buf[at++] = 0x5b
  for (let j = 0; j < v.length; j++) {
    if (j) buf[at++] = 0x2c
    let n = Math.round(v[j]! * 10000)
    if (n < 0) {
      buf[at++] = 0x2d
      n = -n
    }
    const int = Math.floor(n / 10000)
    let frac = n - int * 10000
    at += buf.write(String(int), at, 'latin1')
    buf[at++] = 0x2e
    for (let d = 1000; d >= 1; d = d / 10) {
      const digit = Math.floor(frac / d)
      buf[at++] = 0x30 + digit
      frac -= digit * d
    }
  }
  buf[at++] = 0x5d
  return at
}

/** COPY ... FROM STDIN over a pg client (the protocol's copy-in, as pg-copy-streams does it), from a generator of buffers. */
function copyIn(client: pg.Client, text: string, chunks: () => Generator<Buffer>): Promise<number> {
  return new Promise((resolve, reject) => {
    let error: Error | null = null
    let count = 0
    const submittable = {
      submit(connection: any) {
        connection.query(text)
      },
      handleCopyInResponse(connection: any) {
        const stream = connection.stream
        const it = chunks()
        const pump = () => {
          for (let r = it.next(); !r.done; r = it.next()) {
            connection.sendCopyFromChunk(r.value)
            if (stream.writableNeedDrain) {
              stream.once('drain', pump)
              return
            }
          }
          connection.endCopyFrom()
        }
        pump()
      },
      handleCommandComplete(msg: { text?: string }) {
        count = Number(
          String(msg.text ?? '')
            .split(' ')
            .pop(),
        )
      },
      handleReadyForQuery() {
        if (error) reject(error)
        else resolve(count)
      },
      handleError(err: Error) {
        error = err
      },
      handleRowDescription() {},
      handleDataRow() {},
      handleEmptyQuery() {},
      handlePortalSuspended() {},
      handleCopyData() {},
    }
    // pg runs any object with submit() as a query of its own
    ;(client as any).query(submittable)
  })
}

/** Each vocabulary word's lexeme as `to_tsvector('english', word)` gives it (every word must be one plain lexeme). */
async function lexemes(db: Db): Promise<Map<string, string>> {
  const { rows } = await sql<{ w: string; l: string[] }>`SELECT w, tsvector_to_array(to_tsvector('english', w)) AS l FROM unnest(${VOCAB}::text[]) w`.execute(
    db,
  )
  const lexeme = new Map<string, string>()
  for (const r of rows) {
    if (r.l.length !== 1 || /['\\\s]/.test(r.l[0]!)) throw new Error(`the word ${r.w} is not one plain lexeme: ${r.l.join(' ')}`)
    lexeme.set(r.w, r.l[0]!)
  }
  return lexeme
}

/** One page of the large workspace: its text, the tsvector literal `to_tsvector('english', text)` gives, its vector. */
function bulkRow(i: number, lexeme: Map<string, string>) {
  const v = pageVector(i)
  const words = pageText().split(' ')
  const pos = new Map<string, number[]>()
  words.forEach((w, p) => {
    const l = lexeme.get(w)!
    const list = pos.get(l)
    if (list) list.push(p + 1)
    else pos.set(l, [p + 1])
  })
  const tsv = [...pos].map(([l, ps]) => `'${l}':${ps.join(',')}`).join(' ')
  return { id: randomUUID(), content: words.join(' '), tsv, v }
}

/** The first 1,000 rows' tsvectors against PostgreSQL's own to_tsvector: the bulk fills write what the app would. */
async function checkTsv(db: Db, tenantId: string) {
  const { rows } = await sql<{
    n: number
  }>`SELECT count(*)::int AS n FROM chunks WHERE tenant_id = ${tenantId} AND ordinal < 1000 AND tsv IS DISTINCT FROM to_tsvector('english', content)`.execute(
    db,
  )
  if (rows[0]!.n > 0) throw new Error(`${rows[0]!.n} of the first 1,000 tsvectors differ from to_tsvector's`)
}

const newDocument = async (db: Db, tenantId: string) =>
  (
    await sql<{
      id: string
    }>`INSERT INTO documents (tenant_id, filename, file_type, title, content_hash, size_bytes) VALUES (${tenantId}, 'kb.md', 'markdown', 'kb', ${randomUUID()}, 1) RETURNING id`.execute(
      db,
    )
  ).rows[0]!.id

/**
 * SCALE_FILL=copy on the embedded database (which has no COPY FROM STDIN through this driver): the same rows as
 * fillByCopy, 1,000 a statement as arrays (unnest), the vector and tsvector literals cast by the database.
 */
async function fillBulkInsert(db: Db, tenantId: string, n: number, keep: number): Promise<{ ids: string[]; vecs: number[][] }> {
  const lexeme = await lexemes(db)
  const docId = await newDocument(db, tenantId)
  const ids: string[] = []
  const vecs: number[][] = []
  const buf = Buffer.alloc(64 * 1024)
  for (let at = 0; at < n; at += 1000) {
    const cols = { id: [] as string[], o: [] as number[], c: [] as string[], t: [] as string[], v: [] as string[] }
    for (let i = at; i < Math.min(n, at + 1000); i++) {
      const r = bulkRow(i, lexeme)
      if (vecs.length < keep) {
        vecs.push(r.v)
        ids.push(r.id)
      }
      cols.id.push(r.id)
      cols.o.push(i)
      cols.c.push(r.content)
      cols.t.push(r.tsv)
      cols.v.push(buf.toString('latin1', 0, writeVector(buf, 0, r.v)))
    }
    await sql`
      INSERT INTO chunks (id, tenant_id, document_id, ordinal, content, token_count, lang, tsv, embedding, embedding_model)
      SELECT x.id, ${tenantId}::uuid, ${docId}::uuid, x.o, x.c, 60, 'english', x.t::tsvector, x.v::vector, ${MODEL}
      FROM unnest(${cols.id}::uuid[], ${cols.o}::int[], ${cols.c}::text[], ${cols.t}::text[], ${cols.v}::text[]) AS x(id, o, c, t, v)
    `.execute(db)
    if (at === 0) await checkTsv(db, tenantId)
    if ((at + 1000) % 20_000 === 0) console.log(`  ${at + 1000} chunks inserted, ${Math.round(process.memoryUsage().rss / 1048576)} MB rss, load ${load()}`)
  }
  return { ids, vecs }
}

async function fillByCopy(db: Db, tenantId: string, n: number, keep: number): Promise<{ ids: string[]; vecs: number[][] }> {
  const lexeme = await lexemes(db)
  const docId = await newDocument(db, tenantId)
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  try {
    const ids: string[] = []
    const vecs: number[][] = []
    const buf = Buffer.alloc(64 * 1024 * 1024)
    for (let at = 0; at < n; at += COPY_ROWS) {
      const end = Math.min(n, at + COPY_ROWS)
      const rows = function* () {
        let off = 0
        for (let i = at; i < end; i++) {
          const r = bulkRow(i, lexeme)
          if (vecs.length < keep) {
            vecs.push(r.v)
            ids.push(r.id)
          }
          off += buf.write(`${r.id}\t${tenantId}\t${docId}\t${i}\t${r.content}\t60\tenglish\t${r.tsv}\t`, off, 'latin1')
          off = writeVector(buf, off, r.v)
          off += buf.write(`\t${MODEL}\n`, off, 'latin1')
          if (off > buf.length - 256 * 1024) {
            yield Buffer.from(buf.subarray(0, off))
            off = 0
          }
        }
        if (off) yield Buffer.from(buf.subarray(0, off))
      }
      await copyIn(client, 'COPY chunks (id, tenant_id, document_id, ordinal, content, token_count, lang, tsv, embedding, embedding_model) FROM STDIN', rows)
      if (at === 0) await checkTsv(db, tenantId)
      if (end % 100_000 === 0 || end === n) console.log(`  ${end} chunks copied, load ${load()}`)
    }
    return { ids, vecs }
  } finally {
    await client.end()
  }
}

async function main() {
  // SCALE_PGLITE_DIR: the embedded database on disk, as the service runs it by default (a fresh folder; default in memory)
  const handle = await openDatabase({ url: process.env.DATABASE_URL, pgliteDir: process.env.SCALE_PGLITE_DIR ?? 'memory' })
  const { db } = handle
  const vector = handle.features.vector
  console.log(
    `bench:scale on ${handle.kind} ${vector ? 'with' : 'without'} pgvector, ${DIMS} dimensions, ${VECTORS} vectors, ${SMALL} small workspaces of 3 chunks, ${QUERIES} questions a size, ef_search ${EF}, load ${load()}`,
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
  if (REUSE) await sql`ANALYZE chunks`.execute(db)
  if (REUSE) for (const id of await workspacesOf(db, 3, SMALL)) smalls.push({ id, ...(await pagesOf(db, id, 3, vector)) })
  const reused = smalls.length
  for (let s = smalls.length; s < SMALL; s++) {
    const id = await tenant(db)
    smalls.push({ id, ...(await fill(db, id, 3, 3, vector)) })
  }
  console.log(`${SMALL} small workspaces (${reused} of an earlier run) in ${r1((performance.now() - t0) / 1000)} s`)

  let q = 0
  /** Asks `n` questions of a workspace, each mapped to one of its pages' vectors plus noise; the page must come back. */
  async function ask(service: typeof exact, tenantId: string, pages: { ids: string[]; vecs: number[][] }, questions = QUERIES) {
    const times: number[] = []
    let cpu = 0
    let server = 0
    let found = 0
    let path: RetrievalResult['vectorPath']
    for (let i = 0; i < questions; i++) {
      const p = i % pages.vecs.length
      const text = `question number ${q++} about zzqx`
      byText.set(text, questionVector(pages.vecs[p]!))
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
    return { p50: pct(times, 50), p95: pct(times, 95), cpu: cpu / questions, server: server / questions, found, questions, path }
  }
  const line = (label: string, r: Awaited<ReturnType<typeof ask>>, yard?: Awaited<ReturnType<typeof ask>>) =>
    console.log(
      `${label.padEnd(34)} p50 ${r1(r.p50)} ms, p95 ${r1(r.p95)} ms, CPU ${r1(r.cpu)}${handle.kind === 'postgres' ? ` + ${r1(r.server)} (PostgreSQL)` : ''} ms a search, page in the top 6: ${r.found}/${r.questions}, path ${r.path}` +
        (yard ? ` | ratio to 3 chunks: p95 ${r1(r.p95 / yard.p95)}x, CPU ${r1((r.cpu + r.server) / (yard.cpu + yard.server))}x` : '') +
        `, load ${load()}`,
    )
  const yardstick = smalls[0]!
  // warm up (statement plans, caches) before anything is counted
  await ask(exact, yardstick.id, yardstick)
  const small0 = await ask(exact, yardstick.id, yardstick)
  line(reused ? "3 chunks (an earlier run's large ones there)" : '3 chunks, before the large one', small0)

  const spec = vectorIndexSpec(MODEL, DIMS, preferredIndexType(handle.kind))!
  async function buildIndex() {
    const b0 = performance.now()
    const [job] = vectorIndexJobs({ db, repo: indexRepo, changes: handle.changes, maintenanceMb: BUILD_MB, log: { info() {} } })
    await job!.handler({ model: MODEL, dims: DIMS, type: spec.type }, { jobId: 'bench', attempt: 1, signal: new AbortController().signal })
    const rows = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM chunks WHERE embedding_model = ${MODEL}`.execute(db)).rows[0]!.n
    console.log(
      `HNSW index (${spec.type}, cosine, m 16, ef_construction 64, maintenance_work_mem ${BUILD_MB} MB) over the table's ${rows} rows: ${r1((performance.now() - b0) / 1000)} s (${await indexRepo.state(spec)}${handle.kind === 'postgres' ? `, ${await relationSize(db, spec.name)}` : ''}), load ${load()}`,
    )
    await sql`ANALYZE chunks`.execute(db)
  }
  /** The index path on a workspace, its recall@40 against the exact scan, and the small workspaces beside it. */
  async function viaIndexOn(size: number, id: string, pages: { ids: string[]; vecs: number[][] }) {
    await ask(viaIndex, id, pages)
    const ix = await ask(viaIndex, id, pages)
    line(`${size} chunks, HNSW index`, ix, small0)
    // recall@40 of the index path against the exact scan, on the questions' vectors (at each SCALE_EF_SWEEP value)
    await recallSweep({
      label: `${size} chunks`,
      search: repo.vectorSearch,
      tenantId: id,
      model: MODEL,
      spec,
      pages,
      questions: RECALL_QUERIES,
      efs: EF_SWEEP,
      question: questionVector,
      serverCpuMs: () => serverCpuMs(db, handle.kind),
      load,
    })
  }
  async function smallsBeside() {
    const small = await ask(viaIndex, yardstick.id, yardstick)
    line('3 chunks, beside it', small, small0)
    const other = smalls[Math.floor(SMALL / 2)]!
    line('another small workspace, beside it', await ask(viaIndex, other.id, other), small0)
    const mem = process.memoryUsage()
    console.log(
      `process memory: rss ${Math.round(mem.rss / 1048576)} MB, heap ${Math.round(mem.heapUsed / 1048576)} MB, external+buffers ${Math.round((mem.external + mem.arrayBuffers) / 1048576)} MB`,
    )
  }

  const large: { size: number; id: string; pages: { ids: string[]; vecs: number[][] } }[] = []
  for (const size of SIZES.filter((s) => s > 3)) {
    const [again] = REUSE ? await workspacesOf(db, size, 1) : []
    let id: string
    let pages: { ids: string[]; vecs: number[][] }
    if (again) {
      id = again
      pages = await pagesOf(db, id, QUERIES, vector)
      console.log(`\n${size} chunks: the workspace of an earlier run`)
    } else {
      id = await tenant(db)
      const f0 = performance.now()
      pages =
        FILL === 'copy' && vector
          ? handle.kind === 'postgres'
            ? await fillByCopy(db, id, size, QUERIES)
            : await fillBulkInsert(db, id, size, QUERIES)
          : await fill(db, id, size, QUERIES, vector)
      console.log(`\n${size} chunks: filled in ${r1((performance.now() - f0) / 1000)} s (${Math.round(size / ((performance.now() - f0) / 1000))} chunks/s)`)
      await sql`ANALYZE chunks`.execute(db)
    }
    large.push({ size, id, pages })
    if (handle.kind === 'postgres') {
      const { rows } = await sql<{ size: string }>`SELECT pg_size_pretty(pg_total_relation_size('chunks')) AS size`.execute(db)
      console.log(`chunks table with its indexes: ${rows[0]!.size}`)
    }
    if (EXACT_QUERIES > 0) {
      await ask(exact, id, pages, Math.min(2, EXACT_QUERIES))
      const ex = await ask(exact, id, pages, EXACT_QUERIES)
      line(`${size} chunks, ${vector ? 'exact scan' : 'without pgvector'}`, ex, small0)
    }
    if (ONE_BUILD) continue
    if (vector && size <= INDEX_MAX) {
      await buildIndex()
      await viaIndexOn(size, id, pages)
    }
    await smallsBeside()
    if (vector) await sql`DROP INDEX IF EXISTS ${sql.id(spec.name)}`.execute(db)
  }
  if (ONE_BUILD && vector) {
    // one index over every workspace of the run, each workspace searched through it beside all the others
    console.log('')
    if ((await indexRepo.state(spec)) !== 'valid') await buildIndex()
    else console.log(`HNSW index of an earlier run kept (${handle.kind === 'postgres' ? await relationSize(db, spec.name) : ''})`)
    if (PREWARM && handle.kind === 'postgres') await prewarmChunks(db)
    if (!TURNS_ONLY) {
      for (const w of large) await viaIndexOn(w.size, w.id, w.pages)
      await smallsBeside()
    }
  }
  if (TURNS > 0 && handle.kind === 'postgres') {
    // whole turns through the service (bench/scale-turns.ts): the 3-chunk yardstick, each large workspace, another small one
    console.log('')
    const other = smalls[Math.floor(SMALL / 2)]!
    await wholeTurns({
      db,
      dbUrl: process.env.DATABASE_URL!,
      model: MODEL,
      dims: DIMS,
      efSearch: EF,
      turns: TURNS,
      workspaces: [
        { label: '3 chunks', id: yardstick.id, pages: yardstick },
        ...large.map((w) => ({ label: `${w.size} chunks`, id: w.id, pages: w.pages })),
        { label: '3 chunks, again', id: yardstick.id, pages: yardstick },
        { label: 'another 3-chunk workspace', id: other.id, pages: other },
      ],
      question: questionVector,
      load,
    })
  }
  if (ONE_BUILD && vector && !KEEP_INDEX) await sql`DROP INDEX IF EXISTS ${sql.id(spec.name)}`.execute(db)
  await handle.close()
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
