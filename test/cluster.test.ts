import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { restartDelayMs, webConcurrency } from '../src/cluster.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { FakeSmtp } from './fakes/smtp.js'
import { cloneDatabase, type TestApp } from './helpers/app.js'
import { upload } from './helpers/documents.js'
import { createTenant, PASSWORD, type Tenant, uniqueEmail } from './helpers/factories.js'
import { Api } from './helpers/http.js'
import { buildService, freshRequest, type ServiceProcess, spawnService } from './helpers/service-process.js'

describe('how many processes npm start runs', () => {
  it('one per core on PostgreSQL unless WEB_CONCURRENCY says otherwise, always one on the embedded database', () => {
    expect(webConcurrency({ DATABASE_URL: 'postgres://x/y' }, 8)).toBe(8)
    expect(webConcurrency({ DATABASE_URL: 'postgres://x/y', WEB_CONCURRENCY: 3 }, 8)).toBe(3)
    expect(webConcurrency({ DATABASE_URL: undefined, WEB_CONCURRENCY: 4 }, 8)).toBe(1)
    expect(webConcurrency({ DATABASE_URL: undefined }, 8)).toBe(1)
  })
  it('starts a dead process again at once after a long life, and backs off while it keeps dying young', () => {
    expect([0, 1, 2, 3, 10].map(restartDelayMs)).toEqual([0, 500, 1000, 2000, 30_000])
  })
})

/**
 * Two HTTP processes and a job worker under one supervisor (the built service, as `npm start` runs it) on
 * PostgreSQL and Redis. One HTTP process is killed with SIGKILL while chat turns and registrations run: the
 * supervisor starts it again, clients retry what the dead process dropped (the same Idempotency-Key), and in
 * the end every turn is in its session exactly once, every registration has exactly one mail, every job is
 * done, and a rate limit counts the requests of both processes together.
 */
const onPostgres = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL)
if (!onPostgres) console.info('cluster.test: the multi-process test needs PostgreSQL and Redis (DATABASE_URL, REDIS_URL); skipped on the embedded database')

const out = join('node_modules', '.cache', `scb-cluster-test-${process.pid}`)
const dataDir = mkdtempSync(join(tmpdir(), 'scb-cluster-'))
let llm: FakeLlm
let smtp: FakeSmtp
let db: { url: string; drop: () => Promise<void> } | null = null
let svc: ServiceProcess | undefined

beforeAll(async () => {
  if (!onPostgres) return
  buildService(out)
  ;[llm, smtp, db] = await Promise.all([startFakeLlm(), new FakeSmtp().start(), cloneDatabase()])
}, 120_000)

afterAll(async () => {
  if (svc && svc.child.exitCode === null) svc.child.kill('SIGKILL')
  await llm?.close()
  await smtp?.stop()
  await db?.drop().catch(() => {})
  rmSync(out, { recursive: true, force: true })
  rmSync(dataDir, { recursive: true, force: true })
}, 60_000)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/**
 * A request's answer, or null when its connection dropped or it had none within 5 s: a connection node:cluster
 * had handed to the killed process just before it died gets no answer at all, so a client's timeout decides.
 */
const settled = <T>(p: Promise<T>) => Promise.race([p.catch(() => null), sleep(5000).then(() => null)])
const SESSIONS = 6
const TURNS = 6
const REGISTRATIONS = 6

type Outcome = { state: 'answered'; messageId: string } | { state: 'in_flight' }

/** A client's turn: a dropped or unanswered connection or a 5xx is retried with the same key; a key its dead owner still holds is reported. */
async function turn(api: Api, sessionId: string | null, question: string, key: string): Promise<Outcome & { sessionId?: string }> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const r = await settled(api.post('/chat', { question, session_id: sessionId }, { 'idempotency-key': key }))
    if (r?.status === 200) return { state: 'answered', messageId: r.body.message_id, sessionId: r.body.session_id }
    if (r?.status === 409 && r.body?.detail?.code === 'idempotency_in_flight') return { state: 'in_flight' }
    if (r && r.status < 500) throw new Error(`turn refused: ${r.status} ${r.text}`)
    await sleep(50)
  }
  throw new Error('turn never answered')
}

