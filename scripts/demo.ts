/**
 * `npm run demo`: the service on the embedded defaults with the bundled fake model, a demo workspace and a
 * page where the widget answers, in one command.
 *
 * In this one process: the fake OpenAI-compatible model (test/fakes/fake-llm.ts, the same server the tests
 * use), the service with its job worker (as src/server.ts wires it), and a small site on DEMO_PAGE_PORT
 * that serves the demo page and the help center in scripts/demo/help. The workspace is seeded through the
 * service's own HTTP API (register, verify from the outbox mail, key, bot, crawl of the help center), plus
 * one approved FAQ. Every step looks before it writes, so a second run finds the data and adds nothing.
 * Finally it asks the bot a question the way the widget does and prints the time to that cited answer.
 *
 * Variables: PORT (8000), DEMO_PAGE_PORT (PORT + 1), HOST (127.0.0.1), DATA_DIR (./data/demo), LOG_LEVEL
 * (warn). DATABASE_URL, REDIS_URL, SMTP_URL and LLM_BASE_URL are ignored on purpose: demo data never lands
 * in a real database or mailbox, and the model is always the bundled fake.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../src/app.js'
import { ConfigError, loadConfig, type Config } from '../src/config.js'
import { closeContext, createContext } from '../src/context.js'
import { questionKey } from '../src/modules/knowledge/knowledge.fns.js'
import { createKnowledgeRepo } from '../src/modules/knowledge/knowledge.repo.js'
import { wireModules } from '../src/modules/index.js'
import { createWorker } from '../src/runtime.js'
import { preloadDetector } from '../src/modules/shared/language-detect.js'
import { startInboundSmtp } from '../src/modules/email-channel/email-channel.smtp.js'
import { FAKE_EMBEDDING_FLOOR, startFakeLlm } from '../test/fakes/fake-llm.js'

// Seconds since this process started (performance.now() counts from the process's time origin), so the
// figures printed include loading the code.
// scripts/demo beside this file, or from the build (dist/scripts/demo.js) the project's scripts/demo
const HERE =
  [
    join(dirname(fileURLToPath(import.meta.url)), 'demo'),
    join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'demo'),
    join(process.cwd(), 'scripts', 'demo'),
  ].find((d) => existsSync(join(d, 'page.html'))) ?? join(dirname(fileURLToPath(import.meta.url)), 'demo')

export const DEMO_EMAIL = 'demo@example.com'
export const DEMO_PASSWORD = 'Demo-Passw0rd!'
const SOURCE_NAME = 'Demo help center'
const BOT_NAME = 'Demo help bot'
const FAQ = {
  question: 'How do I contact support?',
  answer: 'Write to support@example.com or ask the bot for a person: it opens a ticket and an operator replies in the chat.',
}
const CHECK_QUESTION = 'Which file types can I upload?'

const env = process.env
const port = Number(env.PORT ?? 8000)
const host = env.HOST || '127.0.0.1'
const dataDir = env.DATA_DIR || './data/demo'
const seconds = () => (performance.now() / 1000).toFixed(1)

function fail(message: string): never {
  console.error(`demo: ${message}`)
  process.exit(1)
}

// --- the fake model and the service -----------------------------------------------------------------
// The demo's model has read the help center: its relevance guard judges a question by that knowledge ("best pizza
// topping" is off-topic, "Where do I find the embed snippet?" is not), and it answers with the sentences that answer.
const helpTexts = readdirSync(join(HERE, 'help'))
  .filter((f) => f.endsWith('.html'))
  .map((f) =>
    readFileSync(join(HERE, 'help', f), 'utf8')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&[a-z]+;/g, ' '),
  )
const fake = await startFakeLlm({ port: 0, host: '127.0.0.1', maxRecorded: 200, knowledge: helpTexts })
let config: Config
try {
  config = loadConfig(
    {
      ...env,
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      SMTP_URL: undefined,
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: host,
      DATA_DIR: dataDir,
      LLM_BASE_URL: fake.url,
      ...FAKE_EMBEDDING_FLOOR,
      LOG_LEVEL: env.LOG_LEVEL || 'warn',
      // The help center is served on this machine; the crawler refuses loopback addresses otherwise.
      CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true',
      // Politeness delays are for other people's sites; this one is ours and local.
      CRAWLER_DELAY_MS: '0',
    },
    () => {},
  )
} catch (err) {
  fail(err instanceof ConfigError ? err.message : String(err))
}
const imported = seconds()
const ctx = await createContext(config)
const opened = seconds()
const modules = wireModules(ctx)
const app = await buildApp(ctx, modules)
try {
  await app.listen({ port, host })
} catch (err) {
  fail(`cannot listen on ${host}:${port} (${(err as Error).message}); set PORT to a free port`)
}
const apiPort = (app.server.address() as { port: number }).port
// inbound mail by SMTP as the service takes it (#52): with INBOUND_SMTP_PORT set the demo listens too, else the bot
// page's address has no listener and the banner below says so (the dashboard's test mail uses the webhook)
let smtp: Awaited<ReturnType<typeof startInboundSmtp>> | null = null
if (config.INBOUND_SMTP_PORT !== undefined) {
  try {
    smtp = await startInboundSmtp(modules.emailChannel, {
      port: config.INBOUND_SMTP_PORT,
      host,
      maxBytes: config.INBOUND_EMAIL_MAX_BYTES,
      tlsCert: config.INBOUND_SMTP_TLS_CERT,
      tlsKey: config.INBOUND_SMTP_TLS_KEY,
      log: ctx.log,
    })
  } catch (err) {
    fail(`cannot listen for mail on ${host}:${config.INBOUND_SMTP_PORT} (${(err as Error).message}); set INBOUND_SMTP_PORT to a free port or leave it out`)
  }
}
const worker = createWorker(ctx, modules)
await worker.start()
// read while the workspace is seeded, not by the first question
preloadDetector()
console.log(`demo: service up on port ${apiPort} (${seconds()} s: code loaded ${imported} s, database open ${opened} s); seeding the demo workspace...`)
// Browsers and the printed links use localhost; the seeding below talks to the socket itself.
const publicApi = `http://localhost:${apiPort}`
const api = `http://127.0.0.1:${apiPort}`

// --- the demo site: the page with the widget, and the help center the bot learns from -----------------
let botPublicId = ''
const pageTemplate = readFileSync(join(HERE, 'page.html'), 'utf8')
const helpFiles = new Set(readdirSync(join(HERE, 'help')).filter((f) => f.endsWith('.html')))
const site: Server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]!
  const send = (status: number, type: string, body: string) => res.writeHead(status, { 'content-type': type }).end(body)
  if (path === '/' || path === '/index.html') {
    return send(200, 'text/html; charset=utf-8', pageTemplate.replaceAll('{{API}}', publicApi).replaceAll('{{BOT_ID}}', botPublicId))
  }
  if (path === '/robots.txt') return send(200, 'text/plain', 'User-agent: *\nAllow: /\n')
  const m = /^\/help\/([a-z0-9-]*\.html)?$/.exec(path)
  const file = m ? (m[1] ?? 'index.html') : null
  if (file && helpFiles.has(file)) return send(200, 'text/html; charset=utf-8', readFileSync(join(HERE, 'help', file), 'utf8'))
  send(404, 'text/plain', 'not found')
})
const pagePort = Number(env.DEMO_PAGE_PORT ?? apiPort + 1)
await new Promise<void>((resolve, reject) => {
  site.once('error', (err) => reject(new Error(`cannot listen on port ${pagePort} (${err.message}); set DEMO_PAGE_PORT to a free port`)))
  site.listen(pagePort, '127.0.0.1', resolve)
}).catch((err: Error) => fail(err.message))
const sitePort = (site.address() as { port: number }).port
const helpUrl = `http://127.0.0.1:${sitePort}/help/`

let stopping = false
async function stop(code = 0) {
  if (stopping) return
  stopping = true
  const force = setTimeout(() => process.exit(code || 1), 10_000).unref()
  site.close()
  await smtp?.close().catch(() => {})
  await app.close().catch(() => {})
  await worker.stop().catch(() => {})
  await closeContext(ctx).catch(() => {})
  await fake.close().catch(() => {})
  clearTimeout(force)
  process.exit(code)
}
process.on('SIGINT', () => void stop())
process.on('SIGTERM', () => void stop())

// --- seeding over the HTTP API ----------------------------------------------------------------------
let jwt = ''
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {}
  if (jwt) headers.authorization = `Bearer ${jwt}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(api + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text }
}
async function must(method: string, path: string, body?: unknown): Promise<any> {
  const r = await call(method, path, body)
  if (r.status >= 300) fail(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`)
  return r.body
}
async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The newest verification token mailed to the demo owner, read from the outbox (.eml, quoted-printable). */
function outboxToken(): string | null {
  const dir = join(config.dataDir, 'outbox')
  let files: string[]
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.eml'))
      .sort()
      .reverse()
  } catch {
    return null
  }
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8')
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    if (!text.includes(DEMO_EMAIL)) continue
    const m = /verify\?token=([A-Za-z0-9_%-]+)/.exec(text)
    if (m) return decodeURIComponent(m[1]!)
  }
  return null
}

