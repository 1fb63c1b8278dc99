/**
 * Live hand-off figures (npm run bench:live): the issue's scenario, on PostgreSQL + Redis with TWO HTTP service
 * processes (the built service, as `npm start` builds it, under dist/bench-live-<pid>; one runs the job worker).
 *
 * BENCH_STREAMS (default 500) widget sessions, each handed to a person (a widget turn, then POST /widget/escalate),
 * each with its visitor event stream open (GET /widget/events, from the start of the session: ?after=0), spread
 * over both processes; BENCH_AGENTS (default 50) agents (workspace members with the agent role, a JWT each), each
 * with the team stream open (GET /escalations/events) and a loop posting operator messages to its sessions
 * (POST /escalations/{id}/messages) on either process. Each message's latency is the POST's start to the arrival
 * of the visitor frame carrying its message id, wherever the stream is: p50/p95.
 *
 * 1. Steady: BENCH_MESSAGES (default 750) messages with both processes up, each agent sending one every
 *    BENCH_AGENT_PAUSE_MS (default 2000; 0.5x to 1.5x at random: people type), about 25 messages/s in all: the
 *    issue's figure. Then saturation: BENCH_BURST_MESSAGES (default 500), each agent sending its next message as
 *    soon as its last POST is answered: the most the two processes take, and the latency at that rate. The
 *    same-run baseline of each phase is GET /health on both processes, measured during it by one client: the
 *    ratios say how much of the figure is the loaded machine and how much is the stream.
 * 2. Memory per idle stream: each process's RSS (/proc/<pid>/status) before and after its streams opened
 *    (the streams idle 3 s first), divided by its stream count: the server side alone.
 * 3. Kill: BENCH_KILL_MESSAGES (default 400) more messages, paced as in 1; at their middle the second process gets SIGKILL;
 *    its streams reconnect to the first with Last-Event-ID and the posts meant for it go to the first. At the
 *    end every stream's received frame ids are checked against the database's event log (live_events, the
 *    source of truth): lost, duplicated, out of order (each must be 0).
 *
 * Env: BENCH_DATABASE_URL (server for the scratch database, created and dropped; default
 * postgres://root@127.0.0.1:5432/test), BENCH_REDIS_URL (default redis://127.0.0.1:6379),
 * BENCH_CPU_PROF=<dir> runs the service processes with --cpu-prof into <dir> (the surviving one writes its
 * profile at its SIGTERM exit). The machine is shared: figures move with whatever else runs.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { type IncomingMessage, request as httpRequest } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import { loadConfig } from '../src/config.js'
import { closeContext, createContext } from '../src/context.js'
import { createJwt } from '../src/modules/auth/jwt.js'
import { FAKE_EMBEDDING_FLOOR, startFakeLlm } from '../test/fakes/fake-llm.js'
import { buildService } from '../test/helpers/service-process.js'
import { benchWorkspace, freePort, scratchDatabase, startNodeFlags } from './support.js'

const N = Number(process.env.BENCH_STREAMS ?? 500)
const AGENTS = Number(process.env.BENCH_AGENTS ?? 50)
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 750)
const PAUSE_MS = Number(process.env.BENCH_AGENT_PAUSE_MS ?? 2000)
const BURST_MESSAGES = Number(process.env.BENCH_BURST_MESSAGES ?? 500)
const KILL_MESSAGES = Number(process.env.BENCH_KILL_MESSAGES ?? 400)
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const PROF_DIR = process.env.BENCH_CPU_PROF

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}
const ms = (x: number) => `${x.toFixed(0)} ms`
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024

interface PhaseResult {
  lat: number[]
  /** the same, for the first operator message of each session (it takes the conversation: owner change, webhooks) and the later ones */
  takeover: number[]
  later: number[]
  /** the visitor frame's arrival after the POST's answer (negative: before it): the stream's own part */
  after: number[]
  posts: number[]
  failures: string[]
  pending: Promise<void>[]
  health: number[]
  secs: number
}

interface Proc {
  name: string
  child: ChildProcess
  port: number
  base: string
  dead: boolean
}

