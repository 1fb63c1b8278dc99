/**
 * Live hand-off figures (npm run bench:live), one process:
 *
 * BENCH_STREAMS (default 500) widget sessions, each handed to a person (a widget turn, then POST /widget/escalate),
 * each with its visitor event stream open (GET /widget/events?bot_id=&session_id=). BENCH_OPERATORS (default 50)
 * concurrent operator loops post BENCH_MESSAGES (default 400) messages in all (POST /escalations/{id}/messages
 * with a dashboard JWT: the workspace owner's, one account for all loops) to random sessions; each message's
 * latency is the operator POST's start to the arrival of the widget frame carrying its message id: p50/p95.
 * Memory per idle stream: process RSS and V8 heap (after gc when node runs with --expose-gc) before and after
 * opening the streams, divided by N. The clients run in this same process, so the figure includes their sockets
 * and parsers as well as the server's: an upper bound for the server alone.
 *
 * Embedded database by default; BENCH_DATABASE_URL (a PostgreSQL server: a scratch database is made on it) and
 * BENCH_REDIS_URL run the same against PostgreSQL + Redis. Killing one of several processes is not measured here.
 */
import { randomBytes } from 'node:crypto'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { loadConfig } from '../src/config.js'
import { closeContext, createContext } from '../src/context.js'
import { createJwt } from '../src/modules/auth/jwt.js'
import { createTenantsRepo } from '../src/modules/tenants/tenants.repo.js'
import { createTenantsService } from '../src/modules/tenants/tenants.service.js'
import { FAKE_EMBEDDING_FLOOR, startFakeLlm } from '../test/fakes/fake-llm.js'
import { scratchDatabase, serveInProcess } from './support.js'

const N = Number(process.env.BENCH_STREAMS ?? 500)
const M = Number(process.env.BENCH_OPERATORS ?? 50)
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 400)
const PG_URL = process.env.BENCH_DATABASE_URL
const REDIS_URL = process.env.BENCH_REDIS_URL

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}
const gc = (globalThis as { gc?: () => void }).gc
const mem = async () => {
  if (gc) {
    gc()
    await sleep(50)
    gc()
  }
  const m = process.memoryUsage()
  return { rss: m.rss, heap: m.heapUsed }
}

const fake = await startFakeLlm()
const dataDir = mkdtempSync(join(tmpdir(), 'scb-bench-live-'))
const scratch = PG_URL ? await scratchDatabase(PG_URL, 'live') : null
const config = loadConfig(
  {
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LLM_BASE_URL: fake.url,
    ...FAKE_EMBEDDING_FLOOR,
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
    ...(REDIS_URL ? { REDIS_URL } : {}),
    RATE_LIMIT_ENABLED: 'false',
    GUARDS_ENABLED: 'false',
    VALIDATION_ENABLED: 'false',
    WORKER_POLL_MS: '50',
    KNOWLEDGE_EXTRACT_DELAY_SECONDS: '86400',
  },
  () => {},
)
const ctx = await createContext(config, scratch ? {} : { pgliteDir: 'memory' })
const { app, worker, url } = await serveInProcess(ctx)
const { port } = new URL(url)

const { db, clock, cipher } = ctx
const user = await db
  .insertInto('users')
  .values({
    email: `bench-${randomBytes(4).toString('hex')}@example.test`,
    password_hash: 'x',
    is_verified: true,
    tenant_id: null,
    created_at: new Date(),
    updated_at: new Date(),
  })
  .returning('id')
  .executeTakeFirstOrThrow()
const tenants = createTenantsService({ db, clock, cipher, repo: createTenantsRepo(db, ctx.database.changes) })
const { tenant } = await db.transaction().execute((trx) => tenants.provision(user.id, trx))
await db.updateTable('users').set({ tenant_id: tenant.id }).where('id', '=', user.id).execute()
await tenants.update(tenant.id, { llm_api_key: 'sk-bench-0123456789' })
const jwt = await createJwt(config.JWT_SECRET, clock).sign({ sub: user.id, ver: 0 })

