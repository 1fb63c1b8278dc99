/**
 * Answer-pipeline figures (npm run bench:chat):
 *   1. POST /chat at BENCH_CONNECTIONS (default 50) concurrent clients for BENCH_DURATION seconds (default 15)
 *      against a real server process (`dist/src/server.js`, built as `npm start` builds it) on a scratch PostgreSQL database, with the fake model
 *      (`scripts/fake-llm.ts`, answering instantly) in its own process. The tenant has ~BENCH_CHUNKS (default
 *      1,000) chunks indexed through the real documents service, with embeddings: every turn runs the whole
 *      pipeline (guard call, hybrid retrieval with a query embedding, streamed answer, validation call,
 *      persistence). Reports turns/s, latency, the time the service adds on top of the model (each turn's
 *      logged total minus the time a model call was in flight), and the server's RSS under load.
 *   3. (run first) Time to the first answer token through the widget's SSE route, one visitor at a time
 *      (BENCH_TTFT_TURNS, default 60; 0 skips), against a second fake model that takes BENCH_TTFT_MS (default
 *      300) per call, with the speculative answer off then on (CHAT_SPECULATIVE_ANSWER), each for new
 *      questions then the same questions again (query embedding cached), over the time to the first token
 *      of one bare call to that model measured in the same run (bench/chat-ttft.ts).
 *   2. Retrieval latency with BENCH_BIG_CHUNKS (default 100,000) chunks in one tenant (text drawn from the
 *      corpus, embeddings of 256 dimensions), through the retrieval service the turn uses: BM25 alone and
 *      hybrid (0 skips this part).
 *
 * Env: DATABASE_URL (server on which the scratch database is created; default postgres://root@127.0.0.1:5432/test),
 * BENCH_CORPUS (BEIR folder for the texts; default ../shared/data/retrieval/beir-scifact), BENCH_QUESTIONS=titles (ask about
 * the indexed papers by title instead of SciFact's claims: nearly every turn answered, none handed off). The machine is
 * shared: keep the runs short; figures move with whatever else runs. BENCH_ONLY_RETRIEVAL=1 runs part 2 only.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import autocannon from 'autocannon'
import { sql } from 'kysely'
import pino from 'pino'
import { openDatabase, type Db } from '../src/db/client.js'
import { JobQueue } from '../src/jobs/queue.js'
import { systemClock } from '../src/lib/clock.js'
import { createCipher, lastChars, sha256Hex } from '../src/lib/crypto.js'
import { newPublicId } from '../src/modules/bots/bots.fns.js'
import { createDocumentsRepo } from '../src/modules/documents/documents.repo.js'
import { createDocumentsService } from '../src/modules/documents/documents.service.js'
import { createOpenAiClient } from '../src/modules/llm/openai-client.js'
import { createRetrievalRepo } from '../src/modules/retrieval/retrieval.repo.js'
import { createRetrievalService } from '../src/modules/retrieval/retrieval.service.js'
import { FAKE_EMBEDDING_FLOOR, fakeEmbedding } from '../test/fakes/fake-llm.js'
import { oneCallMs, ttftLine, widgetTtft, type TurnLog } from './chat-ttft.js'
import { backendsOf, cpuSeconds, processTree, freePort, readJsonl, scratchDatabase, startNodeFlags } from './support.js'

const BASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const DURATION = Number(process.env.BENCH_DURATION ?? 15)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 1000)
const BIG = Number(process.env.BENCH_BIG_CHUNKS ?? 100_000)
const CORPUS = process.env.BENCH_CORPUS ?? '../shared/data/retrieval/beir-scifact'
const TTFT_TURNS = Number(process.env.BENCH_TTFT_TURNS ?? 60)
const TTFT_MS = Number(process.env.BENCH_TTFT_MS ?? 300)
/** Turns one at a time after a silence each (default 0: none), as a quiet service gets them: BENCH_QUIET_GAP_S apart (default 12). */
const QUIET_TURNS = Number(process.env.BENCH_QUIET_TURNS ?? 0)
const QUIET_GAP_S = Number(process.env.BENCH_QUIET_GAP_S ?? 12)
const SECRETS = { JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('hex') }
const LLM_KEY = 'sk-bench-0123456789'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN
}