const fake = await startFakeLlm()
const dataDir = mkdtempSync(join(tmpdir(), 'scb-bench-live-'))
// the built service under dist/ (ignored by git), where its imports find node_modules
const out = join('dist', `bench-live-${process.pid}`)
const scratch = await scratchDatabase(PG_URL, 'live')
const env: Record<string, string> = {
  NODE_ENV: 'production',
  DATA_DIR: dataDir,
  DATABASE_URL: scratch.url,
  REDIS_URL,
  REDIS_PREFIX: `scb:bench-live-${randomBytes(3).toString('hex')}:`,
  LOG_LEVEL: 'warn',
  JWT_SECRET: randomBytes(32).toString('hex'),
  ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  LLM_BASE_URL: fake.url,
  ...FAKE_EMBEDDING_FLOOR,
  RATE_LIMIT_ENABLED: 'false',
  GUARDS_ENABLED: 'false',
  VALIDATION_ENABLED: 'false',
  WEB_CONCURRENCY: '1',
  KNOWLEDGE_EXTRACT_DELAY_SECONDS: '86400',
  TRUST_PROXY: 'true',
}
// this process only writes the workspace's rows (and migrates the scratch database before the services start)
const ctx = await createContext(
  loadConfig({ ...env, NODE_ENV: 'test', LOG_LEVEL: 'silent' }, () => {}),
  {},
)
const procs: Proc[] = []
const streams: Stream[] = []
let closing = false

async function startProc(name: string, worker: boolean): Promise<Proc> {
  const port = await freePort()
  const flags = [...startNodeFlags(), ...(PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`, `--cpu-prof-name=live-${name}-\${pid}.cpuprofile`] : [])]
  const child = spawn(process.execPath, [...flags, join(out, 'src', 'server.js')], {
    env: { PATH: process.env.PATH ?? '', ...env, HOST: '127.0.0.1', PORT: String(port), RUN_WORKER: String(worker) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)))
  const base = `http://127.0.0.1:${port}`
  for (const deadline = Date.now() + 90_000; ; await sleep(100)) {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}: ${stderr}`)
    if (Date.now() > deadline) throw new Error(`${name} not ready: ${stderr}`)
    if (
      await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break
  }
  return { name, child, port, base, dead: false }
}

async function call<T>(base: string, method: string, path: string, jwt: string | null, body?: unknown): Promise<T> {
  const headers: Record<string, string> = jwt ? { authorization: `Bearer ${jwt}` } : {}
  if (body !== undefined) headers['content-type'] = 'application/json'
  const r = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${(await r.text()).slice(0, 300)}`)
  return (await r.json()) as T
}

/** One SSE client that follows its stream across processes: a cut connection reconnects to a live process with Last-Event-ID. */
interface Stream {
  path: string
  jwt: string | null
  /** the address the visitor connects from (X-Forwarded-For behind TRUST_PROXY): at most 50 streams per address */
  from?: string
  on: Proc
  seqs: number[]
  first: number
  res: IncomingMessage | null
  reconnects: number
  gapMs: number
}
/** message id -> arrival time of its first visitor frame */
const arrived = new Map<string, number>()

function connect(s: Stream): Promise<void> {
  return new Promise((resolve, reject) => {
    const last = s.seqs.at(-1)
    const headers: Record<string, string> = { accept: 'text/event-stream' }
    if (s.jwt) headers.authorization = `Bearer ${s.jwt}`
    if (s.from) headers['x-forwarded-for'] = s.from
    if (last !== undefined) headers['last-event-id'] = String(last)
    const req = httpRequest({ host: '127.0.0.1', port: s.on.port, path: s.path, headers, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`${s.path}: ${res.statusCode}`))
      s.res = res
      res.setEncoding('utf8')
      let buf = ''
      res.on('data', (d: string) => {
        const now = performance.now()
        buf += d
        const end = buf.lastIndexOf('\n\n')
        if (end < 0) return
        for (const frame of buf.slice(0, end).split('\n\n')) {
          const id = /^id: (\d+)$/m.exec(frame)?.[1]
          if (id === undefined) continue
          s.seqs.push(Number(id))
          if (!s.jwt) {
            const m = /"type":"message".*?"id":"([0-9a-f-]{36})"|"id":"([0-9a-f-]{36})".*?"type":"message"/.exec(frame)
            const mid = m?.[1] ?? m?.[2]
            if (mid && !arrived.has(mid)) arrived.set(mid, now)
          }
        }
        buf = buf.slice(end + 2)
      })
      const cut = () => {
        if (s.res !== res) return
        s.res = null
        if (!closing) void reconnect(s)
      }
      res.on('close', cut)
      res.on('error', cut)
      resolve()
    })
    req.on('error', reject)
    req.end()
  })
}