it.skipIf(!onPostgres)(
  'kill -9 of one HTTP process under chat load loses and duplicates no turn, job or mail; the rate limit is shared',
  async () => {
    svc = await spawnService(out, {
      DATA_DIR: dataDir,
      DATABASE_URL: db!.url,
      REDIS_URL: process.env.REDIS_URL!,
      REDIS_PREFIX: `scbt:cluster${process.pid}:`,
      WEB_CONCURRENCY: '2',
      RUN_WORKER: 'true',
      WORKER_POLL_MS: '100',
      IDEMPOTENCY_WAIT_MS: '1000',
      LOG_LEVEL: 'info',
      METRICS_TOKEN: 'cluster-test-metrics-token-0123456789',
      TRUST_PROXY: 'true',
      SMTP_URL: smtp.url,
      LLM_BASE_URL: llm.url,
      JWT_SECRET: 'cluster-test-jwt-secret-that-is-long-enough-0123',
      ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
    })
    const started = (role: string) => svc!.logs.filter((l) => l.msg === 'process started' && l.role === role)
    await svc.waitLog((l) => l.msg === 'worker ready')
    for (const p of started('http')) await svc.waitLog((l) => l.msg === 'service ready' && l.pid === p.pid)
    expect(started('http')).toHaveLength(2)
    expect(started('jobs')).toHaveLength(1)
    const httpPids = started('http').map((l) => l.pid)

    const tenant: Tenant = await createTenant({ api: () => new Api(svc!.base), smtp } as unknown as TestApp)
    const doc = await upload(tenant.api, 'refunds.md', '# Refunds\n\nRefunds are processed within 5 business days after we receive the item.\n')
    for (let i = 0; (await tenant.api.get(`/documents/${doc.body.id}`)).body.status !== 'ready'; i++) {
      if (i > 300) throw new Error('the worker process did not index the upload')
      await sleep(50)
    }
    const chat = new Api(svc.base).withApiKey(tenant.apiKey)

    // every session's first turn before the kill, so each retry below knows its session
    const sessions = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        const first = await turn(chat, null, `Session ${s} question 0: how long do refunds take?`, randomUUID())
        expect(first.state).toBe('answered')
        return first.sessionId!
      }),
    )

    let answered = 0
    const inFlight: { session: number; question: string }[] = []
    const load = sessions.map(async (sessionId, s) => {
      for (let q = 1; q < TURNS; q++) {
        const question = `Session ${s} question ${q}: how long do refunds take?`
        let o = await turn(chat, sessionId, question, randomUUID())
        if (o.state === 'in_flight') {
          // the key is held by the dead process (a live one answers within the wait): it persisted the turn before
          // the kill or never will, so the client looks and asks again under a new key only if it is not there
          inFlight.push({ session: s, question })
          const { messages } = (await tenant.api.get(`/chat/history/${sessionId}`)).body as { messages: { id: string; content: string }[] }
          // persisted (both messages go in one statement) before the kill took the process that held the key: answered
          const asked = messages.findIndex((m) => m.content === question)
          if (asked >= 0) o = { state: 'answered', messageId: messages[asked + 1]?.id ?? '' }
          else {
            // the new key's owner is alive (the victim is dead by now): an attempt that outlived the client's 5 s on a
            // loaded machine is still running there, and the same key gets its answer once it is done
            const key = randomUUID()
            for (let i = 0; i < 60; i++) {
              o = await turn(chat, sessionId, question, key)
              if (o.state !== 'in_flight') break
              await sleep(500)
            }
          }
        }
        expect(o.state).not.toBe('in_flight')
        answered++
      }
    })
    const registered: string[] = []
    const registrations = (async () => {
      for (let i = 0; i < REGISTRATIONS; i++) {
        const api = new Api(svc!.base)
        const email = uniqueEmail('cluster')
        for (let attempt = 0; ; attempt++) {
          const r = await settled(api.post('/auth/register', { email, password: PASSWORD }))
          // 409: the dropped attempt had committed, and with it its one mail job
          if (r?.status === 200 || r?.status === 409) break
          if ((r && r.status < 500) || attempt > 40) throw new Error(`register: ${r?.status} ${r?.text}`)
          await sleep(50)
        }
        registered.push(email)
      }
    })()
    let failure: unknown = null
    for (const p of [...load, registrations]) p.catch((err) => (failure ??= err))
    while (answered < SESSIONS && !failure) await sleep(10)
    if (failure) throw failure
    const victim = httpPids[0]!
    process.kill(victim, 'SIGKILL')
    const killedAt = Date.now()
    await Promise.all([...load, registrations])

    // the supervisor noticed and started a new HTTP process, which serves
    const restarted = await svc.waitLog((l) => l.msg === 'process started' && l.role === 'http' && !httpPids.includes(l.pid))
    const ready = await svc.waitLog((l) => l.msg === 'service ready' && l.pid === restarted.pid)
    expect(svc.logs.some((l) => l.msg === 'process died, starting it again' && l.pid === victim && l.signal === 'SIGKILL')).toBe(true)

    for (const [s, id] of sessions.entries()) {
      const { messages } = (await tenant.api.get(`/chat/history/${id}`)).body as { messages: { role: string; content: string }[] }
      expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
        Array.from({ length: TURNS }, (_, q) => `Session ${s} question ${q}: how long do refunds take?`),
      )
      // every turn answered at most once: an answer follows its own question. (This workspace has no knowledge, so
      // the first turn hands off; the conversation is then the team's and later questions are delivered to a person.)
      const answers = messages.filter((m) => m.role === 'assistant').length
      expect(answers).toBeGreaterThanOrEqual(1)
      expect(answers).toBeLessThanOrEqual(TURNS)
      messages.forEach((m, i) => {
        if (m.role === 'assistant') expect(messages[i - 1]?.role, `session ${s}: an answer without its own question`).toBe('user')
      })
    }
    const servedChat = new Set(svc.logs.filter((l) => l.msg === 'request' && l.url === '/chat').map((l) => l.pid))
    expect([...servedChat].filter((p) => httpPids.includes(p)).length, 'both first processes served turns').toBe(2)

    // every registration: exactly one verification mail, every job done
    const client = new pg.Client({ connectionString: db!.url })
    await client.connect()
    try {
      for (let i = 0; ; i++) {
        const { rows } = await client.query(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'email.send' AND status <> 'done'`)
        if (rows[0].n === 0 && registered.every((e) => smtp.to(e).length > 0)) break
        if (i > 400) throw new Error(`mail jobs not done: ${rows[0].n}`)
        await sleep(50)
      }
      await sleep(500) // a duplicate would arrive now
      for (const e of registered) expect(smtp.to(e), e).toHaveLength(1)
      const stuck = await client.query(`SELECT kind, status FROM jobs WHERE status IN ('running', 'failed')`)
      expect(stuck.rows).toEqual([])
    } finally {
      await client.end()
    }

    // the login limit (10 a minute per client address) counts across processes: each attempt on a new connection
    const ip = `10.77.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) {
      const r = await freshRequest(`${svc.base}/auth/login`, 'POST', { 'x-forwarded-for': ip }, { email: tenant.email, password: 'wrong-password-1' })
      statuses.push(r.status)
    }
    expect(statuses.slice(0, 10).every((s) => s !== 429)).toBe(true)
    expect(statuses.slice(10)).toEqual([429, 429])
    const servedLogin = new Set(svc.logs.filter((l) => l.msg === 'request' && l.url === '/auth/login').map((l) => l.pid))
    expect(servedLogin.size, 'logins reached both processes').toBeGreaterThanOrEqual(2)
    console.info(
      `cluster: ${SESSIONS * TURNS} turns, ${inFlight.length} held by the killed process, restarted as pid ${restarted.pid}, serving ${(ready.time as number) - killedAt} ms after the kill; login statuses ${statuses.join(',')}`,
    )

    // /metrics from any HTTP process gives the figures of all: the logins of both, the mails the job worker sent
    const count = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN)
    const loginSeries = 'scb_http_request_duration_seconds_count{method="POST",route="/auth/login",status_code="401"}'
    for (let i = 0; i < 4; i++) {
      const m = await freshRequest(`${svc.base}/metrics`, 'GET', { authorization: 'Bearer cluster-test-metrics-token-0123456789' })
      expect(m.status).toBe(200)
      expect(count(m.text, loginSeries)).toBe(10)
      expect(count(m.text, 'scb_job_duration_seconds_count{kind="email.send",outcome="done"}')).toBeGreaterThanOrEqual(registered.length)
    }

    // SIGTERM to the supervisor stops every process gracefully
    svc.child.kill('SIGTERM')
    expect(await svc.exited).toBe(0)
  },
  180_000,
)