/** A TypeScript script under tsx, or a built .js file (the server, as `npm start` runs it) with plain node. */
function spawnTsx(script: string, env: Record<string, string>, onLine?: (line: string) => void, nodeArgs: string[] = []): ChildProcess {
  const child = spawn(process.execPath, [...nodeArgs, ...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  if (onLine) createInterface({ input: child.stdout! }).on('line', onLine)
  else child.stdout!.resume()
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)))
  child.on('exit', (code) => {
    if (code && code !== 0 && code !== 143) console.error(`${script} exited ${code}: ${stderr}`)
  })
  return child
}

async function waitFor(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`process exited before ${url} answered`)
    try {
      const r = await fetch(url, { headers: { authorization: 'Bearer x' } })
      if (r.status < 500) return
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready`)
    await sleep(50)
  }
}

const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
}

const treeCpu = (pid: number) => processTree(pid).reduce((a, p) => a + cpuSeconds(p), 0)
const treeRss = (pid: number) => processTree(pid).reduce((a, p) => a + rssMb(p), 0)

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

/** A tenant with an encrypted model key, a widget API key and a bot, written directly (no mail round trip). */
async function seedTenant(db: Db): Promise<{ tenantId: string; apiKey: string; publicId: string }> {
  const cipher = createCipher(SECRETS.ENCRYPTION_KEY)
  const now = new Date()
  const user = await db
    .insertInto('users')
    .values({ email: `bench-${randomBytes(4).toString('hex')}@bench.test`, password_hash: 'x', is_verified: true, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow()
  const tenant = await db
    .insertInto('tenants')
    .values({
      name: 'bench',
      owner_user_id: user.id,
      llm_key_enc: cipher.encrypt(LLM_KEY),
      llm_key_hint: lastChars(LLM_KEY),
      pii_optional_types: '["ID_DOC","IP","URL_TOKEN"]',
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db.updateTable('users').set({ tenant_id: tenant.id }).where('id', '=', user.id).execute()
  const apiKey = `ck_${randomBytes(16).toString('hex')}`
  await db
    .insertInto('api_keys')
    .values({ tenant_id: tenant.id, key_hash: sha256Hex(apiKey), key_hint: lastChars(apiKey), status: 'active', created_at: now })
    .execute()
  const publicId = newPublicId()
  await db
    .insertInto('bots')
    .values({ tenant_id: tenant.id, name: 'Bench Bot', public_id: publicId, allowed_domains: '[]', created_at: now, updated_at: now })
    .execute()
  return { tenantId: tenant.id, apiKey, publicId }
}

async function main() {
  const corpus = readJsonl<{ _id: string; title?: string; text: string }>(join(CORPUS, 'corpus.jsonl'))
  let questions = readJsonl<{ _id: string; text: string }>(join(CORPUS, 'queries.jsonl')).map((q) => q.text)
  const scratch = await scratchDatabase(BASE_URL, 'chat')
  const { name: dbName, url: dbUrl } = scratch
  const fakePort = await freePort()
  const fake = spawnTsx('scripts/fake-llm.ts', { FAKE_LLM_PORT: String(fakePort) })
  const llmUrl = `http://127.0.0.1:${fakePort}/v1`
  let server: ChildProcess | null = null
  const handle = await openDatabase({ url: dbUrl, pgliteDir: 'memory', poolSize: 4 })
  const db = handle.db
  try {
    await waitFor(`${llmUrl}/models`, fake)
    const llm = createOpenAiClient(llmUrl)

    // --- 1. a tenant with ~CHUNKS chunks, indexed and embedded by the documents service
    if (process.env.BENCH_ONLY_RETRIEVAL !== '1') {
      const tenant = await seedTenant(db)
      const { tenantId, apiKey } = tenant
      const documents = createDocumentsService({
        db,
        clock: systemClock,
        log: pino({ level: 'silent' }) as never,
        repo: createDocumentsRepo(db),
        queue: new JobQueue(db, systemClock),
        parser: { chunk: () => Promise.reject(new Error('not used')), parse: () => Promise.reject(new Error('not used')), close: async () => {} } as never,
        llm,
        llmKey: async () => LLM_KEY,
        settings: { maxUploadBytes: 1 << 30, maxDocuments: 1 << 30, embeddingModel: 'text-embedding-3-small', embeddingBatch: 64, chunk: {} },
      })
      let chunks = 0
      const t0 = performance.now()
      const titles: string[] = []
      for (const d of corpus) {
        if (chunks >= CHUNKS) break
        if (d.title) titles.push(d.title)
        chunks += (
          await documents.indexText(tenantId, { filename: `${d._id}.md`, title: d.title || null, text: d.text }, { embed: true, enforceCapacity: false })
        ).chunkCount
      }
      await sql`VACUUM ANALYZE chunks`.execute(db)
      console.log(`indexed ${chunks} chunks with embeddings in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      // BENCH_QUESTIONS=titles: a visitor asks about an indexed paper by its title, so nearly every turn is answered
      // (SciFact's claims are mostly handed off): the cost of an answered turn alone
      if (process.env.BENCH_QUESTIONS === 'titles') {
        questions = titles.map((title) => `What does the study "${title.replace(/\.$/, '')}" find?`)
        console.log(`questions: ${questions.length} asking about indexed papers by their titles (BENCH_QUESTIONS=titles)`)
      }

      // --- the server, its per-turn log lines, and its memory
      const turns: ({ service: number; model: number; total: number } & Record<string, number>)[] = []
      const logged: TurnLog[] = []
      execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'ignore' })
      const startServer = async (env: Record<string, string>, profile: boolean) => {
        const port = await freePort()
        const child = spawnTsx(
          'dist/src/server.js',
          {
            HOST: '127.0.0.1',
            PORT: String(port),
            DATABASE_URL: dbUrl,
            LLM_BASE_URL: llmUrl,
            ...FAKE_EMBEDDING_FLOOR,
            RATE_LIMIT_ENABLED: 'false',
            RUN_WORKER: 'false',
            LOG_LEVEL: 'info',
            NODE_ENV: 'production',
            // one HTTP process, as before the supervisor existed (bench:cluster compares 1 and N); BENCH_FLOOR sets
            // RETRIEVAL_FLOOR_LEXICAL (0: the relevance floor off, to compare turn costs when most claims are handed off)
            WEB_CONCURRENCY: process.env.BENCH_WEB_CONCURRENCY ?? '1',
            ...(process.env.BENCH_FLOOR ? { RETRIEVAL_FLOOR_LEXICAL: process.env.BENCH_FLOOR } : {}),
            // BENCH_POOL_IDLE_SECONDS: the server's DATABASE_POOL_IDLE_SECONDS (10 was pg's default before it had one)
            ...(process.env.BENCH_POOL_IDLE_SECONDS ? { DATABASE_POOL_IDLE_SECONDS: process.env.BENCH_POOL_IDLE_SECONDS } : {}),
            ...SECRETS,
            ...env,
          },
          (line) => {
            if (!line.includes('"chat turn"')) return
            try {
              const l = JSON.parse(line) as TurnLog & { timings?: (typeof turns)[number] }
              if (l.timings) turns.push({ ...l.timings, answered: l.decision === 'answer' ? 1 : 0 })
              logged.push({ decision: l.decision, speculation: l.speculation, speculation_why: l.speculation_why, handoff: l.handoff })
            } catch {
              // not a JSON line
            }
          },
          // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server when it stops; BENCH_NODE_ARGS adds node flags
          [
            ...startNodeFlags(),
            ...(profile && process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
            ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
          ],
        )
        const url = `http://127.0.0.1:${port}`
        await waitFor(`${url}/health`, child)
        return { child, url }
      }

      // --- 3 first: time to the first answer token with a model that takes TTFT_MS per call, speculation off and on
      if (TTFT_TURNS > 0) {
        const slowPort = await freePort()
        const slow = spawnTsx('scripts/fake-llm.ts', { FAKE_LLM_PORT: String(slowPort), FAKE_LLM_LATENCY_MS: String(TTFT_MS) })
        const slowUrl = `http://127.0.0.1:${slowPort}/v1`
        try {
          await waitFor(`${slowUrl}/models`, slow)
          const one = await oneCallMs(slowUrl)
          console.log(`fake model at ${TTFT_MS} ms a call: one bare streamed call, first token p50 ${one.toFixed(0)} ms`)
          for (const speculative of ['false', 'true']) {
            const s = await startServer({ LLM_BASE_URL: slowUrl, CHAT_SPECULATIVE_ANSWER: speculative }, false)
            try {
              const run = () => widgetTtft({ base: s.url, publicId: tenant.publicId, questions, turns: TTFT_TURNS, logged })
              await widgetTtft({ base: s.url, publicId: tenant.publicId, questions: questions.slice(-5), turns: 5, logged }) // warm-up
              // new questions, then the same ones again (their query embeddings are cached by then)
              for (const pass of ['new questions', 'asked again']) {
                const r = await run()
                console.log(ttftLine(`widget SSE, speculative answer ${speculative === 'true' ? 'on' : 'off'}, ${pass}`, r.answered, one))
                console.log(`  turns by decision/speculation: ${JSON.stringify(r.outcomes)}`)
              }
            } finally {
              await stop(s.child)
            }
          }
        } finally {
          await stop(slow)
        }
        turns.length = 0
      }

      const started = await startServer({}, true)
      server = started.child
      const base = started.url
      const pid = server.pid!

      let qi = 0
      const body = () => JSON.stringify({ question: questions[qi++ % questions.length] })
      const headers = { 'content-type': 'application/json', 'x-api-key': apiKey }
      // warm-up: JIT, connection pools, vector cache
      await autocannon({
        url: `${base}/chat`,
        method: 'POST',
        connections: 10,
        amount: 300,
        headers,
        requests: [{ setupRequest: (r) => ({ ...r, body: body() }) }],
      })
      // The warm-up grew the turn's tables from empty in seconds, and PostgreSQL planned the turn's prepared statements
      // on the statistics of empty tables (the session's lock then walked the tenant's sessions by creation time instead
      // of taking its primary key). A deployment has them analysed by autovacuum within its first minute, which also
      // replans the prepared statements: do now what it would.
      await sql`ANALYZE chat_sessions, chat_messages, escalation_tickets, jobs, question_log, live_events, live_counters, ticket_counters`.execute(db)
      // the same run's yardstick on a shared machine: GET /health's latency at one client (figures are compared as ratios to it)
      const healthLat: number[] = []
      for (let i = 0; i < 300; i++) {
        const s = performance.now()
        await (await fetch(`${base}/health`)).arrayBuffer()
        healthLat.push(performance.now() - s)
      }
      const healthMs = pct(healthLat, 50)
      console.log(`GET /health, one client: p50 ${healthMs.toFixed(2)} ms, p95 ${pct(healthLat, 95).toFixed(2)} ms (the run's yardstick)`)
      // one client at a time: what a turn costs the service when nothing queues
      turns.length = 0
      await autocannon({
        url: `${base}/chat`,
        method: 'POST',
        connections: 1,
        amount: 150,
        headers,
        requests: [{ setupRequest: (r) => ({ ...r, body: body() }) }],
      })
      const solo = turns.map((t) => t.service)
      console.log(
        `one client: time the service adds on top of the model p50 ${pct(solo, 50).toFixed(1)} ms, p95 ${pct(solo, 95).toFixed(1)} ms; model in flight p50 ${pct(
          turns.map((t) => t.model),
          50,
        ).toFixed(1)} ms; turn total p50 ${pct(
          turns.map((t) => t.total),
          50,
        ).toFixed(1)} ms`,
      )
      const soloPersist = pct(
        turns.map((t) => t.persist ?? 0),
        50,
      )
      console.log(
        `  over GET /health: service ${(pct(solo, 50) / Math.max(healthMs, 0.01)).toFixed(1)} x, persist ${(soloPersist / Math.max(healthMs, 0.01)).toFixed(1)} x`,
      )
      const persistOf = (answered: number) => turns.filter((t) => t.answered === answered).map((t) => t.persist ?? 0)
      console.log(
        `  persist p50: answered turns ${pct(persistOf(1), 50).toFixed(1)} ms (${persistOf(1).length}), hand-offs ${pct(persistOf(0), 50).toFixed(1)} ms (${persistOf(0).length})`,
      )
      const soloStages = [...new Set(turns.flatMap((t) => Object.keys(t)))].filter((k) => k !== 'answered')
      console.log(
        `  per stage, median ms: ${soloStages
          .map(
            (k) =>
              `${k} ${pct(
                turns.map((t) => t[k] ?? 0),
                50,
              ).toFixed(1)}`,
          )
          .join(', ')}`,
      )
      {
        // persist's yardstick in the same run: a one-row durable INSERT on the same PostgreSQL after the idle that a
        // one-client turn's write follows (the rest of its turn), so the machine's wake-ups and the commit's WAL flush
        // are in both (a hand-off's write is one statement too, over nine tables)
        const idleMs = Math.max(
          1,
          Math.round(
            pct(
              turns.map((t) => t.total - (t.persist ?? 0)),
              50,
            ),
          ),
        )
        await sql`CREATE TABLE IF NOT EXISTS bench_yardstick (id bigserial PRIMARY KEY, at timestamptz NOT NULL)`.execute(db)
        const one: number[] = []
        for (let i = 0; i < 150; i++) {
          await sleep(idleMs)
          const s = performance.now()
          await sql`INSERT INTO bench_yardstick (at) VALUES (now())`.execute(db)
          one.push(performance.now() - s)
        }
        const insertMs = pct(one, 50)
        console.log(
          `  persist's yardstick: a one-row durable INSERT after ${idleMs} ms idle p50 ${insertMs.toFixed(2)} ms; persist p50 ${(soloPersist / insertMs).toFixed(1)} x it`,
        )
      }
      if (QUIET_TURNS > 0) {
        // a quiet service: each turn after a silence longer than an idle connection's life used to be (10 s)
        turns.length = 0
        for (let i = 0; i < QUIET_TURNS; i++) {
          await sleep(QUIET_GAP_S * 1000)
          await (await fetch(`${base}/chat`, { method: 'POST', headers, body: body() })).arrayBuffer()
        }
        await sleep(500) // the last turn's log line
        console.log(
          `quiet service, ${turns.length} turns ${QUIET_GAP_S} s apart: the service adds p50 ${pct(
            turns.map((t) => t.service),
            50,
          ).toFixed(1)} ms (one client back to back: ${pct(solo, 50).toFixed(1)} ms), persist p50 ${pct(
            turns.map((t) => t.persist ?? 0),
            50,
          ).toFixed(1)} ms, retrieval p50 ${pct(
            turns.map((t) => t.retrieval ?? 0),
            50,
          ).toFixed(1)} ms`,
        )
      }
      turns.length = 0

      const rss: number[] = []
      const cpu0 = { server: treeCpu(pid), fake: cpuSeconds(fake.pid!), pg: backendsOf(dbName).reduce((a, p) => a + cpuSeconds(p), 0) }
      const sampler = setInterval(() => rss.push(treeRss(pid)), 250)
      const loggedBefore = logged.length
      const result = await autocannon({
        url: `${base}/chat`,
        method: 'POST',
        connections: CONNECTIONS,
        duration: DURATION,
        headers,
        requests: [{ setupRequest: (r) => ({ ...r, body: body() }) }],
      })
      clearInterval(sampler)
      const ok = result.requests.total - result.non2xx
      const perTurn = (s: number) => ((s * 1000) / Math.max(ok, 1)).toFixed(1)
      const cpu = {
        server: treeCpu(pid) - cpu0.server,
        fake: cpuSeconds(fake.pid!) - cpu0.fake,
        pg: backendsOf(dbName).reduce((a, p) => a + cpuSeconds(p), 0) - cpu0.pg,
      }
      console.log(
        `POST /chat, ${CONNECTIONS} clients, ${DURATION} s: ${(ok / DURATION).toFixed(0)} turns/s (${ok} ok, ${result.non2xx} non-2xx, ${result.errors} errors); latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
      )
      const byOutcome: Record<string, number> = {}
      for (const l of logged.slice(loggedBefore))
        byOutcome[`${l.decision}/${l.speculation ?? 'none'}`] = (byOutcome[`${l.decision}/${l.speculation ?? 'none'}`] ?? 0) + 1
      console.log(`  turns by decision/speculation: ${JSON.stringify(byOutcome)}`)
      const handOffs = logged.slice(loggedBefore).filter((l) => l.handoff)
      if (handOffs.length)
        console.log(
          `  hand-offs written with the turn's statement: ${handOffs.filter((l) => l.handoff === 'with_turn').length} of ${handOffs.length} (the rest by the hand-off's transaction)`,
        )
      const service = turns.map((t) => t.service)
      console.log(
        `${CONNECTIONS} clients: time the service adds on top of the model (per turn, total - model in flight): p50 ${pct(service, 50).toFixed(1)} ms, p95 ${pct(service, 95).toFixed(1)} ms; model in flight p50 ${pct(
          turns.map((t) => t.model),
          50,
        ).toFixed(1)} ms (${turns.length} turns logged)`,
      )
      const stages = [...new Set(turns.flatMap((t) => Object.keys(t)))].filter((k) => k !== 'answered')
      console.log(
        `per stage, median ms: ${stages
          .map(
            (k) =>
              `${k} ${pct(
                turns.map((t) => t[k] ?? 0),
                50,
              ).toFixed(1)}`,
          )
          .join(', ')}`,
      )
      console.log(
        `CPU per turn: server ${perTurn(cpu.server)} ms, PostgreSQL ${perTurn(cpu.pg)} ms, fake model ${perTurn(cpu.fake)} ms (machine load average ${loadavg()[0]!.toFixed(1)})`,
      )
      console.log(`server RSS under load: max ${Math.max(...rss).toFixed(0)} MB, median ${pct(rss, 50).toFixed(0)} MB`)
      await stop(server)
      server = null
    }

    // --- 2. retrieval with BIG chunks in one tenant
    if (BIG > 0) {
      const big = await seedTenant(db)
      const docId = (
        await db
          .insertInto('documents')
          .values({
            tenant_id: big.tenantId,
            filename: 'big.md',
            file_type: 'markdown',
            title: 'big',
            content_hash: randomBytes(8).toString('hex'),
            size_bytes: 0,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id
      const dims = 256
      const tb = performance.now()
      const BATCH = 2000
      for (let start = 0; start < BIG; start += BATCH) {
        const rows = []
        for (let i = start; i < Math.min(BIG, start + BATCH); i++) {
          // every abstract appears about BIG / corpus times, each copy with a different ordinal number word so the rows differ
          const d = corpus[i % corpus.length]!
          const content = `${d.title ?? ''}. ${d.text} Variant ${Math.floor(i / corpus.length)}.`
          rows.push({
            ordinal: i,
            content,
            token_count: Math.ceil(content.length / 4),
            embedding: `{${Array.from(fakeEmbedding(content, dims), (x) => x.toFixed(5)).join(',')}}`,
          })
        }
        await sql`
          INSERT INTO chunks (tenant_id, document_id, ordinal, content, token_count, lang, tsv, embedding, embedding_model)
          SELECT ${big.tenantId}::uuid, ${docId}::uuid, x.ordinal, x.content, x.token_count, 'english', to_tsvector('english', x.content),
                 ${handle.features.vector ? sql`x.embedding::real[]::vector` : sql`x.embedding::real[]`}, 'text-embedding-3-small'
          FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(ordinal int, content text, token_count int, embedding text)`.execute(db)
        if ((start / BATCH) % 10 === 9) process.stderr.write(`big tenant: ${start + BATCH} chunks\n`)
      }
      await sql`VACUUM ANALYZE chunks`.execute(db)
      await sql`ANALYZE lexical_terms`.execute(db)
      console.log(`big tenant: ${BIG} chunks inserted in ${((performance.now() - tb) / 1000).toFixed(0)} s`)
      const measure = async (name: string, cacheMb: number, hybrid: boolean) => {
        const retrieval = createRetrievalService({
          repo: createRetrievalRepo(db, handle.features),
          llm,
          features: handle.features,
          embeddingModel: 'text-embedding-3-small',
          embeddingDimensions: dims,
          lexicalBudget: 3000,
          vectorCacheBytes: cacheMb * 1024 * 1024,
        })
        const lat: number[] = []
        const qs = questions.slice(0, 220)
        for (const [i, q] of qs.entries()) {
          const s = performance.now()
          await retrieval.search(big.tenantId, q, { apiKey: hybrid ? LLM_KEY : null, k: 6 })
          if (i >= 20) lat.push(performance.now() - s) // the first ones warm caches
        }
        console.log(
          `retrieval, ${BIG} chunks in one tenant, ${name}: p50 ${pct(lat, 50).toFixed(1)} ms, p95 ${pct(lat, 95).toFixed(1)} ms (${lat.length} queries)`,
        )
      }
      await measure('BM25 only', 0, false)
      await measure('hybrid, vectors over the BM25 candidates (cache budget too small)', 64, true)
      await measure('hybrid, exact cosine over all vectors in process', 160, true)
    }
  } finally {
    if (server) await stop(server)
    await stop(fake)
    await handle.close()
    await scratch.drop().catch(() => {})
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
