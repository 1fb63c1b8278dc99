/**
 * Start and recovery (npm run bench:start -- [--rounds 2] [--only demo,health,recovery] [--no-build]), issue 41:
 *
 * (a) the demo (`npm run demo`: the build's dist/scripts/demo.js) on an empty DATA_DIR, from spawning the process to the
 *     line that prints its first cited answer; once with the build's template data directory (dist/pgdata-template,
 *     now) and once with it moved aside (the old way: initdb and every migration), alternated in each round.
 * (b) the built server (node dist/src/server.js with `npm start`'s flags) from spawning it to the first 200 of
 *     GET /health, on a fresh DATA_DIR and then warm (a second start on that same folder); and `npm start` itself
 *     (its build step first) on the warm folder.
 * (c) recovery: kill -9 of the built server mid-crawl and mid-indexing (a local site of 30 pages served 250 ms
 *     each, crawled two at a time, and a 4,000-section manual uploaded), as test/crash-recovery.test.ts does, then
 *     a restart on the same database: the time from the restart's spawn (and from the kill) until the run and every
 *     document are final; then nothing lost or doubled (one run, 31 pages, each page one document, no chunk twice,
 *     every document's chunk_count its chunks, no job left running). The same-run baseline is the same work
 *     without a kill. On the embedded database and, when DATABASE_URL is set (a server: a scratch database is made
 *     there and dropped), on PostgreSQL.
 *
 * `--base <dir>`: another checkout of the project (built with `node scripts/build.mjs` there, node_modules linked),
 * run the same way and alternated with this one in each round, so a change is measured before/after in one run.
 *
 * `BENCH_CPU_PROF=<dir>`: a CPU profile of each built server (node --cpu-prof), written when it stops.
 *
 * The machine is shared: compare the ratios printed beside each figure, made within the same run.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { openDatabase } from '../src/db/client.js'
import { FakeSmtp } from '../test/fakes/smtp.js'
import { FakeWebsite, html, links, prose } from '../test/fakes/website.js'
import type { TestApp } from '../test/helpers/app.js'
import { createTenant } from '../test/helpers/factories.js'
import { Api } from '../test/helpers/http.js'
import { freePort, scratchDatabase, startNodeFlags } from './support.js'

const argv = process.argv
const arg = (name: string) => (argv.indexOf(`--${name}`) > 0 ? argv[argv.indexOf(`--${name}`) + 1] : undefined)
const ROUNDS = Number(arg('rounds') ?? 2)
const ONLY = new Set((arg('only') ?? 'demo,health,recovery').split(','))
const PG_SERVER = process.env.DATABASE_URL
const BASE = arg('base')
const ROOTS = BASE ? ['.', BASE] : ['.']
const label = (root: string) => (root === '.' ? 'this tree' : 'base')
const TEMPLATE = join('dist', 'pgdata-template')
const TEMPLATE_ASIDE = `${TEMPLATE}.bench-aside`
const PAGES = 30
const SECRETS = {
  JWT_SECRET: 'bench-start-jwt-secret-that-is-long-enough-0123',
  ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
}

const children = new Set<ChildProcess>()
const scratchDirs: string[] = []
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b)
  return (v[Math.floor((v.length - 1) / 2)]! + v[Math.ceil((v.length - 1) / 2)]!) / 2
}
const load = () => loadavg()[0]!.toFixed(1)
const tmp = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `scb-bench-start-${tag}-`))
  scratchDirs.push(d)
  return d
}

/** A child in a process group of its own (npm and tsx start grandchildren), stopped as a group. */
function launch(cmd: string, args: string[], env: Record<string, string | undefined>, cwd = '.'): ChildProcess & { out: string } {
  const child = spawn(cmd, args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const c = Object.assign(child, { out: '' })
  child.stdout!.on('data', (d) => (c.out += d))
  child.stderr!.on('data', (d) => (c.out += d))
  children.add(child)
  child.once('exit', () => children.delete(child))
  return c
}
function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    try {
      process.kill(-child.pid!, signal)
    } catch {
      resolve()
    }
  })
}

async function until<T>(
  what: string,
  child: ChildProcess & { out: string },
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what}: the process exited ${child.exitCode}: ${child.out.slice(-1500)}`)
    const v = await fn().catch(() => null)
    if (v) return v
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs} ms: ${child.out.slice(-1500)}`)
    await sleep(everyMs)
  }
}

const health = (base: string) => fetch(`${base}/health`).then((r) => r.status === 200)

