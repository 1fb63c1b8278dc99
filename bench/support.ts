/**
 * Small pieces the benchmarks share: a free port, JSONL files, a scratch database, the start script's flags, an
 * in-process service (and one with its config, data directory and clean-up), a workspace, the help centre's pages.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createJwt } from '../src/modules/auth/jwt.js'
import { createTenantsRepo } from '../src/modules/tenants/tenants.repo.js'
import { createTenantsService } from '../src/modules/tenants/tenants.service.js'
import { type AppContext, closeContext, createContext } from '../src/context.js'
import type { Worker } from '../src/jobs/worker.js'
import { wireModules, type Modules } from '../src/modules/index.js'
import { createWorker } from '../src/runtime.js'
import { adminQuery } from '../test/helpers/pg-admin.js'

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
    s.on('error', reject)
  })
}

export const readJsonl = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T)

/** The node flags `npm start` runs the server with (its heap cap), so figures are those of a started service. */
export const startNodeFlags = (): string[] =>
  (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.match(/--max-old-space-size=\d+/g) ?? []

/** A fresh database on `server` (a PostgreSQL URL) named `scb_bench_<tag>_<random>`, and how to drop it. */
export async function scratchDatabase(server: string, tag: string): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  // an identifier without quoting: a tag like 'email-tickets' is written with underscores
  const name = `scb_bench_${tag.replace(/[^a-z0-9_]/gi, '_')}_${randomBytes(4).toString('hex')}`
  const admin = (q: string) => adminQuery(server, q).then(() => {})
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(server)
  url.pathname = `/${name}`
  return { name, url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/** The service in this process on a free 127.0.0.1 port, with its job worker running (benchmarks that drive it over HTTP). */
export async function serveInProcess(ctx: AppContext): Promise<{ app: FastifyInstance; modules: Modules; worker: Worker; url: string }> {
  const modules = wireModules(ctx)
  const app = await buildApp(ctx, modules)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const worker = createWorker(ctx, modules)
  await worker.start()
  return { app, modules, worker, url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` }
}

/**
 * The service in this process (serveInProcess) over a config of its own: a fresh data directory, random secrets, no
 * rate limit, the embedded database in memory, or with `pgServer` (a PostgreSQL URL) a scratch database there;
 * `env` adds to that and overrides it. `close` stops the service and removes the directory and the database.
 */
export async function benchService(
  tag: string,
  env: Record<string, string | undefined>,
  pgServer?: string,
  /** the embedded database in memory (the default) or on disk under the bench's DATA_DIR, as `npm start` keeps it */
  embedded: 'memory' | 'disk' = 'memory',
) {
  const scratch = pgServer ? await scratchDatabase(pgServer, tag) : null
  const dataDir = mkdtempSync(join(tmpdir(), `scb-bench-${tag}-`))
  const config = loadConfig(
    {
      DATA_DIR: dataDir,
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      RATE_LIMIT_ENABLED: 'false',
      DATABASE_URL: scratch?.url,
      ...env,
    },
    () => {},
  )
  const ctx = await createContext(config, embedded === 'memory' ? { pgliteDir: 'memory' } : {})
  const served = await serveInProcess(ctx)
  return {
    ...served,
    ctx,
    config,
    async close() {
      await served.app.close()
      await served.worker.stop(2000)
      await closeContext(ctx)
      await scratch?.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * A workspace with a model key, written through the tenants service (no e-mail round trip), and a client for
 * everything else over HTTP as its owner (a JSON body, or FormData for uploads).
 */
export async function benchWorkspace(ctx: AppContext, url: string, llmKey = 'sk-bench-0123456789') {
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
  await tenants.update(tenant.id, { llm_api_key: llmKey })
  const jwt = await createJwt(ctx.config.JWT_SECRET, clock).sign({ sub: user.id, ver: 0 })
  async function http<T>(method: string, path: string, body?: unknown): Promise<T> {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${jwt}` } }
    if (body instanceof FormData) init.body = body
    else if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers = { ...init.headers, 'content-type': 'application/json' }
    }
    const r = await fetch(`${url}${path}`, init)
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`)
    return (await r.json()) as T
  }
  return { tenantId: tenant.id, userId: user.id, jwt, http }
}

/** The help centre's pages under `root`/_docs a visitor can reach: no redirects, nothing the site keeps out of its search. */
export function helpPages(root: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name)
      if (statSync(p).isDirectory()) walk(p)
      else if (name.endsWith('.md') && !name.startsWith('_')) {
        const text = readFileSync(p, 'utf8')
        const front = /^---\n([\s\S]*?)\n---/.exec(text)?.[1] ?? ''
        if (/^(redirect:|layout: redirect|excluded_in_search: true)/m.test(front)) continue
        out.push({ path: relative(join(root, '_docs'), p), text })
      }
    }
  }
  walk(join(root, '_docs'))
  return out
}

/** A JSON (or multipart, for a FormData body) call to the service at `base`: status and parsed body. */
export function jsonCaller(base: string) {
  return async (method: string, path: string, auth: Record<string, string>, body?: unknown) => {
    const form = body instanceof FormData
    const res = await fetch(base + path, {
      method,
      headers: { ...auth, ...(body !== undefined && !form ? { 'content-type': 'application/json' } : {}) },
      body: form ? body : body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
}

/** A plain-text RFC 822 mail, as a sender's MTA hands it over (the e-mail benches). */
export function rawMail(v: { to: string; from: string; id: string; subject: string; body: string; inReplyTo?: string }): string {
  return [
    `From: ${v.from}`,
    `To: ${v.to}`,
    `Subject: ${v.subject}`,
    `Message-ID: ${v.id}`,
    ...(v.inReplyTo ? [`In-Reply-To: ${v.inReplyTo}`, `References: ${v.inReplyTo}`] : []),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    v.body,
    '',
  ].join('\r\n')
}

/** The PostgreSQL backends serving one database on this machine (their process titles name it: "postgres: user db host(port) ..."). */
export function backendsOf(dbName: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(` ${dbName} `)
      } catch {
        return false
      }
    })
    .map(Number)
}

/** CPU seconds (user + system) a process has used so far, in 10 ms ticks; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) / 100
  } catch {
    return 0
  }
}

/** A process and its children (a server runs WEB_CONCURRENCY HTTP processes on PostgreSQL, src/cluster.ts). */
export function processTree(pid: number): number[] {
  const parent = new Map<number, number>()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // gone
    }
  }
  const out = [pid]
  for (let i = 0; i < out.length; i++) for (const [p, pp] of parent) if (pp === out[i]) out.push(p)
  return out
}
