/**
 * Outbound webhooks (npm run bench:webhooks): BENCH_EVENTS (default 10,000) events, emitted through the outbox
 * in transactions of their own over BENCH_TICKETS tickets (default 500), to 5 receivers on 127.0.0.1, one of
 * which answers 500 half of the time; every 25th transaction emits and then rolls back. The job worker runs in
 * a process of its own (`src/worker.ts`, WORKER_CONCURRENCY 16) and is killed with SIGKILL once a third of the
 * deliveries is done, then started again. The retry schedule (5 s, 5 min, ...) is compressed: the bench moves
 * the run time of waiting retries to now every 500 ms, as the tests move the clock. What the last retry still
 * failed is sent again with "resend failed", as an operator would.
 *
 * Checks: every committed event reached every receiver at least once (signature verified with the reference
 * package), no rolled-back event reached any, and per receiver and ticket the first successful receipts are in
 * emission order (but for events whose delivery failed 8 times: their ticket's later events went on, as specified,
 * and they arrive when resent). Prints events/s (events delivered to all 5 / wall time) and the p50/p95 delay from the commit
 * of the change to its first successful delivery. BENCH_RATE paces the emission (events/s; default as fast as it
 * goes, when the delay is mostly the backlog). Env: DATABASE_URL (server for the scratch database; default
 * postgres://root@127.0.0.1:5432/test). The machine is shared: figures move with whatever else runs.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { Webhook } from 'standardwebhooks'
import { loadConfig } from '../src/config.js'
import { closeContext, createContext } from '../src/context.js'
import { createOutbox, enqueueDelivery } from '../src/modules/webhooks/webhooks.delivery.js'
import { RETRY_SCHEDULE_SECONDS } from '../src/modules/webhooks/webhooks.fns.js'
import { createWebhooksRepo } from '../src/modules/webhooks/webhooks.repo.js'
import { scratchDatabase } from './support.js'

const BASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000)
const TICKETS = Number(process.env.BENCH_TICKETS ?? 500)
const RECEIVERS = 5
const ROLLBACK_EVERY = 25
const EMITTERS = 4
const RATE = Number(process.env.BENCH_RATE ?? 0)
const ENCRYPTION_KEY = randomBytes(32).toString('hex')
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_SECONDS ?? 600) * 1000

interface Receipt {
  id: string
  n: number
  ticket: number
  k: number
  ok: boolean
  at: number
}

/** A receiver that verifies each request and answers 204, or 500 with probability `failRate`. */
async function startReceiver(secret: string, failRate: number): Promise<{ url: string; receipts: Receipt[]; bad: number; server: Server }> {
  const wh = new Webhook(secret)
  const state = { receipts: [] as Receipt[], bad: 0 }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      try {
        wh.verify(body, req.headers as Record<string, string>)
      } catch {
        state.bad++
        return void res.writeHead(400).end()
      }
      const { data } = JSON.parse(body) as { data: { n: number; ticket: number; k: number } }
      const ok = Math.random() >= failRate
      state.receipts.push({ id: String(req.headers['webhook-id']), n: data.n, ticket: data.ticket, k: data.k, ok, at: Date.now() })
      res.writeHead(ok ? 204 : 500).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`
  return Object.assign(state, { url, server })
}

function startWorker(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] })
  return child
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}

async function main(): Promise<void> {
  const scratch = await scratchDatabase(BASE_URL, 'webhooks')
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-bench-webhooks-'))
  const env = {
    NODE_ENV: 'development',
    DATABASE_URL: scratch.url,
    DATA_DIR: dataDir,
    ENCRYPTION_KEY,
    JWT_SECRET: 'bench-jwt-secret-that-is-long-enough-0123456789',
    CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true',
    WORKER_CONCURRENCY: '16',
    WORKER_POLL_MS: '100',
    LOG_LEVEL: 'warn',
  }
  const config = loadConfig(env, () => {})
  const ctx = await createContext(config)
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = []
  let worker: ChildProcess | null = null
  try {
    const { db, cipher, clock } = ctx
    const user = await db
      .insertInto('users')
      .values({ email: 'bench@example.test', password_hash: 'x', tenant_id: null, created_at: new Date(), updated_at: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow()
    const tenant = await db.insertInto('tenants').values({ name: 'bench', owner_user_id: user.id }).returning('id').executeTakeFirstOrThrow()
    const repo = createWebhooksRepo(db)
    const endpoints: string[] = []
    for (let i = 0; i < RECEIVERS; i++) {
      const secret = `whsec_${randomBytes(32).toString('base64')}`
      const r = await startReceiver(secret, i === 0 ? 0.5 : 0)
      receivers.push(r)
      const e = await repo.insertEndpoint(tenant.id, {
        url: r.url,
        description: '',
        events: ['ticket.replied'],
        botIds: null,
        kind: 'standard',
        secretEnc: cipher.encrypt(secret),
        now: clock.now(),
      })
      endpoints.push(e.id)
    }
    const outbox = createOutbox({ db, repo, queue: ctx.queue, clock })
    worker = startWorker(env)

    // Time compression: waiting retries (and jobs held back by them) run now instead of in minutes or hours.
    // Deliveries first, then their jobs, in one transaction: a job never runs before its delivery is due.
    const compress = setInterval(() => {
      void db
        .transaction()
        .execute(async (trx) => {
          await sql`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE status = 'pending' AND next_attempt_at > now()`.execute(trx)
          await sql`UPDATE jobs SET run_at = now() WHERE kind = 'webhooks.deliver' AND status = 'queued' AND run_at > now()`.execute(trx)
        })
        .catch(() => {})
    }, 500)

    // Emission: EMITTERS loops, each a share of the tickets, so the events of one ticket are emitted in order.
    const committedAt = new Map<number, number>()
    const rolledBack = new Set<number>()
    const tickets = Array.from({ length: TICKETS }, () => crypto.randomUUID())
    let txn = 0
    const started = Date.now()
    const perTicket = new Array<number>(TICKETS).fill(0)
    const lanes = Array.from({ length: EMITTERS }, (_, lane) => tickets.map((_, t) => t).filter((t) => t % EMITTERS === lane))
    const emitter = async (lane: number) => {
      const mine = lanes[lane]!
      for (let i = 0, n = lane; n < EVENTS; i++, n += EMITTERS) {
        const t = mine[i % mine.length]!
        if (RATE > 0) await new Promise((r) => setTimeout(r, Math.max(0, started + (n / RATE) * 1000 - Date.now())))
        if (++txn % ROLLBACK_EVERY === 0) {
          await db
            .transaction()
            .execute(async (trx) => {
              await outbox.emit(tenant.id, { type: 'ticket.replied', botId: null, ticketId: tickets[t]!, data: { n: -n - 1, ticket: t, k: -1 } }, trx)
              throw new Error('rolled back')
            })
            .catch(() => {})
          rolledBack.add(-n - 1)
        }
        const k = perTicket[t]!++
        await db
          .transaction()
          .execute((trx) => outbox.emit(tenant.id, { type: 'ticket.replied', botId: null, ticketId: tickets[t]!, data: { n, ticket: t, k } }, trx))
        committedAt.set(n, Date.now())
      }
    }
    // the worker is killed once a third of all deliveries has succeeded, then started again
    let killed = false
    const killer = setInterval(() => {
      const ok = receivers.reduce((s, r) => s + r.receipts.filter((x) => x.ok).length, 0)
      if (!killed && ok >= (EVENTS * RECEIVERS) / 3) {
        killed = true
        worker!.kill('SIGKILL')
        console.log(`worker killed with SIGKILL after ${ok} successful deliveries (${((Date.now() - started) / 1000).toFixed(1)} s)`)
        worker = startWorker(env)
      }
    }, 50)
    await Promise.all(Array.from({ length: EMITTERS }, (_, i) => emitter(i)))
    const emitted = Date.now()
    console.log(`${EVENTS} events emitted in ${((emitted - started) / 1000).toFixed(1)} s (${rolledBack.size} more rolled back)`)

    const firstOk = (r: (typeof receivers)[number]) => {
      const m = new Map<number, Receipt>()
      for (const x of r.receipts) if (x.ok && x.n >= 0 && !m.has(x.n)) m.set(x.n, x)
      return m
    }
    const allDone = () => receivers.every((r) => firstOk(r).size >= EVENTS)
    let resent = 0
    const deadline = Date.now() + TIMEOUT_MS
    while (!allDone()) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the deliveries')
      // what the last retry still failed goes again, as an operator would send it
      const failed = await db
        .selectFrom('webhook_deliveries')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('status', '=', 'failed')
        .executeTakeFirstOrThrow()
      if (failed.n > 0) {
        for (const id of endpoints) {
          await db.transaction().execute(async (trx) => {
            const ids = await repo.resendFailed(tenant.id, id, new Date(0), new Date(), 10_000, trx)
            for (const d of ids) await enqueueDelivery(ctx.queue, tenant.id, d, trx)
            resent += ids.length
          })
        }
      }
      await new Promise((r) => setTimeout(r, 200))
    }
    const finished = Math.max(...receivers.map((r) => Math.max(...[...firstOk(r).values()].map((x) => x.at))))
    clearInterval(compress)
    clearInterval(killer)

    // An event whose delivery failed for good (8 attempts) let the ticket's later events go, as specified; it
    // was resent afterwards, so it arrives out of order by design and is left out of the order check.
    const gaveUp = await db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .select(['d.endpoint_id', 'e.body'])
      .where('d.attempts', '>', RETRY_SCHEDULE_SECONDS.length + 1)
      .execute()
    const resentEvents = new Map<number, Set<number>>(endpoints.map((_, i) => [i, new Set<number>()]))
    for (const g of gaveUp) resentEvents.get(endpoints.indexOf(g.endpoint_id))?.add((JSON.parse(g.body) as { data: { n: number } }).data.n)

    // checks
    const problems: string[] = []
    const delays: number[] = []
    let duplicates = 0
    receivers.forEach((r, i) => {
      const first = firstOk(r)
      if (r.bad) problems.push(`receiver ${i}: ${r.bad} requests failed signature verification`)
      const ghosts = r.receipts.filter((x) => rolledBack.has(x.n)).length
      if (ghosts) problems.push(`receiver ${i}: ${ghosts} deliveries of rolled-back events`)
      duplicates += r.receipts.filter((x) => x.ok && x.n >= 0).length - first.size
      const lastK = new Map<number, { k: number; at: number }>()
      for (const x of [...first.values()].sort((a, b) => a.at - b.at || a.k - b.k)) {
        delays.push(x.at - committedAt.get(x.n)!)
        if (resentEvents.get(i)!.has(x.n)) continue
        const prev = lastK.get(x.ticket)
        if (prev && prev.k > x.k) problems.push(`receiver ${i}: ticket ${x.ticket} event ${x.k} after ${prev.k}`)
        lastK.set(x.ticket, { k: x.k, at: x.at })
      }
      if (first.size < EVENTS) problems.push(`receiver ${i}: ${EVENTS - first.size} events never delivered`)
    })
    const seconds = (finished - started) / 1000
    console.log(
      `webhooks: ${EVENTS} events x ${RECEIVERS} receivers in ${seconds.toFixed(1)} s = ${(EVENTS / seconds).toFixed(0)} events/s (${((EVENTS * RECEIVERS) / seconds).toFixed(0)} deliveries/s)`,
    )
    console.log(`change-to-delivery delay: p50 ${pct(delays, 50)} ms, p95 ${pct(delays, 95)} ms, max ${Math.max(...delays)} ms`)
    console.log(
      `failing receiver: ${receivers[0]!.receipts.filter((x) => !x.ok).length} answers 500; redelivered after success (crash): ${duplicates}; resent after the last retry: ${resent}`,
    )
    if (problems.length) {
      console.log(`FAILED:\n${problems.slice(0, 20).join('\n')}`)
      process.exitCode = 1
    } else
      console.log(
        'checks: every event delivered at least once, none for a rolled-back change, order kept per ticket (events that failed 8 times and were resent aside)',
      )
  } finally {
    worker?.kill('SIGKILL')
    for (const r of receivers) r.server.close()
    await closeContext(ctx)
    await scratch.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
