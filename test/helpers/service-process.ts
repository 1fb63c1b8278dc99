import { FAKE_EMBEDDING_FLOOR } from '../fakes/fake-llm.js'
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { join } from 'node:path'

/**
 * The built service (scripts/build.mjs, as `npm start` runs it) in a child process, with its JSON log lines
 * collected: a test reads which process served what (pino writes each line's pid) and what the supervisor did.
 */
export const buildService = (out: string) => execFileSync(process.execPath, ['scripts/build.mjs', '--out', out], { stdio: 'pipe' })

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

export interface LogLine {
  pid: number
  msg: string
  [k: string]: unknown
}

export interface ServiceProcess {
  child: ChildProcess
  base: string
  logs: LogLine[]
  stderr: () => string
  exited: Promise<number | null>
  /** Resolves with the first log line (already written or to come) that matches. */
  waitLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>
}

export async function spawnService(out: string, env: Record<string, string>, entry = 'server.js'): Promise<ServiceProcess> {
  const port = await freePort()
  const child = spawn(process.execPath, [join(out, 'src', entry)], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...FAKE_EMBEDDING_FLOOR, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const logs: LogLine[] = []
  const waiters: { pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = []
  let rest = ''
  child.stdout!.on('data', (d: Buffer) => {
    const parts = (rest + d.toString()).split('\n')
    rest = parts.pop()!
    for (const p of parts) {
      if (!p.startsWith('{')) continue
      const line = JSON.parse(p) as LogLine
      logs.push(line)
      for (const w of [...waiters]) if (w.pred(line)) waiters.splice(waiters.indexOf(w), 1) && w.resolve(line)
    }
  })
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  const waitLog = (pred: (l: LogLine) => boolean, timeoutMs = 60_000) => {
    const seen = logs.find(pred)
    if (seen) return Promise.resolve(seen)
    return new Promise<LogLine>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no such log line within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`)), timeoutMs)
      waiters.push({ pred, resolve: (l) => (clearTimeout(t), resolve(l)) })
      void exited.then((code) => reject(new Error(`service exited ${code}: ${stderr.slice(-2000)}`)))
    })
  }
  return { child, base: `http://127.0.0.1:${port}`, logs, stderr: () => stderr, exited, waitLog }
}

/**
 * One request on a connection of its own (no keep-alive pool): node:cluster hands out connections, not
 * requests, so this is how consecutive requests reach different processes.
 */
export function freshRequest(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = request(url, { method, agent: false, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}