// --- (a) the demo ---------------------------------------------------------------------------------------
async function demoOnce(template: boolean, root = '.'): Promise<{ ms: number; printed: string }> {
  if (!template) renameSync(TEMPLATE, TEMPLATE_ASIDE)
  try {
    const port = await freePort()
    // as `npm run demo` runs it: the build's JavaScript (dist/scripts/demo.js); a checkout without it, under tsx
    const built = existsSync(join(root, 'dist', 'scripts', 'demo.js'))
    const child = launch(
      built ? process.execPath : join('node_modules', '.bin', 'tsx'),
      [built ? join('dist', 'scripts', 'demo.js') : 'scripts/demo.ts'],
      { PORT: String(port), DEMO_PAGE_PORT: String(await freePort()), DATA_DIR: join(tmp('demo'), 'data') },
      root,
    )
    const started = performance.now()
    try {
      await until('demo', child, async () => /first cited answer after/.test(child.out), 300_000, 10)
      const ms = performance.now() - started
      const up = /service up on port \d+ \(([\d.]+) s: code loaded ([\d.]+) s, database open ([\d.]+) s\)/.exec(child.out)
      const ready = /workspace ready \(([\d.]+) s\)/.exec(child.out)
      const answer = /first cited answer after ([\d.]+) s/.exec(child.out)
      const printed = `its own clock: code ${up?.[2]} s, database open ${up?.[3]} s, up ${up?.[1]} s, seeded ${ready?.[1]} s, answer ${answer?.[1]} s`
      return { ms, printed }
    } finally {
      await stop(child)
    }
  } finally {
    if (!template) renameSync(TEMPLATE_ASIDE, TEMPLATE)
  }
}

// --- (b) the built server to /health ----------------------------------------------------------------------
function serverEnv(dataDir: string, port: number, extra: Record<string, string | undefined> = {}) {
  return { HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info', ...SECRETS, ...extra }
}
/** BENCH_CPU_PROF=<dir>: a V8 CPU profile of every built server started, written there when it stops. */
const cpuProf = () => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])
async function startServer(dataDir: string, extra: Record<string, string | undefined> = {}, viaNpm = false, root = '.') {
  const port = await freePort()
  const env = serverEnv(dataDir, port, extra)
  const child = viaNpm
    ? launch('npm', ['start', '--silent'], env, root)
    : launch(process.execPath, [...startNodeFlags(), ...cpuProf(), 'dist/src/server.js'], env, root)
  const started = performance.now()
  const base = `http://127.0.0.1:${port}`
  await until('/health', child, () => health(base), 180_000, 10)
  const ms = performance.now() - started
  const startupMs = Number(/"startupMs":(\d+)/.exec(child.out)?.[1] ?? NaN)
  return { child, base, ms, startupMs }
}

async function healthRound(root: string): Promise<Record<string, number>> {
  const dir = tmp('health')
  const fresh = await startServer(dir, {}, false, root)
  await stop(fresh.child)
  const warm = await startServer(dir, {}, false, root)
  await stop(warm.child)
  const npm = await startServer(dir, {}, true, root)
  await stop(npm.child)
  console.log(
    `  ${label(root)}: fresh ${s(fresh.ms)} (service ready ${fresh.startupMs} ms) | warm ${s(warm.ms)} (ready ${warm.startupMs} ms) | npm start, warm ${s(npm.ms)}   load ${load()}`,
  )
  return { fresh: fresh.ms, warm: warm.ms, npm: npm.ms }
}

