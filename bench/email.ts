/**
 * The e-mail channel (npm run bench:email): BENCH_MESSAGES (default 1,000) inbound messages posted to a bot's
 * webhook, 20 at a time; three quarters open threads (one sender each), a quarter answer a thread opened
 * earlier (In-Reply-To its first message). The service serves HTTP in this process; the job worker runs in a
 * process of its own (`src/worker.ts`) and is killed with SIGKILL once a third of the messages are handled, then
 * started again. The answers go to a real SMTP server (test/fakes/smtp.ts); the model is the fake one, every
 * call held BENCH_MODEL_MS (default 150 ms) as a provider's latency.
 *
 * Checks: every message ends answered, handed off or ignored exactly once (no row still queued, none twice:
 * one mail per bot answer or notice recorded, no Message-ID received twice), none lost (1,000 rows). Prints
 * messages/s (messages / wall time from the first post to the last one handled) and p50/p95 from receipt to the
 * reply received by the SMTP server, with the fake model's latency beside it. Env: DATABASE_URL (server for the
 * scratch database; default postgres://root@127.0.0.1:5432/test). The machine is shared: figures move with it.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { closeContext, createContext } from '../src/context.js'
import { wireModules } from '../src/modules/index.js'
import { startFakeLlm } from '../test/fakes/fake-llm.js'
import { FakeSmtp } from '../test/fakes/smtp.js'
import { freePort } from '../test/helpers/service-process.js'
import { benchWorkspace, rawMail as mail, scratchDatabase } from './support.js'

const BASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1000)
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 150)
const CONCURRENCY = 20
/**
 * BENCH_RATE (messages/s): post at that steady rate (open loop) instead of 20 at a time. The burst's p95 is the
 * queue's backlog (the last of 1,000 waits for the 999 before it); at a rate below the worker's throughput the p95
 * is one message's own path from receipt to the reply received.
 */
const RATE = Number(process.env.BENCH_RATE ?? 0)

/**
 * BENCH_HOSTILE=1: beside the ordinary mails, one hostile mail a second from issue 50 (12 KB of ' on at', 10,000 blank
 * lines, a 6 MB and a 9.9 MB text mail, NUL in the subject, body and an attachment name, a Reply-To list of 30
 * addresses), while /health is asked every 50 ms. Prints the slowest /health answer, the hostile mails' outcomes,
 * whether the service and the worker survived, and checks every ordinary mail answered exactly once. Run it as
 * `npm start` runs the service: `node --max-old-space-size=320 --import tsx bench/email.ts`, with BENCH_RATE=5.
 */
const HOSTILE = process.env.BENCH_HOSTILE === '1'

const REFUNDS = `# Refunds\n\nRefunds are processed within 5 business days after we receive the returned item.\n\n## Shipping back\n\nReturn the parcel with the prepaid label within 30 days.\n`

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}

