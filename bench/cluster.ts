/**
 * Several cores (npm run bench:cluster): the same chat load against the built service (`dist/src/server.js`,
 * as `npm start` runs it) with one HTTP process and with N (WEB_CONCURRENCY; BENCH_PROCESSES, default the
 * core count), on one scratch PostgreSQL database and Redis, the fake model (`scripts/fake-llm.ts`, answering
 * at once) in a process of its own. Prints turns/s and latency for both and the ratios.
 *
 * The knowledge: BENCH_DOCS (default 40) markdown files of 25 texts each, from BENCH_CORPUS (default
 * ../shared/data/retrieval/beir-scifact) when it exists, else generated, uploaded and indexed through the API.
 * Load: POST /chat at BENCH_CONNECTIONS (default 32) clients for BENCH_DURATION seconds (default 15) after a
 * warm-up. Env: DATABASE_URL (server for the scratch database; default postgres://root@127.0.0.1:5432/test),
 * REDIS_URL (default redis://127.0.0.1:6379). The machine is shared: figures move with whatever else runs.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { FakeSmtp } from '../test/fakes/smtp.js'
import { FAKE_EMBEDDING_FLOOR } from '../test/fakes/fake-llm.js'
import type { TestApp } from '../test/helpers/app.js'
import { upload } from '../test/helpers/documents.js'
import { createTenant } from '../test/helpers/factories.js'
import { Api } from '../test/helpers/http.js'
import { freePort, readJsonl, scratchDatabase, startNodeFlags } from './support.js'

const BASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? availableParallelism())
const DURATION = Number(process.env.BENCH_DURATION ?? 15)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const DOCS = Number(process.env.BENCH_DOCS ?? 40)
const CORPUS = process.env.BENCH_CORPUS ?? '../shared/data/retrieval/beir-scifact'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function texts(): { title: string; text: string }[] {
  if (existsSync(join(CORPUS, 'corpus.jsonl'))) {
    return readJsonl<{ title?: string; text: string }>(join(CORPUS, 'corpus.jsonl')).map((d, i) => ({ title: d.title || `Text ${i}`, text: d.text }))
  }
  const words = 'account billing refund invoice shipping password export import team plan upgrade limit storage api webhook'.split(' ')
  return Array.from({ length: DOCS * 25 }, (_, i) => ({
    title: `Topic ${i}`,
    text: Array.from({ length: 60 }, (_, w) => words[(i * 7 + w * 3) % words.length]).join(' '),
  }))
}
function questions(): string[] {
  if (existsSync(join(CORPUS, 'queries.jsonl'))) return readJsonl<{ text: string }>(join(CORPUS, 'queries.jsonl')).map((q) => q.text)
  return ['How do I get a refund?', 'How long does shipping take?', 'How do I export my data?', 'What are the plan limits?']
}

function startServer(env: Record<string, string>): { child: ChildProcess; ready: Promise<void> } {
  const child = spawn(process.execPath, [...startNodeFlags(), 'dist/src/server.js'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)))
  const ready = (async () => {
    for (const deadline = Date.now() + 90_000; ; await sleep(100)) {
      if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${stderr}`)
      if (Date.now() > deadline) throw new Error(`server not ready: ${stderr}`)
      if (
        await fetch(`http://127.0.0.1:${env.PORT}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return
    }
  })()
  return { child, ready }
}

/** CPU seconds used so far by a process and its children (the supervisor's HTTP and worker processes). */
function treeCpuSeconds(root: number): number {
  const stats = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => {
      try {
        const f = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')
        return { pid: Number(d), ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / 100 }
      } catch {
        return null
      }
    })
    .filter((x): x is { pid: number; ppid: number; cpu: number } => x !== null)
  return stats.filter((x) => x.pid === root || x.ppid === root).reduce((n, x) => n + x.cpu, 0)
}

/** Busy and total jiffies of the whole machine, to tell how saturated it was. */
function machineCpu(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number)
  const total = f.reduce((a, b) => a + b, 0)
  return { busy: total - f[3]! - (f[4] ?? 0), total }
}

const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
}