// --- (c) recovery after kill -9 -------------------------------------------------------------------------------
async function recoveryOnce(site: FakeWebsite, smtp: FakeSmtp, onPostgres: boolean, kill: boolean, root: string) {
  const dataDir = tmp('crash')
  const scratch = onPostgres ? await scratchDatabase(PG_SERVER!, 'start') : null
  const extra = {
    SMTP_URL: smtp.url,
    TRUST_PROXY: 'true',
    CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true',
    CRAWLER_DELAY_MS: '0',
    CRAWLER_CONCURRENCY: '2',
    LOG_LEVEL: 'warn',
    DATABASE_URL: scratch?.url,
  }
  try {
    const first = await startServer(dataDir, extra, false, root)
    const tenant = await createTenant({ api: () => new Api(first.base), smtp } as unknown as TestApp, { llmKey: null })
    const created = await tenant.api.post('/documents/sources/url', { url: site.url, schedule: 'manual' })
    if (created.status !== 201) throw new Error(`source: ${created.status} ${created.text}`)
    const sourceId = created.body.id as string
    const enqueued = performance.now()
    await until('crawl start', first.child, async () => (await tenant.api.get(`/documents/sources/${sourceId}`)).body.pages.length >= 5, 60_000, 50)
    const manual = Array.from(
      { length: 4000 },
      (_, i) => `## Section ${i}\n\nThe manual explains setting number ${i} and how it interacts with the others in detail.`,
    ).join('\n\n')
    const form = new FormData()
    form.append('file', new Blob([`# Manual\n\n${manual}`]), 'manual.md')
    const big = await tenant.api.post('/documents', form)
    if (big.status !== 201) throw new Error(`upload: ${big.status} ${big.text}`)
    await sleep(150)
    let server = first
    let killedAt = 0
    let restartAt = 0
    let readyAt = 0
    if (kill) {
      const before = (await tenant.api.get(`/documents/sources/${sourceId}`)).body
      if (before.recent_runs[0].status !== 'running') throw new Error('the crawl was over before the kill')
      await stop(first.child, 'SIGKILL')
      killedAt = performance.now()
      restartAt = performance.now()
      server = await startServer(dataDir, extra, false, root)
      readyAt = performance.now()
    }
    const api = new Api(server.base).withToken(tenant.token)
    await until(
      'final',
      server.child,
      async () => {
        const d = (await api.get(`/documents/sources/${sourceId}`)).body
        const docs = (await api.get('/documents')).body.documents as { status: string }[]
        return (
          ['ready', 'error'].includes(d.status) &&
          d.recent_runs[0].status !== 'running' &&
          d.pages.every((p: { status: string }) => p.status !== 'processing') &&
          docs.every((x) => x.status !== 'processing')
        )
      },
      180_000,
      50,
    )
    const doneAt = performance.now()
    const detail = (await api.get(`/documents/sources/${sourceId}`)).body
    const docs = (await api.get('/documents')).body.documents as { id: string; status: string }[]
    await stop(server.child)
    const check = await checkNothingLostOrDoubled(dataDir, scratch?.url, sourceId)
    const run = detail.recent_runs
    const ok =
      run.length === 1 &&
      run[0].status === 'completed' &&
      run[0].pages_found === PAGES + 1 &&
      run[0].pages_indexed === PAGES + 1 &&
      docs.every((d) => d.status === 'ready') &&
      docs.some((d) => d.id === big.body.id) &&
      check.dupes === 0 &&
      check.mismatched === 0 &&
      check.pages === PAGES + 1 &&
      check.urls === PAGES + 1 &&
      check.running === 0
    const facts = `runs ${run.length} (${run[0].status}, ${run[0].pages_found}/${run[0].pages_indexed} pages), docs ${docs.length} all ready ${docs.every((d) => d.status === 'ready')}, pages ${check.pages}/${check.urls} urls, duplicate chunks ${check.dupes}, chunk_count off ${check.mismatched}, jobs running ${check.running}`
    return kill
      ? { ok, facts, sinceRestart: doneAt - restartAt, sinceReady: doneAt - readyAt, sinceKill: doneAt - killedAt, restartMs: readyAt - restartAt }
      : { ok, facts, whole: doneAt - enqueued }
  } finally {
    await scratch?.drop().catch(() => {})
  }
}

async function checkNothingLostOrDoubled(dataDir: string, url: string | undefined, sourceId: string) {
  const handle = await openDatabase(url ? { url, pgliteDir: 'memory', poolSize: 2 } : { pgliteDir: join(dataDir, 'pgdata') })
  try {
    const one = async (q: ReturnType<typeof sql<{ n: number }>>) => (await q.execute(handle.db)).rows[0]!.n
    const dupes = await one(sql`SELECT count(*)::int AS n FROM (SELECT document_id, ordinal FROM chunks GROUP BY 1, 2 HAVING count(*) > 1) d`)
    const mismatched = await one(
      sql`SELECT count(*)::int AS n FROM documents d WHERE d.chunk_count <> (SELECT count(*) FROM chunks c WHERE c.document_id = d.id)`,
    )
    const pages = await one(sql`SELECT count(*)::int AS n FROM documents WHERE source_id = ${sourceId}`)
    const urls = await one(sql`SELECT count(DISTINCT source_url)::int AS n FROM documents WHERE source_id = ${sourceId}`)
    const running = await one(sql`SELECT count(*)::int AS n FROM jobs WHERE status = 'running'`)
    return { dupes, mismatched, pages, urls, running }
  } finally {
    await handle.close()
  }
}