async function main(): Promise<void> {
  const fake = await startFakeLlm()
  fake.script(() => ({ delayMs: MODEL_MS }))
  const smtp = await new FakeSmtp().start()
  // each mail stamped when the SMTP server has it
  const push = smtp.mails.push.bind(smtp.mails)
  smtp.mails.push = (...items) => {
    for (const m of items) receivedTimes.set(m, Date.now())
    return push(...items)
  }
  const scratch = await scratchDatabase(BASE_URL, 'email')
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-bench-email-'))
  const env = {
    NODE_ENV: 'development',
    DATABASE_URL: scratch.url,
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    JWT_SECRET: 'bench-jwt-secret-that-is-long-enough-0123456789',
    LLM_BASE_URL: fake.url,
    SMTP_URL: smtp.url,
    INBOUND_EMAIL_DOMAIN: 'inbound.bench',
    // 750 senders in a few minutes: the bot's hourly cap (default 100) would hand most to a person
    EMAIL_BOT_HOURLY_CAP: '100000',
    RETRIEVAL_FLOOR_COSINE: 'text-embedding-3-small=none',
    RATE_LIMIT_ENABLED: 'false',
    INBOUND_EMAIL_PER_BOT_PER_MINUTE: '100000',
    WORKER_CONCURRENCY: '8',
    WORKER_POLL_MS: '100',
    JOB_LEASE_SECONDS: '5',
    LOG_LEVEL: 'warn',
  }
  const config = loadConfig({ ...env, RUN_WORKER: 'false' }, () => {})
  const ctx = await createContext(config)
  // BENCH_SERVICE=process: the service in a process of its own, as `npm start` runs it (320 MB heap, no worker in
  // it), so its /health is measured apart from this bench's clients, fake model and SMTP server
  const ownProcess = process.env.BENCH_SERVICE === 'process'
  const app = ownProcess ? null : await buildApp(ctx, wireModules(ctx))
  let service: ChildProcess | null = null
  let url: string
  if (app) {
    await app.listen({ port: 0, host: '127.0.0.1' })
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  } else {
    const port = await freePort()
    service = spawn(process.execPath, ['--max-old-space-size=320', '--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, ...env, RUN_WORKER: 'false', PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    url = `http://127.0.0.1:${port}`
    for (const until = Date.now() + 120_000; ; ) {
      if (
        (await fetch(`${url}/health`)
          .then((r) => r.status)
          .catch(() => 0)) === 200
      )
        break
      if (Date.now() > until || service.exitCode !== null) throw new Error('the service did not start')
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  let workerCrashes = 0
  const startWorker = (): ChildProcess => {
    const w = spawn(process.execPath, ['--max-old-space-size=320', '--import', 'tsx', 'src/worker.ts'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    // an exit that is not our SIGKILL is a crash
    w.on('exit', (_code, signal) => {
      if (signal !== 'SIGKILL') workerCrashes++
    })
    return w
  }
  let worker = startWorker()
  try {
    const ws = await benchWorkspace(ctx, url)
    const botId = (await ws.http<{ id: string }>('POST', '/bots', { name: 'Mail bot' })).id
    const form = new FormData()
    form.set('file', new Blob([REFUNDS], { type: 'text/markdown' }), 'refunds.md')
    const doc = await ws.http<{ id: string }>('POST', '/documents', form)
    for (;;) {
      const d = await ws.http<{ status: string }>('GET', `/documents/${doc.id}`)
      if (d.status === 'ready') break
      if (d.status === 'error') throw new Error('document failed')
      await new Promise((r) => setTimeout(r, 200))
    }
    const ch = await ws.http<{ inbound_address: string; inbound_url: string }>('PUT', `/bots/${botId}/email`, {
      enabled: true,
      mode: 'answer',
      // no reply_from: a new one mails a confirmation link, which would count among the answers
    })
    const hook = url + new URL(ch.inbound_url).pathname

    const threads = Math.round(MESSAGES * 0.75)
    const firsts: { from: string; id: string }[] = []
    const jobs: (() => ReturnType<typeof mail>)[] = []
    for (let i = 0; i < threads; i++) {
      const from = `visitor-${i}@example.test`
      const id = `<b${i}.${randomBytes(4).toString('hex')}@mail.example.test>`
      firsts.push({ from, id })
      jobs.push(() => mail({ to: ch.inbound_address, from, id, subject: `Refund ${i}`, body: 'How long do refunds take after you receive the returned item?' }))
    }
    for (let i = 0; i < MESSAGES - threads; i++) {
      const first = firsts[i % firsts.length]!
      const id = `<r${i}.${randomBytes(4).toString('hex')}@mail.example.test>`
      jobs.push(() =>
        mail({
          to: ch.inbound_address,
          from: first.from,
          id,
          subject: `Re: Refund ${i}`,
          body: 'And how do I return the parcel with the prepaid label?',
          inReplyTo: first.id,
        }),
      )
    }

    // /health's baseline in this run, before any mail: the machine is shared, so the stall is read against it
    const askHealth = async () => {
      const t0 = performance.now()
      await (await fetch(`${url}/health`)).arrayBuffer()
      return performance.now() - t0
    }
    const baseline: number[] = []
    const loadBefore = loadavg()[0]!
    for (const until = Date.now() + 5000; Date.now() < until; ) {
      baseline.push(await askHealth())
      await new Promise((r) => setTimeout(r, 50))
    }
    const started = Date.now()
    // the event loop's own delay while the mails arrive: a slow /health that is not a blocked loop is the machine's
    const loopDelay = monitorEventLoopDelay({ resolution: 10 })
    loopDelay.enable()
    // BENCH_LOOP_LOG=1: each block of the event loop over 50 ms, with its end in ms since the epoch
    let lastTick = performance.now()
    const ticker =
      process.env.BENCH_LOOP_LOG === '1'
        ? setInterval(() => {
            const now = performance.now()
            if (now - lastTick > 60) console.log(`loop blocked ${Math.round(now - lastTick - 10)} ms, until ${Date.now()}`)
            lastTick = now
          }, 10)
        : undefined
    let next = 0
    const statuses: Record<string, number> = {}
    const postOne = async (raw: string) => {
      const r = await fetch(hook, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: raw })
      const b = (await r.json()) as { status?: string; detail?: unknown }
      const key = r.status === 202 ? String(b.status) : `${r.status} ${JSON.stringify(b.detail).slice(0, 80)}`
      statuses[key] = (statuses[key] ?? 0) + 1
    }
    // /health every 50 ms, and (BENCH_HOSTILE) one hostile mail a second, for as long as the ordinary ones are posted
    let maxHealth = 0
    const during: number[] = []
    const loads: number[] = []
    let posting = true
    const health = (async () => {
      while (posting) {
        const ms = await askHealth()
        during.push(ms)
        maxHealth = Math.max(maxHealth, ms)
        if (during.length % 20 === 0) loads.push(loadavg()[0]!)
        await new Promise((r) => setTimeout(r, 50))
      }
    })()
    // the hostile mails come from a process of their own (bench/email-hostile-client.ts): a 10 MB upload's client
    // work in this process would be counted as the service's stall
    const hostile = HOSTILE
      ? (() => {
          const child = spawn(process.execPath, ['--import', 'tsx', 'bench/email-hostile-client.ts'], {
            env: { ...process.env, HOOK: hook, TO: ch.inbound_address },
            stdio: ['pipe', 'pipe', 'inherit'],
          })
          let out = ''
          child.stdout!.on('data', (d: Buffer) => {
            out += d.toString()
          })
          return {
            stop: () => child.stdin!.end(),
            done: new Promise<{ sent: number; statuses: Record<string, number> }>((resolve) =>
              child.on('exit', () => resolve(out.trim() ? JSON.parse(out.trim()) : { sent: 0, statuses: {} })),
            ),
          }
        })()
      : undefined
    // the worker is killed once a third of the ordinary mails are handled, while they are still arriving
    let killed = false
    const handledOrdinary = async () =>
      Number(
        (
          await ctx.db
            .selectFrom('email_messages')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('direction', '=', 'in')
            .where('status', '!=', 'queued')
            .where('message_id', 'not like', '<h%')
            .executeTakeFirstOrThrow()
        ).n,
      )
    const killer = (async () => {
      while (!killed) {
        const handled = await handledOrdinary()
        if (handled >= Math.ceil(MESSAGES / 3)) {
          worker.kill('SIGKILL')
          killed = true
          console.log(`worker killed with SIGKILL after ${handled} of ${MESSAGES} messages were handled (${((Date.now() - started) / 1000).toFixed(1)} s)`)
          await new Promise((r) => setTimeout(r, 500))
          worker = startWorker()
        } else await new Promise((r) => setTimeout(r, 100))
      }
    })()
    if (RATE > 0) {
      // the replies in threads come after their first messages: the first quarter of the rate's time posts only firsts
      const sent: Promise<void>[] = []
      for (let i = 0; i < jobs.length; i++) {
        const wait = started + (i * 1000) / RATE - Date.now()
        if (wait > 0) await new Promise((r) => setTimeout(r, wait))
        sent.push(postOne(jobs[i]!()))
      }
      await Promise.all(sent)
    } else {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < jobs.length) await postOne(jobs[next++]!())
        }),
      )
    }
    posting = false
    loopDelay.disable()
    clearInterval(ticker)
    hostile?.stop()
    const hostileOut = await hostile?.done
    await health
    const posted = Date.now()
    if (hostileOut) {
      const { sent: hostileSent, statuses: hostileStatuses } = hostileOut
      console.log(
        `hostile mix: ${hostileSent} hostile mails at 1/s beside the ordinary ones, outcomes ${JSON.stringify(hostileStatuses)}; slowest /health ${Math.round(maxHealth)} ms; worker crashes ${workerCrashes}; ${service && service.exitCode !== null ? 'the service process DIED' : 'service process alive'}`,
      )
    } else console.log(`slowest /health during the posts: ${Math.round(maxHealth)} ms`)
    if (!ownProcess)
      console.log(
        `event loop delay while posting: p99 ${Math.round(loopDelay.percentile(99) / 1e6)} ms, max ${Math.round(loopDelay.max / 1e6)} ms (10 ms resolution)`,
      )
    const r1 = (x: number) => Math.round(x * 10) / 10
    const stats = (xs: number[]) => `p50 ${r1(pct(xs, 50))} ms, p99 ${r1(pct(xs, 99))} ms, max ${r1(Math.max(...xs))} ms (n=${xs.length})`
    console.log(`/health baseline (5 s before any mail): ${stats(baseline)}; load average ${loadBefore.toFixed(1)}`)
    console.log(
      `/health during the posts: ${stats(during)}; load average ${Math.min(...loads, loadBefore).toFixed(1)}-${Math.max(...loads, loadBefore).toFixed(1)} (2 cores); ` +
        `p99 ${r1(pct(during, 99) / pct(baseline, 99))}x and max ${r1(Math.max(...during) / Math.max(...baseline))}x the baseline's`,
    )
    console.log(
      `posted ${MESSAGES} messages in ${((posted - started) / 1000).toFixed(1)} s (${RATE > 0 ? `${RATE}/s, steady` : `${CONCURRENCY} at a time`}): ${JSON.stringify(statuses)}`,
    )

    const pending = async () =>
      Number(
        (
          await ctx.db
            .selectFrom('email_messages')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('direction', '=', 'in')
            .where('status', '=', 'queued')
            .executeTakeFirstOrThrow()
        ).n,
      )
    while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 250))
    await killer
    const rows = await ctx.db.selectFrom('email_messages').select(['id', 'direction', 'message_id', 'status', 'reason', 'created_at', 'kind']).execute()
    const inbound = rows.filter((r) => r.direction === 'in')
    const out = rows.filter((r) => r.direction === 'out' && r.status === 'sent')
    // the mail job may still be running for the last ones
    const deadline = Date.now() + 60_000
    // the team's hand-off notices go to the workspace's owner (bench-…@) and are not rows of email_messages
    const customerMails = () => smtp.mails.filter((m) => !m.to.some((a) => a.startsWith('bench-'))).length
    while (customerMails() < out.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    const done = Date.now()
    const byStatus: Record<string, number> = {}
    for (const r of inbound) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1
    const ids = smtp.mails.map((m) => m.raw.messageId)
    const twice = ids.length - new Set(ids).size
    const inById = new Map(inbound.map((r) => [r.message_id, r]))
    const latencies = smtp.mails.flatMap((m) => {
      const r = m.raw.inReplyTo ? inById.get(m.raw.inReplyTo) : undefined
      return r ? [Math.max(0, receivedAt(m) - r.created_at.getTime())] : []
    })
    // every ordinary mail handled, none mailed twice (the hostile ones are answered, handed off or ignored: never queued)
    const ordinary = inbound.filter((r) => !r.message_id.startsWith('<h'))
    const toCustomers = customerMails()
    const ok =
      ordinary.length === MESSAGES &&
      !byStatus.queued &&
      twice === 0 &&
      toCustomers === out.length &&
      workerCrashes === 0 &&
      (!service || service.exitCode === null)
    console.log(
      `handled: ${JSON.stringify(byStatus)}; mails sent ${smtp.mails.length} (to customers ${toCustomers}, recorded ${out.length}; the rest team notices), sent twice ${twice}, ordinary rows ${ordinary.length}/${MESSAGES}, hostile rows ${inbound.length - ordinary.length}`,
    )
    console.log(`messages/s: ${(MESSAGES / ((done - started) / 1000)).toFixed(1)} over ${((done - started) / 1000).toFixed(1)} s (worker killed once)`)
    console.log(
      `receipt to reply received: p50 ${pct(latencies, 50)} ms, p95 ${pct(latencies, 95)} ms (n=${latencies.length}); fake model latency ${MODEL_MS} ms a call`,
    )
    console.log(ok ? 'OK: every message handled exactly once, none lost' : 'FAILED')
    if (!ok) process.exitCode = 1
  } finally {
    worker.kill('SIGKILL')
    const serviceAlive = service ? service.exitCode === null : true
    service?.kill('SIGTERM')
    if (!serviceAlive) console.log('FAILED: the service process died')
    await app?.close()
    await closeContext(ctx)
    await smtp.stop()
    await fake.close()
    await scratch.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const receivedTimes = new WeakMap<object, number>()
/** When the SMTP server had the mail (stamped as it arrives). */
function receivedAt(m: object): number {
  return receivedTimes.get(m) ?? Date.now()
}

// BENCH_MODE=tickets: working e-mail tickets (an agent's reply, a customer's, a member's notice reply; bench/email-tickets.ts)
const run = process.env.BENCH_MODE === 'tickets' ? () => import('./email-tickets.js').then((m) => m.ticketsBench()) : main
run().then(
  () => process.exit(),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