async function reconnect(s: Stream) {
  const cutAt = performance.now()
  s.reconnects++
  for (let attempt = 0; !closing; attempt++) {
    s.on = procs.find((p) => !p.dead) ?? s.on
    try {
      await connect(s)
      s.gapMs = Math.max(s.gapMs, performance.now() - cutAt)
      return
    } catch {
      await sleep(Math.min(1000, 50 * 2 ** attempt))
    }
  }
}

try {
  const t0 = performance.now()
  buildService(out)
  procs.push(await startProc('A', true), await startProc('B', false))
  const [A, B] = procs as [Proc, Proc]
  const ws = await benchWorkspace(ctx, A.base)
  const bot = await call<{ id: string; public_id: string }>(A.base, 'POST', '/bots', ws.jwt, { name: 'Live bench' })
  const sign = createJwt(env.JWT_SECRET!, ctx.clock)
  const agents: string[] = [ws.jwt]
  for (let a = 1; a < AGENTS; a++) {
    const u = await ctx.db
      .insertInto('users')
      .values({
        email: `agent-${a}-${randomBytes(3).toString('hex')}@example.test`,
        password_hash: 'x',
        is_verified: true,
        tenant_id: ws.tenantId,
        role: 'agent',
        created_at: new Date(),
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    agents.push(await sign.sign({ sub: u.id, ver: 0 }))
  }

  /** A widget session handed to a person, on process `p`: its id and its ticket's id. */
  async function handedOff(i: number, p: Proc): Promise<{ session: string; ticket: string }> {
    const res = await fetch(`${p.base}/widget/chat?bot_id=${bot.public_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.8.${(i >> 8) & 255}.${i & 255}` },
      body: JSON.stringify({ message: `Hello, I have a question about my account ${i}` }),
    })
    const text = await res.text()
    const session = /"session_id":"([0-9a-f-]{36})"/.exec(text)?.[1]
    if (!session) throw new Error(`no session id in ${text.slice(0, 300)}`)
    await call(p.base, 'POST', `/widget/escalate?bot_id=${bot.public_id}&session_id=${session}`, null, { trigger: 'user_request' })
    const t = await ctx.db.selectFrom('escalation_tickets').select('id').where('session_id', '=', session).executeTakeFirstOrThrow()
    return { session, ticket: t.id }
  }
  const sessions: { session: string; ticket: string }[] = []
  for (let i = 0; i < N; i += 10)
    sessions.push(...(await Promise.all(Array.from({ length: Math.min(10, N - i) }, (_, k) => handedOff(i + k, procs[(i + k) % 2]!)))))
  console.log(
    `live bench: PostgreSQL + Redis, 2 HTTP processes (built service, WEB_CONCURRENCY=1 each); ${N} widget sessions handed to a person and ${AGENTS} agents set up in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )

  // --- streams: widget streams alternate between the processes, so do the agents' team streams
  const rss0 = procs.map((p) => rssOf(p.child.pid!))
  const teamStart =
    (await ctx.db.selectFrom('live_counters').select(sql<string>`last::text`.as('l')).where('tenant_id', '=', ws.tenantId).executeTakeFirst())?.l ?? '0'
  const widgetStreams = sessions.map(
    (s, i): Stream => ({
      path: `/widget/events?bot_id=${bot.public_id}&session_id=${s.session}&after=0`,
      jwt: null,
      // 500 visitors are 500 addresses, as behind a real proxy (one address is capped at 50 streams, #37)
      from: `10.77.${Math.floor(i / 250)}.${i % 250}`,
      on: procs[i % 2]!,
      seqs: [],
      first: 0,
      res: null,
      reconnects: 0,
      gapMs: 0,
    }),
  )
  const teamStreams = agents.map(
    (jwt, a): Stream => ({
      path: `/escalations/events?after=${teamStart}`,
      jwt,
      on: procs[a % 2]!,
      seqs: [],
      first: Number(teamStart),
      res: null,
      reconnects: 0,
      gapMs: 0,
    }),
  )
  streams.push(...widgetStreams, ...teamStreams)
  for (let i = 0; i < streams.length; i += 50) await Promise.all(streams.slice(i, i + 50).map(connect))
  await sleep(3000)
  const rss1 = procs.map((p) => rssOf(p.child.pid!))
  const perProc = procs.map((p) => streams.filter((s) => s.on === p).length)
  const kb = (b: number) => (b / 1024).toFixed(1)
  console.log(
    `${streams.length} idle streams open (${N} widget + ${agents.length} team): ` +
      procs.map((p, i) => `${p.name} ${perProc[i]} streams, RSS ${(rss0[i]! / 2 ** 20).toFixed(0)} -> ${(rss1[i]! / 2 ** 20).toFixed(0)} MB`).join('; ') +
      `; per idle stream ${kb((rss1[0]! - rss0[0]! + rss1[1]! - rss0[1]!) / streams.length)} KB of server RSS (goal < 50 KB)`,
  )

  // --- operators: agent a posts to sessions a, a+AGENTS, ...; message n goes to process n % 2 (the other when it is down)
  let sent = 0
  let retried = 0
  const taken = new Set<string>()
  async function post(n: number, a: number, out: PhaseResult) {
    const s = sessions[(a + AGENTS * Math.floor(n / AGENTS)) % sessions.length]!
    const first = !taken.has(s.session)
    taken.add(s.session)
    const start = performance.now()
    for (let attempt = 0; attempt < 5; attempt++) {
      const live = procs.filter((p) => !p.dead)
      const p = live[n % live.length]!
      try {
        const m = await call<{ id: string }>(p.base, 'POST', `/escalations/${s.ticket}/messages`, agents[a]!, { content: `Agent ${a} here, message ${n}` })
        const answered = performance.now()
        out.posts.push(answered - start)
        out.pending.push(
          (async () => {
            for (let w = 0; w < 400 && !arrived.has(m.id); w++) await sleep(25)
            const at = arrived.get(m.id)
            if (at === undefined) out.failures.push(`message ${m.id} not on the visitor stream 10 s after its POST`)
            else {
              out.lat.push(at - start)
              ;(first ? out.takeover : out.later).push(at - start)
              out.after.push(at - answered)
            }
          })(),
        )
        return
      } catch (err) {
        retried++
        if (attempt === 4) out.failures.push(String(err).slice(0, 200))
        await sleep(100)
      }
    }
  }
  /** `total` messages from the agents: each waits `pauseMs` (0.5x to 1.5x, at random) before each message, or none. */
  async function phase(total: number, pauseMs: number, onHalf?: () => void) {
    const out: PhaseResult = { lat: [], takeover: [], later: [], after: [], posts: [], failures: [], pending: [], health: [], secs: 0 }
    const end = sent + total
    const half = sent + total / 2
    const t1 = performance.now()
    let running = true
    // the baseline in the same run: GET /health on both processes, one client, during the phase
    const healthLoop = (async () => {
      for (let i = 0; running; i++) {
        const p = procs.filter((x) => !x.dead)[i % 2] ?? A
        const s = performance.now()
        const ok = await fetch(`${p.base}/health`).then(
          (r) => r.arrayBuffer().then(() => r.ok),
          () => false,
        )
        if (ok) out.health.push(performance.now() - s)
        await sleep(20)
      }
    })()
    await Promise.all(
      Array.from({ length: AGENTS }, async (_, a) => {
        for (;;) {
          if (pauseMs > 0) await sleep(pauseMs * (0.5 + Math.random()))
          if (sent >= end) break
          const n = sent++
          if (n >= half && onHalf) {
            const f = onHalf
            onHalf = undefined
            f()
          }
          await post(n, a, out)
        }
      }),
    )
    out.secs = (performance.now() - t1) / 1000
    await Promise.all(out.pending)
    running = false
    await healthLoop
    return out
  }
  const report = (title: string, total: number, r: PhaseResult) => {
    const [l50, l95, h50, h95] = [pct(r.lat, 50), pct(r.lat, 95), pct(r.health, 50), pct(r.health, 95)]
    console.log(
      `${title}: ${total} messages (${(total / r.secs).toFixed(0)}/s): operator POST -> visitor frame p50 ${ms(l50)}, p95 ${ms(l95)}, max ${ms(Math.max(...r.lat))}; ` +
        `the POST's own answer p50 ${ms(pct(r.posts, 50))}, p95 ${ms(pct(r.posts, 95))}, the frame after that answer p50 ${ms(pct(r.after, 50))}, p95 ${ms(pct(r.after, 95))}; baseline GET /health in the same phase p50 ${ms(h50)}, p95 ${ms(h95)}: ` +
        `ratio p50 x${(l50 / h50).toFixed(1)}, p95 x${(l95 / h95).toFixed(1)}; ` +
        `a session's first operator message (the takeover) p50 ${ms(pct(r.takeover, 50))}, p95 ${ms(pct(r.takeover, 95))} (${r.takeover.length}), later ones p50 ${ms(pct(r.later, 50))}, p95 ${ms(pct(r.later, 95))} (${r.later.length}); ${r.lat.length} arrived, ${r.failures.length} failed${r.failures[0] ? ` (${r.failures[0]})` : ''}`,
    )
  }

  const paced = await phase(MESSAGES, PAUSE_MS)
  report(`steady, ${AGENTS} agents each sending a message every ${PAUSE_MS / 1000} s on average (goal p95 < 300 ms)`, MESSAGES, paced)
  const burst = await phase(BURST_MESSAGES, 0)
  report(`saturation, ${AGENTS} agents each sending the next message as soon as the last one is answered`, BURST_MESSAGES, burst)

  // --- SIGKILL of B mid-run
  let killedAt = 0
  const killed = await phase(KILL_MESSAGES, PAUSE_MS, () => {
    B.dead = true
    killedAt = performance.now()
    B.child.kill('SIGKILL')
  })
  // every stream must catch up with the log: wait until the database's last seq has arrived everywhere (or 20 s)
  const rows = await ctx.db
    .selectFrom('live_events')
    .select(['session_id', sql<string>`seq::text`.as('seq'), sql<string | null>`session_seq::text`.as('session_seq'), 'internal'])
    .where('tenant_id', '=', ws.tenantId)
    .orderBy('seq')
    .execute()
  const bySession = new Map<string, number[]>()
  for (const r of rows)
    if (r.session_id && !r.internal && r.session_seq) bySession.set(r.session_id, [...(bySession.get(r.session_id) ?? []), Number(r.session_seq)])
  const teamExpected = rows.map((r) => Number(r.seq)).filter((x) => x > Number(teamStart))
  const expectedOf = (i: number) => (i < N ? (bySession.get(sessions[i]!.session) ?? []) : teamExpected)
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(200)) {
    if (streams.every((s, i) => (expectedOf(i).at(-1) ?? 0) <= (s.seqs.at(-1) ?? 0))) break
  }
  let lost = 0
  let duplicated = 0
  let disordered = 0
  let events = 0
  streams.forEach((s, i) => {
    const expected = expectedOf(i)
    events += expected.length
    const seen = new Map<number, number>()
    for (const x of s.seqs) seen.set(x, (seen.get(x) ?? 0) + 1)
    for (const x of expected) if (!seen.has(x)) lost++
    for (const c of seen.values()) if (c > 1) duplicated += c - 1
    for (let k = 1; k < s.seqs.length; k++) if (s.seqs[k]! <= s.seqs[k - 1]!) disordered++
  })
  const moved = streams.filter((s) => s.reconnects > 0)
  const kl = killed.lat
  console.log(
    `SIGKILL of process B after ${KILL_MESSAGES / 2} of ${KILL_MESSAGES} more messages: ${moved.length} streams reconnected to A with Last-Event-ID (slowest in ${ms(Math.max(0, ...moved.map((s) => s.gapMs)))}); ` +
      `${events} events expected over ${streams.length} streams (database log): ${lost} lost, ${duplicated} duplicated, ${disordered} out of order; ` +
      `latency across the kill p50 ${ms(pct(kl, 50))}, p95 ${ms(pct(kl, 95))}, max ${ms(Math.max(...kl))}; ${retried} POSTs retried on A, ${killed.failures.length} failed${killed.failures[0] ? ` (${killed.failures[0]})` : ''}`,
  )
  console.log(
    `(2 cores shared with PostgreSQL, Redis, the fake model and this client; load average ${loadavg()[0]!.toFixed(1)}; B killed ${((performance.now() - killedAt) / 1000).toFixed(1)} s before the end)`,
  )
} finally {
  closing = true
  for (const s of streams) s.res?.destroy()
  for (const p of procs) {
    if (p.child.exitCode !== null || p.dead) continue
    const exited = new Promise((r) => p.child.once('exit', r))
    p.child.kill('SIGTERM')
    await exited
  }
  await closeContext(ctx)
  await fake.close()
  await scratch.drop().catch(() => {})
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(out, { recursive: true, force: true })
}