async function main() {
  const scratch = await scratchDatabase(BASE_URL, 'cluster')
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-bench-cluster-'))
  const smtp = await new FakeSmtp().start()
  const fakePort = await freePort()
  const fake = spawn(process.execPath, ['--import', 'tsx', 'scripts/fake-llm.ts'], {
    env: { PATH: process.env.PATH ?? '', FAKE_LLM_PORT: String(fakePort) },
    stdio: 'ignore',
  })
  const port = await freePort()
  const env = {
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: scratch.url,
    REDIS_URL,
    REDIS_PREFIX: `scb:bench-cluster-${randomBytes(3).toString('hex')}:`,
    LLM_BASE_URL: `http://127.0.0.1:${fakePort}/v1`,
    ...FAKE_EMBEDDING_FLOOR,
    SMTP_URL: smtp.url,
    RATE_LIMIT_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  }
  const base = `http://127.0.0.1:${port}`
  try {
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'ignore' })
    // the knowledge, indexed by one process with its worker
    const seeding = startServer({ ...env, WEB_CONCURRENCY: '1', RUN_WORKER: 'true' })
    await seeding.ready
    const tenant = await createTenant({ api: () => new Api(base), smtp } as unknown as TestApp)
    const all = texts()
    for (let d = 0; d < DOCS; d++) {
      const part = all.slice(d * 25, d * 25 + 25)
      if (!part.length) break
      const r = await upload(tenant.api, `doc-${d}.md`, part.map((t) => `## ${t.title}\n\n${t.text}`).join('\n\n'))
      if (r.status !== 201) throw new Error(`upload: ${r.status} ${r.text}`)
    }
    for (;;) {
      const docs = (await tenant.api.get('/documents')).body.documents as { status: string; chunk_count?: number }[]
      if (docs.every((d) => d.status !== 'processing' && d.status !== 'pending')) {
        console.log(`indexed ${docs.length} documents, ${docs.reduce((n, d) => n + (d.chunk_count ?? 0), 0)} chunks`)
        break
      }
      await sleep(250)
    }
    await stop(seeding.child)

    const qs = questions()
    const results: { processes: number; turns: number; p50: number; p99: number; errors: number; cores: number }[] = []
    for (const n of [1, PROCESSES]) {
      const server = startServer({ ...env, WEB_CONCURRENCY: String(n), RUN_WORKER: 'false' })
      await server.ready
      let qi = 0
      const run = (amount: number | undefined, duration: number | undefined) =>
        autocannon({
          url: `${base}/chat`,
          method: 'POST',
          connections: CONNECTIONS,
          ...(amount ? { amount } : { duration }),
          headers: { 'content-type': 'application/json', 'x-api-key': tenant.apiKey },
          requests: [{ setupRequest: (r) => ({ ...r, body: JSON.stringify({ question: qs[qi++ % qs.length] }) }) }],
        })
      await run(CONNECTIONS * 10 * n, undefined) // warm-up of every process: JIT, pools, caches
      const [cpu0, m0] = [treeCpuSeconds(server.child.pid!), machineCpu()]
      const r = await run(undefined, DURATION)
      const [cpu1, m1] = [treeCpuSeconds(server.child.pid!), machineCpu()]
      const ok = r.requests.total - r.non2xx
      const cores = (cpu1 - cpu0) / DURATION
      results.push({ processes: n, turns: ok / DURATION, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors, cores })
      console.log(
        `${n} HTTP process${n > 1 ? 'es' : ''}: ${(ok / DURATION).toFixed(1)} turns/s (${ok} ok, ${r.non2xx} non-2xx, ${r.errors} errors), latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms; ` +
          `service used ${cores.toFixed(2)} cores (${((cores * 1000) / Math.max(1, ok / DURATION)).toFixed(1)} ms CPU per turn), machine ${Math.round((100 * (m1.busy - m0.busy)) / (m1.total - m0.total))}% busy`,
      )
      await stop(server.child)
    }
    const [one, many] = results as [(typeof results)[0], (typeof results)[0]]
    console.log(
      `${many.processes} processes vs 1: turns/s x${(many.turns / one.turns).toFixed(2)}, service cores x${(many.cores / one.cores).toFixed(2)}, p50 x${(many.p50 / one.p50).toFixed(2)}, p99 x${(many.p99 / one.p99).toFixed(2)} ` +
        `(${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)}; PostgreSQL, Redis and the fake model share them)`,
    )
  } finally {
    fake.kill('SIGTERM')
    await smtp.stop()
    await scratch.drop().catch(() => {})
    rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
