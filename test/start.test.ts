import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'

/**
 * `npm start` runs the service as built JavaScript (scripts/build.mjs, then node dist/src/server.js): this builds
 * it into a scratch folder inside the project and starts it as the start script does, on a fresh embedded
 * database, so a module that only loads under tsx (a TypeScript-only import, an asset read beside the
 * source) fails here rather than on a user's first start.
 */
const out = join('node_modules', '.cache', `scb-start-test-${process.pid}`)
const dataDir = mkdtempSync(join(tmpdir(), 'scb-start-'))
afterAll(() => {
  rmSync(out, { recursive: true, force: true })
  rmSync(dataDir, { recursive: true, force: true })
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

it('builds, starts with the start script flags on a fresh DATA_DIR, serves, and stops cleanly on SIGTERM', async () => {
  execFileSync(process.execPath, ['scripts/build.mjs', '--out', out], { stdio: 'pipe' })
  // nothing changed since: the second build (npm start's first step on an unchanged checkout) does nothing
  const again = spawnSync(process.execPath, ['scripts/build.mjs', '--out', out], { encoding: 'utf8' })
  expect(again.status, again.stderr).toBe(0)
  expect(again.stderr).toMatch(/is up to date/)
  // The build leaves a migrated embedded database the fresh DATA_DIR below starts from (src/db/template.ts).
  const template = JSON.parse(readFileSync(join(out, 'pgdata-template', 'template.json'), 'utf8')) as { migrations: string[] }
  expect(template.migrations).toContain('0001_foundation')
  const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start
  expect(start).toContain('node scripts/build.mjs')
  const flags = start.match(/--max-old-space-size=\d+/g) ?? []
  const port = await freePort()
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' }
  const child = spawn(process.execPath, [...flags, join(out, 'src', 'server.js')], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  try {
    const base = `http://127.0.0.1:${port}`
    const started = Date.now()
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${stderr}`)
      const ok = await fetch(`${base}/health`).then(
        (r) => r.status === 200,
        () => false,
      )
      if (ok) break
      if (Date.now() - started > 60_000) throw new Error(`not ready after 60 s: ${stderr}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    expect((await fetch(`${base}/openapi.json`)).status).toBe(200)
    expect(existsSync(join(dataDir, 'pgdata', 'PG_VERSION'))).toBe(true)
    const embed = await fetch(`${base}/embed.js`)
    expect(embed.status).toBe(200)
    expect(embed.headers.get('content-type')).toMatch(/javascript/)
    expect((await embed.text()).length).toBeGreaterThan(100)
  } finally {
    child.kill('SIGTERM')
  }
  expect(await exited).toBe(0)
}, 90_000)

it('runs the demo from the build (npm run demo): a fresh DATA_DIR to its first cited answer', async () => {
  if (!existsSync(join(out, 'scripts', 'demo.js'))) execFileSync(process.execPath, ['scripts/build.mjs', '--out', out], { stdio: 'pipe' })
  expect((JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { demo: string } }).scripts.demo).toContain('dist/scripts/demo.js')
  const demoData = mkdtempSync(join(tmpdir(), 'scb-built-demo-'))
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', PORT: '0', DEMO_PAGE_PORT: '0', DATA_DIR: demoData, LOG_LEVEL: 'warn' }
  const child = spawn(process.execPath, [join(out, 'scripts', 'demo.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let printed = ''
  child.stdout.on('data', (d: Buffer) => (printed += d.toString()))
  child.stderr.on('data', (d: Buffer) => (printed += d.toString()))
  try {
    const deadline = Date.now() + 180_000
    while (!/first cited answer after/.test(printed)) {
      if (child.exitCode !== null) throw new Error(`the built demo exited ${child.exitCode}: ${printed.slice(-1500)}`)
      if (Date.now() > deadline) throw new Error(`the built demo gave no answer in 180 s: ${printed.slice(-1500)}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(printed).toMatch(/Cited: http:\/\/127\.0\.0\.1:\d+\/help\//)
  } finally {
    child.kill('SIGINT')
    await new Promise((r) => child.once('exit', r))
    rmSync(demoData, { recursive: true, force: true })
  }
}, 240_000)