async function seedOwner() {
  const reg = await call('POST', '/auth/register', { email: DEMO_EMAIL, password: DEMO_PASSWORD })
  if (reg.status !== 200 && reg.status !== 409) fail(`register answered ${reg.status}: ${JSON.stringify(reg.body)}`)
  if (reg.status === 200) {
    // A new owner: verifying signs in, so the password is not checked a second time (one argon2 hash less on a
    // first start).
    const token = await until('the verification mail', async () => outboxToken(), 15_000)
    jwt = (await must('POST', '/auth/verify-email', { token })).token
    return
  }
  const login = await call('POST', '/auth/login', { email: DEMO_EMAIL, password: DEMO_PASSWORD })
  if (login.status !== 200) fail(`the demo owner exists in ${config.dataDir} with another password; delete that folder to start over`)
  jwt = login.body.token
  if (!login.body.user.is_verified) {
    // A first run (or one stopped half-way) mailed the link to the outbox; the job may still be running.
    const token = await until('the verification mail', async () => outboxToken(), 15_000)
    const verified = await must('POST', '/auth/verify-email', { token })
    jwt = verified.token
  }
}

async function seedWorkspace() {
  const me = await must('GET', '/tenants/me')
  // The fake accepts any key of the usual shape; a real provider needs your own.
  if (!me.has_llm_key) await must('PATCH', '/tenants/me', { llm_api_key: 'sk-demo-fake-model', support_email: 'support@example.com' })
  const bots = await must('GET', '/bots')
  const bot = bots.items[0]
  const domains = ['localhost', '127.0.0.1']
  if (bot.name !== BOT_NAME || domains.some((d) => !bot.allowed_domains.includes(d))) {
    await must('PATCH', `/bots/${bot.id}`, { name: BOT_NAME, allowed_domains: domains })
  }
  botPublicId = bot.public_id

  // the bot answers mail from the start, so the bot page's "Send a test mail" works at once; a workspace that has
  // received mail keeps the setting its owner chose
  const mail = await must('GET', `/bots/${bot.id}/email`)
  if (!mail.enabled && (await must('GET', `/bots/${bot.id}/email/messages?limit=1`)).items.length === 0) {
    await must('PUT', `/bots/${bot.id}/email`, { enabled: true, mode: 'answer' })
  }

  const sources = await must('GET', '/documents/sources')
  let source = sources.url_sources.find((s: { name: string }) => s.name === SOURCE_NAME)
  if (source && source.url !== helpUrl) {
    // Another DEMO_PAGE_PORT than last time: its page addresses (the citations) would be dead links.
    await must('DELETE', `/documents/sources/${source.id}`)
    source = undefined
  }
  if (!source) source = await must('POST', '/documents/sources/url', { url: helpUrl, name: SOURCE_NAME, schedule: 'manual' })
  const detail = await until('the help center crawl', async () => {
    const d = await must('GET', `/documents/sources/${source.id}`)
    if (d.status === 'error') fail(`crawl of ${helpUrl} failed: ${d.error_message}`)
    const indexed = d.status === 'ready' && d.pages.length > 0 && d.pages.every((p: { status?: string }) => p.status !== 'processing')
    return indexed ? d : null
  })

  const tenantId = me.id as string
  const repo = createKnowledgeRepo(ctx.db, ctx.database.changes)
  const key = questionKey(FAQ.question)
  // Keys include dismissed candidates: an FAQ the operator rejected is not brought back.
  if (!(await repo.faqKeys(tenantId)).includes(key)) {
    await repo.insertFaqs(tenantId, [{ ...FAQ, confidence: 1, source: 'docs', questionKey: key, documentId: null, approved: false }], new Date())
    const list = await must('GET', '/knowledge/faq?approved=false&limit=200')
    const item = list.items.find((i: { question: string }) => i.question === FAQ.question)
    if (item) await must('POST', `/knowledge/faq/${item.id}/approve`)
  }
  return { pages: detail.pages.length as number }
}