// --- the run ---------------------------------------------------------------------------------------------------
async function main() {
  if (existsSync(TEMPLATE_ASIDE) && !existsSync(TEMPLATE)) renameSync(TEMPLATE_ASIDE, TEMPLATE) // a run stopped half-way
  if (!argv.includes('--no-build')) {
    const t = performance.now()
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'pipe' })
    console.log(`build: ${s(performance.now() - t)}`)
  }
  if (!existsSync(join(TEMPLATE, 'template.json'))) throw new Error(`no ${TEMPLATE}: npm run build makes it`)
  console.log(`bench:start, ${ROUNDS} rounds, load ${load()}`)

  if (ONLY.has('demo')) {
    console.log('\n(a) npm run demo on an empty DATA_DIR, spawn to its first cited answer (goal <= 5 s)')
    // this tree without its template (the old way), with it, and the base with its own
    const variants = [
      { name: 'no template (old way)', root: '.', template: false },
      ...ROOTS.map((root) => ({ name: `${label(root)}, template`, root, template: true })),
    ]
    const times = new Map(variants.map((v) => [v.name, [] as number[]]))
    for (let r = 0; r < ROUNDS; r++) {
      // alternate the order, so a change in the machine's load falls on each
      for (const v of r % 2 === 0 ? variants : [...variants].reverse()) {
        const { ms, printed } = await demoOnce(v.template, v.root)
        times.get(v.name)!.push(ms)
        console.log(`  ${v.name.padEnd(22)} ${s(ms)}   (${printed})   load ${load()}`)
      }
    }
    const ref = median(times.get(variants[1]!.name)!)
    console.log(`  median: ${[...times].map(([n, t]) => `${n} ${s(median(t))} (${(median(t) / ref).toFixed(2)} x)`).join(', ')}`)
  }

  if (ONLY.has('health')) {
    console.log('\n(b) built server, spawn to the first 200 of GET /health (goal: warm < 3 s)')
    const rounds = new Map(ROOTS.map((root) => [root, [] as Record<string, number>[]]))
    for (let r = 0; r < ROUNDS; r++) for (const root of r % 2 === 0 ? ROOTS : [...ROOTS].reverse()) rounds.get(root)!.push(await healthRound(root))
    for (const [root, rs] of rounds) {
      const m = (k: string) => median(rs.map((x) => x[k]!))
      const vsBase = BASE && root === '.' ? (k: string) => ` (${(m(k) / median(rounds.get(BASE)!.map((x) => x[k]!))).toFixed(2)} x base)` : () => ''
      console.log(
        `  median, ${label(root)}: fresh ${s(m('fresh'))}${vsBase('fresh')}, warm ${s(m('warm'))}${vsBase('warm')}, npm start warm ${s(m('npm'))}${vsBase('npm')}`,
      )
    }
  }

  if (ONLY.has('recovery')) {
    const smtp = await new FakeSmtp().start()
    const site = new FakeWebsite()
    const paths = Array.from({ length: PAGES }, (_, i) => `/p/${i + 1}`)
    site.set('/', { body: html('Home', prose('Home') + links(paths)) })
    for (const p of paths) site.set(p, { delayMs: 250, body: html(`Page ${p}`, prose(`Subject ${p}`, 8)) })
    await site.start()
    try {
      for (const onPostgres of PG_SERVER ? [false, true] : [false]) {
        const name = onPostgres ? 'PostgreSQL' : 'embedded'
        console.log(`\n(c) ${name}: kill -9 mid-crawl and mid-indexing, restart to every job final (goal <= 10 s)`)
        const base: number[] = []
        const rec = new Map(ROOTS.map((root) => [root, [] as number[]]))
        for (let r = 0; r < ROUNDS; r++) {
          const b = await recoveryOnce(site, smtp, onPostgres, false, '.')
          base.push(b.whole!)
          console.log(`  no kill: crawl + indexing ${s(b.whole!)}; ${b.ok ? 'ok' : 'WRONG'}: ${b.facts}   load ${load()}`)
          for (const root of r % 2 === 0 ? ROOTS : [...ROOTS].reverse()) {
            const k = await recoveryOnce(site, smtp, onPostgres, true, root)
            rec.get(root)!.push(k.sinceRestart!)
            console.log(
              `  kill -9, ${label(root)}: final ${s(k.sinceRestart!)} after the restart's spawn (serving after ${s(k.restartMs!)}, then ${s(k.sinceReady!)}), ${s(k.sinceKill!)} after the kill; ${k.ok ? 'ok' : 'WRONG'}: ${k.facts}   load ${load()}`,
            )
          }
        }
        for (const [root, t] of rec) {
          console.log(
            `  median, ${label(root)}: final ${s(median(t))} after the restart; the whole job without a kill ${s(median(base))} (${(median(t) / median(base)).toFixed(2)} x)`,
          )
        }
      }
    } finally {
      await site.stop()
      await smtp.stop()
    }
  }
}

const cleanUp = async () => {
  await Promise.all([...children].map((c) => stop(c, 'SIGKILL')))
  if (existsSync(TEMPLATE_ASIDE) && !existsSync(TEMPLATE)) renameSync(TEMPLATE_ASIDE, TEMPLATE)
  for (const d of scratchDirs) rmSync(d, { recursive: true, force: true })
}
process.on('SIGINT', () => void cleanUp().then(() => process.exit(130)))
main().then(
  () => cleanUp(),
  async (err) => {
    console.error(err instanceof Error ? err.message : err)
    await cleanUp()
    process.exit(1)
  },
)
