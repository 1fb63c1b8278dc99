import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { FakeSmtp } from './fakes/smtp.js'
import { cloneDatabase, type TestApp } from './helpers/app.js'
import { rawMail } from './helpers/email.js'
import { createTenant, uniqueEmail } from './helpers/factories.js'
import { Api } from './helpers/http.js'
import { buildService, freePort, type ServiceProcess, spawnService } from './helpers/service-process.js'

/*
 * Issue 50, finding 2: a 6 MB mail crashed the process under `npm start`'s 320 MB heap, and each retry of the
 * sender's MTA killed the restarted one. Here the built service runs as `npm start` runs it (its own process,
 * --max-old-space-size=320), on the embedded database or on PostgreSQL and Redis when DATABASE_URL and REDIS_URL
 * are set, and takes a 9.9 MB text mail over SMTP and one over the webhook: both accepted, both handled by the
 * turn (parsed again in the worker), the process alive and /health answering throughout.
 */
const onPostgres = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL)
const out = join('node_modules', '.cache', `scb-email-big-test-${process.pid}`)
const dataDir = mkdtempSync(join(tmpdir(), 'scb-email-big-'))
let llm: FakeLlm
let smtp: FakeSmtp
let db: { url: string; drop: () => Promise<void> } | null = null
let svc: ServiceProcess | undefined

beforeAll(async () => {
  buildService(out)
  ;[llm, smtp, db] = await Promise.all([startFakeLlm(), new FakeSmtp().start(), onPostgres ? cloneDatabase() : Promise.resolve(null)])
}, 300_000)

afterAll(async () => {
  if (svc && svc.child.exitCode === null) svc.child.kill('SIGKILL')
  await llm?.close()
  await smtp?.stop()
  await db?.drop().catch(() => {})
  rmSync(out, { recursive: true, force: true })
  rmSync(dataDir, { recursive: true, force: true })
}, 60_000)

const BIG = `How long do refunds take?\n${`${'x'.repeat(99)}\n`.repeat(Math.floor((9.9 * 1024 * 1024) / 100))}`

it('a 9.9 MB text mail over SMTP and over the webhook: accepted and handled, the 320 MB process alive, /health answering', async () => {
  const smtpPort = await freePort()
  svc = await spawnService(out, {
    NODE_OPTIONS: '--max-old-space-size=320',
    DATA_DIR: dataDir,
    ...(db ? { DATABASE_URL: db.url, REDIS_URL: process.env.REDIS_URL!, REDIS_PREFIX: `scbt:emailbig${process.pid}:` } : {}),
    RUN_WORKER: 'true',
    WORKER_POLL_MS: '100',
    LOG_LEVEL: 'info',
    SMTP_URL: smtp.url,
    LLM_BASE_URL: llm.url,
    INBOUND_EMAIL_DOMAIN: 'inbound.test',
    INBOUND_SMTP_PORT: String(smtpPort),
    JWT_SECRET: 'email-big-test-jwt-secret-that-is-long-enough-0123',
    ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  })
  await svc.waitLog((l) => l.msg === 'service ready', 120_000)
  const health = async () => (await fetch(`${svc!.base}/health`)).status
  const owner = await createTenant({ api: () => new Api(svc!.base), smtp } as unknown as TestApp)
  const r = await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer' })
  expect(r.status, r.text).toBe(200)
  const inbound = r.body.inbound_address as string
  const hook = svc.base + new URL(r.body.inbound_url).pathname

  const fromHook = uniqueEmail('big-hook')
  const posted = await fetch(hook, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: rawMail({ to: inbound, from: fromHook, body: BIG }) })
  expect(posted.status).toBe(202)
  expect(((await posted.json()) as { status: string }).status).toBe('queued')
  expect(await health()).toBe(200)

  const fromSmtp = uniqueEmail('big-smtp')
  const client = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true })
  const sent = await client.sendMail({ envelope: { from: fromSmtp, to: [inbound] }, raw: rawMail({ to: inbound, from: fromSmtp, body: BIG }) })
  client.close()
  expect(sent.accepted).toEqual([inbound])
  expect(await health()).toBe(200)

  // the worker parses each again from its stored form for the turn: both leave `queued`, the process still up
  for (let i = 0; ; i++) {
    const items = (await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=10`)).body.items as { status: string }[]
    if (items.length === 2 && items.every((m) => m.status !== 'queued')) break
    if (i > 600) throw new Error(`still queued: ${JSON.stringify(items.map((m) => m.status))}`)
    await new Promise((res) => setTimeout(res, 200))
  }
  expect(svc.child.exitCode).toBeNull()
  expect(await health()).toBe(200)
  expect(svc.stderr()).not.toMatch(/heap out of memory/i)
}, 600_000)