/** Asks as the widget does (session, then the answer stream) and returns the final frame. */
async function askLikeTheWidget(question: string) {
  const origin = `http://localhost:${sitePort}`
  const headers = { 'content-type': 'application/json', origin }
  const init = await fetch(`${api}/widget/session/init`, { method: 'POST', headers, body: JSON.stringify({ bot_id: botPublicId }) })
  if (init.status !== 200) fail(`widget session answered ${init.status}: ${await init.text()}`)
  const { session_id } = (await init.json()) as { session_id: string }
  const res = await fetch(`${api}/widget/chat?bot_id=${botPublicId}&session_id=${session_id}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ message: question }),
  })
  const frames = (await res.text())
    .split('\n\n')
    .map((f) => f.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice(6)) as { type: string; text?: string; sources?: { title: string; url: string }[]; message?: string })
  return frames.find((f) => f.type === 'done' || f.type === 'error')
}

await seedOwner()
const { pages } = await seedWorkspace()
console.log(`demo: workspace ready (${seconds()} s); asking the bot a first question...`)
const done = await askLikeTheWidget(CHECK_QUESTION)
if (!done || done.type !== 'done') fail(`the check question got no answer: ${JSON.stringify(done)}`)
const cited = done.sources ?? []
// the demo's own first question is answered from the help centre and cited, or the demo says it is broken
if (cited.length === 0) fail(`the check question "${CHECK_QUESTION}" was not answered with a cited source: ${JSON.stringify(done.text ?? '').slice(0, 300)}`)

console.log(`
Support Chatbot demo is running (first cited answer after ${seconds()} s).

  Demo page    http://localhost:${sitePort}/        the widget of bot ${botPublicId}
  Dashboard    ${publicApi}/app/      log in as ${DEMO_EMAIL} / ${DEMO_PASSWORD}
  API docs     ${publicApi}/docs
  Help center  ${helpUrl}   (${pages} pages crawled into the bot, plus 1 approved FAQ)
  Model        the bundled fake at ${fake.url}: it quotes the best matching sentences of the sources
  E-mail in    ${
    smtp
      ? `SMTP on ${host}:${config.INBOUND_SMTP_PORT} for *@${config.INBOUND_EMAIL_DOMAIN}, and the webhook on the bot page`
      : `the webhook only; no SMTP listener: set INBOUND_SMTP_PORT for one`
  }
               The bot page's "Send a test mail" is answered in your outbox, cited, and opens no ticket.
  E-mail out   written to ${join(config.dataDir, 'outbox')} as .eml files, never sent

  Not running here: a real model. The fake quotes the help centre's sentences; its German is a stand-in: it reads
  a German question through a glossary of the help centre's words and writes the help centre's sentences from a
  hand-made German table (other languages, and sentences not in the table, stay as written). No real mail server
  (nothing leaves this machine), no PostgreSQL or Redis (the embedded database in ${config.dataDir}).

  Asked: ${CHECK_QUESTION}
  Answer: ${done.text}
  Cited: ${cited.map((s) => s.url).join(', ') || '(none)'}

Data is kept in ${config.dataDir}; running the demo again reuses it. Ctrl+C stops.`)
