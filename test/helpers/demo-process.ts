import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './service-process.js'

/**
 * `npm run demo` as a newcomer starts it (scripts/demo.ts in a process of its own, a fresh DATA_DIR, the ports
 * given), for the tests that walk the demo (issue 52, item 11): it resolves once the banner is printed.
 */
export interface DemoProcess {
  out: string
  /** the demo bot's public id, from the banner */
  botId: string
  api: string
  page: string
  dataDir: string
  password: string
  /** The .eml files of the outbox, oldest first, with quoted-printable undone. */
  outbox(): string[]
  stop(): Promise<number | null>
}

export { freePort }

/**
 * With no options: free ports and a fresh DATA_DIR, removed by `stop`. A test that runs the demo twice over one
 * folder gives its own `dataDir` and ports (kept by `stop`); `env` adds variables (the demo must ignore the service's).
 */
export async function startDemo(o: { dataDir?: string; port?: number; pagePort?: number; env?: Record<string, string> } = {}): Promise<DemoProcess> {
  const port = o.port ?? (await freePort())
  const pagePort = o.pagePort ?? (await freePort())
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'scb-demo-walk-'))
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    PORT: String(port),
    DEMO_PAGE_PORT: String(pagePort),
    LOG_LEVEL: 'warn',
    ...o.env,
  }
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  const deadline = Date.now() + 300_000
  while (!out.includes('Ctrl+C stops')) {
    if (child.exitCode !== null) throw new Error(`demo exited ${child.exitCode}: ${out}`)
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`demo not ready after 300 s: ${out}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  const botId = /the widget of bot (ch_[a-z0-9]{18})/.exec(out)?.[1] ?? ''
  const password = /demo@example\.com \/ (\S+)/.exec(out)?.[1] ?? ''
  return {
    out,
    botId,
    password,
    dataDir,
    api: `http://localhost:${port}`,
    page: `http://localhost:${pagePort}/`,
    outbox() {
      const dir = join(dataDir, 'outbox')
      return readdirSync(dir)
        .filter((f) => f.endsWith('.eml'))
        .sort()
        .map((f) =>
          readFileSync(join(dir, f), 'utf8')
            .replace(/=\r?\n/g, '')
            .replace(/(?:=[0-9A-F]{2})+/g, (m) => Buffer.from(m.replaceAll('=', ''), 'hex').toString('utf8')),
        )
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT')
      const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 15_000))])
      if (child.exitCode === null) child.kill('SIGKILL')
      if (!o.dataDir) rmSync(dataDir, { recursive: true, force: true })
      return code
    },
  }
}