async function http<T>(method: string, path: string, body?: unknown, auth = true): Promise<T> {
  const headers: Record<string, string> = auth ? { authorization: `Bearer ${jwt}` } : {}
  if (body !== undefined) headers['content-type'] = 'application/json'
  const r = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`)
  return (await r.json()) as T
}
const bot = await http<{ id: string; public_id: string }>('POST', '/bots', { name: 'Live bench' })

/** A widget session handed to a person: its id and its ticket's id. */
async function handedOff(i: number): Promise<{ session: string; ticket: string }> {
  const res = await fetch(`${url}/widget/chat?bot_id=${bot.public_id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.8.${(i >> 8) & 255}.${i & 255}` },
    body: JSON.stringify({ message: `Hello, I have a question about my account ${i}` }),
  })
  const text = await res.text()
  const session = /"session_id":"([0-9a-f-]{36})"/.exec(text)?.[1]
  if (!session) throw new Error(`no session id in ${text.slice(0, 300)}`)
  await http('POST', `/widget/escalate?bot_id=${bot.public_id}&session_id=${session}`, { trigger: 'user_request' }, false)
  const t = await db.selectFrom('escalation_tickets').select('id').where('session_id', '=', session).executeTakeFirstOrThrow()
  return { session, ticket: t.id }
}

const t0 = performance.now()
const sessions: { session: string; ticket: string }[] = []
for (let i = 0; i < N; i += 10) sessions.push(...(await Promise.all(Array.from({ length: Math.min(10, N - i) }, (_, k) => handedOff(i + k)))))
console.log(
  `live bench: ${N} widget sessions handed to a person in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${PG_URL ? 'PostgreSQL' : 'embedded DB'}${REDIS_URL ? ' + Redis' : ''}, one process`,
)

// --- the streams; each frame's message ids go to `arrived`
const arrived = new Map<string, number>()
const responses: IncomingMessage[] = []
const before = await mem()
await Promise.all(
  sessions.map(
    (s) =>
      new Promise<void>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: `/widget/events?bot_id=${bot.public_id}&session_id=${s.session}`, agent: false }, (res) => {
          if (res.statusCode !== 200) return reject(new Error(`events: ${res.statusCode}`))
          responses.push(res)
          res.setEncoding('utf8')
          let buf = ''
          res.on('data', (d: string) => {
            const now = performance.now()
            buf += d
            const end = buf.lastIndexOf('\n\n')
            if (end < 0) return
            for (const m of buf.slice(0, end).matchAll(/"id":"([0-9a-f-]{36})"/g)) if (!arrived.has(m[1]!)) arrived.set(m[1]!, now)
            buf = buf.slice(end + 2)
          })
          resolve()
        })
        req.on('error', reject)
        req.end()
      }),
  ),
)
await sleep(2000)
const after = await mem()
const mb = (b: number) => (b / 1024 / 1024).toFixed(1)
console.log(
  `${N} idle streams open: RSS ${mb(before.rss)} -> ${mb(after.rss)} MB, heap ${mb(before.heap)} -> ${mb(after.heap)} MB${gc ? ' (after gc)' : ' (no --expose-gc)'}; ` +
    `per stream RSS ${((after.rss - before.rss) / N / 1024).toFixed(1)} KB, heap ${((after.heap - before.heap) / N / 1024).toFixed(1)} KB (server and client sides together)`,
)

// --- operators
const lat: number[] = []
const posts: number[] = []
let sent = 0
let failed = 0
const pending: Promise<void>[] = []
async function operator(o: number) {
  while (sent < MESSAGES) {
    const n = sent++
    const s = sessions[(n * 7 + o) % sessions.length]!
    const start = performance.now()
    try {
      const m = await http<{ id: string }>('POST', `/escalations/${s.ticket}/messages`, { content: `Operator ${o} here, message ${n}` })
      const posted = performance.now()
      posts.push(posted - start)
      pending.push(
        (async () => {
          for (let w = 0; w < 200 && !arrived.has(m.id); w++) await sleep(25)
          const at = arrived.get(m.id)
          if (at === undefined) failed++
          else lat.push(at - start)
        })(),
      )
    } catch (err) {
      failed++
      if (failed < 3) console.error(String(err).slice(0, 300))
    }
  }
}
const t1 = performance.now()
await Promise.all(Array.from({ length: M }, (_, o) => operator(o)))
await Promise.all(pending)
const secs = (performance.now() - t1) / 1000
console.log(
  `${M} operator loops, ${MESSAGES} messages (${(MESSAGES / secs).toFixed(0)}/s): operator POST -> widget frame p50 ${pct(lat, 50).toFixed(0)} ms, p95 ${pct(lat, 95).toFixed(0)} ms, max ${Math.max(...lat).toFixed(0)} ms; ${lat.length} arrived, ${failed} failed or not arrived within 5 s of the POST's answer; the POST's own round trip p50 ${pct(posts, 50).toFixed(0)} ms, p95 ${pct(posts, 95).toFixed(0)} ms`,
)
console.log('multi-process (a kill -9 of one of several processes with streams open): not measured by this bench')

for (const r of responses) r.destroy()
await app.close()
await worker.stop(2000)
await closeContext(ctx)
await fake.close()
await scratch?.drop().catch(() => {})
rmSync(dataDir, { recursive: true, force: true })
