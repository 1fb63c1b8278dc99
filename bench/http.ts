/**
 * HTTP figures of the foundation (npm run bench:http):
 *   1. GET /health (the framework's ceiling here) and GET /bots with a JWT, autocannon on 127.0.0.1,
 *      against a real server process (`dist/src/server.js`, built as `npm start` builds it) on a scratch PostgreSQL database.
 *   2. Cold start to the first served request on PGlite: a fresh DATA_DIR, then the same one again.
 *
 * Env: DATABASE_URL (server to create the scratch database on; default postgres://root@127.0.0.1:5432/test),
 * BENCH_DURATION (seconds per run, default 10), BENCH_CONNECTIONS (default 50), BENCH_LOG_LEVEL (server's
 * LOG_LEVEL, default warn), BENCH_POOL_SIZE (server's DATABASE_POOL_SIZE), BENCH_SKIP_COLD=1 to skip the
 * cold-start part. Throughput on a shared machine moves with everything else running; the CPU time per
 * request (server process, and the PostgreSQL backends of the scratch database) moves much less.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { simpleParser } from 'mailparser'
import { freePort, scratchDatabase, startNodeFlags } from './support.js'
import { adminQuery } from '../test/helpers/pg-admin.js'

const BASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'warn'
const SECRETS = { JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('hex') }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Server {
  url: string
  child: ChildProcess
  /** Milliseconds from spawn to the first 200 from /health. */
  readyMs: number
  stop(): Promise<void>
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(process.execPath, [...startNodeFlags(), 'dist/src/server.js'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: LOG_LEVEL,
      // the figures are those of one process (its CPU time per request is read from its pid); bench:cluster compares several
      WEB_CONCURRENCY: '1',
      ...(process.env.BENCH_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE } : {}),
      ...SECRETS,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${stderr}`)
    try {
      const res = await fetch(`${url}/health`)
      if (res.status === 200) break
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 60_000) throw new Error(`server not ready after 60 s: ${stderr}`)
    await sleep(10)
  }
  const readyMs = performance.now() - started
  return {
    url,
    child,
    readyMs,
    async stop() {
      if (child.exitCode !== null) return
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** Registers and verifies a user through the API, reading the token from the outbox .eml file. */
async function signUp(url: string, dataDir: string): Promise<string> {
  const email = `bench-${randomBytes(4).toString('hex')}@example.test`
  const password = 'Bench-Passw0rd!'
  const reg = await fetch(`${url}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  })
  if (reg.status !== 200) throw new Error(`register: ${reg.status} ${await reg.text()}`)
  const outbox = join(dataDir, 'outbox')
  let token: string | undefined
  for (let i = 0; i < 500 && !token; i++) {
    for (const f of existsSync(outbox) ? readdirSync(outbox) : []) {
      const mail = await simpleParser(readFileSync(join(outbox, f)))
      const m = /token=([A-Za-z0-9_\-%]+)/.exec(mail.text ?? '')
      if (m) token = decodeURIComponent(m[1]!)
    }
    if (!token) await sleep(20)
  }
  if (!token) throw new Error('no verification mail in the outbox')
  const verified = await fetch(`${url}/auth/verify-email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  })
  if (verified.status !== 200) throw new Error(`verify: ${verified.status}`)
  return ((await verified.json()) as { token: string }).token
}

interface Figures {
  name: string
  rps: number
  p50: number
  p99: number
  requests: number
  non2xx: number
  errors: number
  /** CPU time per request of the server process and of its PostgreSQL backends (Linux /proc), in µs. */
  serverCpuUs: number | null
  postgresCpuUs: number | null
}

/** utime + stime of a process in ms (Linux; null elsewhere). */
function cpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 // USER_HZ is 100 on Linux
  } catch {
    return null
  }
}

interface Probe {
  serverPid: number
  /** PIDs of the PostgreSQL backends serving the scratch database (their CPU is the database's share). */
  backends(): Promise<number[]>
}

async function load(name: string, url: string, headers: Record<string, string> = {}, seconds = DURATION, probe?: Probe): Promise<Figures> {
  const backends = probe ? await probe.backends() : []
  const sum = (pids: number[]) => pids.reduce((acc, p) => acc + (cpuMs(p) ?? 0), 0)
  const server0 = probe ? cpuMs(probe.serverPid) : null
  const pg0 = sum(backends)
  const r = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers })
  const server1 = probe ? cpuMs(probe.serverPid) : null
  // Backends opened during the run were not measured at the start; count them from zero.
  const pg1 = sum([...new Set([...backends, ...(probe ? await probe.backends() : [])])])
  const perRequest = (ms: number) => Math.round((ms * 1000) / Math.max(1, r.requests.total))
  return {
    name,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    serverCpuUs: server0 !== null && server1 !== null ? perRequest(server1 - server0) : null,
    postgresCpuUs: probe && backends.length + pg1 > 0 ? perRequest(pg1 - pg0) : null,
  }
}

const row = (f: Figures) =>
  `${f.name.padEnd(18)} ${String(f.rps).padStart(7)} req/s   p50 ${String(f.p50).padStart(3)} ms   p99 ${String(f.p99).padStart(3)} ms   ` +
  `CPU/request: server ${f.serverCpuUs ?? '?'} µs, PostgreSQL ${f.postgresCpuUs ?? '?'} µs   ` +
  `(${f.requests} requests, ${f.non2xx} non-2xx, ${f.errors} errors)`

async function throughput(): Promise<void> {
  const scratch = await scratchDatabase(BASE_URL, 'http')
  const dbName = scratch.name
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-bench-'))
  let server: Server | null = null
  try {
    server = await startServer({ DATABASE_URL: scratch.url, DATA_DIR: dataDir })
    const jwt = await signUp(server.url, dataDir)
    const auth = { authorization: `Bearer ${jwt}` }
    const check = await fetch(`${server.url}/bots`, { headers: auth })
    if (check.status !== 200) throw new Error(`GET /bots: ${check.status}`)

    const probe: Probe = {
      serverPid: server.child.pid!,
      async backends() {
        const rows = await adminQuery<{ pid: number }>(BASE_URL, 'SELECT pid FROM pg_stat_activity WHERE datname = $1', [dbName])
        return rows.map((x) => x.pid)
      },
    }
    console.log(`\nHTTP on 127.0.0.1, PostgreSQL (${dbName}), ${CONNECTIONS} connections, ${DURATION} s each, server LOG_LEVEL=${LOG_LEVEL}`)
    await load('warm-up', `${server.url}/health`, {}, 2)
    const health = await load('GET /health', `${server.url}/health`, {}, DURATION, probe)
    console.log(row(health))
    await load('warm-up', `${server.url}/bots`, auth, 2)
    const bots = await load('GET /bots (JWT)', `${server.url}/bots`, auth, DURATION, probe)
    console.log(row(bots))
    const ratio = bots.rps / health.rps
    console.log(
      `GET /bots / GET /health = ${(ratio * 100).toFixed(0)}% (target >= 40%: ${ratio >= 0.4 ? 'met' : 'NOT met'}); ` +
        `GET /bots p99 ${bots.p99} ms (target < 25 ms: ${bots.p99 < 25 ? 'met' : 'NOT met'})`,
    )
  } finally {
    await server?.stop()
    rmSync(dataDir, { recursive: true, force: true })
    await scratch.drop()
  }
}

async function coldStart(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-cold-'))
  try {
    console.log('\nCold start to the first 200 from GET /health (PGlite under DATA_DIR, node dist/src/server.js)')
    const fresh = await startServer({ DATA_DIR: dataDir })
    await fresh.stop()
    console.log(`fresh DATA_DIR      ${Math.round(fresh.readyMs)} ms (creates the database, runs every migration)`)
    const times: number[] = []
    for (let i = 0; i < 3; i++) {
      const again = await startServer({ DATA_DIR: dataDir })
      await again.stop()
      times.push(again.readyMs)
    }
    console.log(`existing DATA_DIR   ${times.map((t) => Math.round(t)).join(' / ')} ms (three runs)`)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'ignore' })
await throughput()
if (process.env.BENCH_SKIP_COLD !== '1') await coldStart()
