/**
 * bench:scale's whole turns (SCALE_TURNS=N): the goal of issue 51 is about a turn, not a search. The real service
 * (dist/src/server.js, as `npm start` runs it; one HTTP process, no job worker) on the bench's own database, the fake
 * OpenAI-compatible model (test/fakes/fake-llm.ts) in this process, giving each question the vector of its page plus
 * a rewording (as the search benchmark does: the question shares no word with its page, only the vector side finds
 * it). Each workspace measured gets a model key, an API key and a bot; N turns one at a time through POST /chat, each
 * a new session and a new question. Per workspace: p50/p95 of a turn (the client's wall time), CPU a turn (the
 * service's process + this database's PostgreSQL backends, from /proc), whether the page reached the answer prompt,
 * and the turns answered, refused or handed off (the fake answers from its page when the page is in the prompt,
 * else it says the sources do not cover it, so a turn that lost its page is not a fast answered one).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import type { Db } from '../src/db/client.js'
import { createCipher, lastChars, sha256Hex } from '../src/lib/crypto.js'
import { newPublicId } from '../src/modules/bots/bots.fns.js'
import { parseSources, startFakeLlm } from '../test/fakes/fake-llm.js'
import { backendsOf, cpuSeconds, processTree, freePort, startNodeFlags } from './support.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const r1 = (x: number) => Math.round(x * 10) / 10

export interface TurnWorkspace {
  label: string
  id: string
  pages: { ids: string[]; vecs: number[][] }
}

export async function wholeTurns(o: {
  db: Db
  dbUrl: string
  model: string
  dims: number
  efSearch: number
  turns: number
  workspaces: TurnWorkspace[]
  question: (page: number[]) => number[]
  load: () => string
}) {
  const dbName = new URL(o.dbUrl).pathname.slice(1)
  // the service remembers the key a database was written with, so a later run (SCALE_REUSE) must give the same one:
  // derived from the scratch database's name (a bench database, no real secret in it)
  const secrets = { JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: sha256Hex(`bench:scale:${dbName}`) }
  const llmKey = 'sk-bench-0123456789'
  const cipher = createCipher(secrets.ENCRYPTION_KEY)
  const fake = await startFakeLlm({ embeddingDims: o.dims })
  const vectors = new Map<string, number[]>()
  const expected = new Map<string, string>() // question token -> the start of its page's text
  const reached = new Set<string>()
  const token = (text: string) => /\bzq(\d+)k\b/.exec(text)?.[0]
  fake.embedVectorAs((text) => {
    const t = token(text)
    return t ? vectors.get(t) : undefined
  })
  // the answer call: the fake answers from the page when the page is among the prompt's sources (citing it), else
  // falls through to its default, which says the sources do not cover the question
  fake.script((req) => {
    if (req.json) return
    const all = req.messages.map((m) => m.content).join('\n')
    const t = token(all)
    const want = t && expected.get(t)
    if (!want || !all.includes(want)) return
    reached.add(t)
    const source = [
      ...parseSources(
        req.messages
          .filter((m) => m.role === 'system')
          .map((m) => m.content)
          .join('\n'),
      ),
      ...parseSources(all),
    ].find((s) => s.text.includes(want))
    return source ? { text: `${want}. [${source.n}]` } : undefined
  })

  const keys = new Map<string, string>()
  for (const w of o.workspaces) {
    await o.db
      .updateTable('tenants')
      .set({ llm_key_enc: cipher.encrypt(llmKey), llm_key_hint: lastChars(llmKey) })
      .where('id', '=', w.id)
      .execute()
    const apiKey = `ck_${randomBytes(16).toString('hex')}`
    const now = new Date()
    await o.db
      .insertInto('api_keys')
      .values({ tenant_id: w.id, key_hash: sha256Hex(apiKey), key_hint: lastChars(apiKey), status: 'active', created_at: now })
      .execute()
    await o.db
      .insertInto('bots')
      .values({ tenant_id: w.id, name: 'Scale Bot', public_id: newPublicId(), allowed_domains: '[]', created_at: now, updated_at: now })
      .execute()
    keys.set(w.id, apiKey)
  }

  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'ignore' })
  const port = await freePort()
  const decisions: Record<string, number> = {}
  let lastDecision = ''
  const server: ChildProcess = spawn('nice', ['-n', '19', process.execPath, ...startNodeFlags(), 'dist/src/server.js'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: o.dbUrl,
      LLM_BASE_URL: fake.url,
      EMBEDDING_MODEL: o.model,
      // the bench's vectors are not the fake's hashed words: a question at 0.5 cosine from a chunk is on topic
      RETRIEVAL_FLOOR_COSINE: `${o.model}=0.5`,
      RETRIEVAL_HNSW_EF_SEARCH: String(o.efSearch),
      RATE_LIMIT_ENABLED: 'false',
      RUN_WORKER: 'false',
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
      WEB_CONCURRENCY: '1',
      ...secrets,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  server.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)))
  createInterface({ input: server.stdout! }).on('line', (line) => {
    if (!line.includes('"chat turn"')) return
    try {
      lastDecision = (JSON.parse(line) as { decision?: string }).decision ?? '?'
    } catch {}
  })
  const base = `http://127.0.0.1:${port}`
  try {
    for (const deadline = Date.now() + 120_000; ; ) {
      if (server.exitCode !== null) throw new Error(`the service exited: ${stderr}`)
      if (
        await fetch(`${base}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break
      if (Date.now() > deadline) throw new Error('the service did not start')
      await sleep(100)
    }
    let n = 0
    const ask = async (w: TurnWorkspace, p: number) => {
      const t = `zq${n++}k`
      vectors.set(t, o.question(w.pages.vecs[p]!))
      const content = (await o.db.selectFrom('chunks').select('content').where('tenant_id', '=', w.id).where('id', '=', w.pages.ids[p]!).executeTakeFirst())
        ?.content
      expected.set(t, (content ?? '').split(' ').slice(0, 8).join(' '))
      lastDecision = ''
      const t0 = performance.now()
      const r = await fetch(`${base}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': keys.get(w.id)! },
        body: JSON.stringify({ question: `How do I set up ${t}?` }),
      })
      const body = (await r.json()) as { text?: string; chat_ended?: boolean; ticket_number?: string }
      const ms = performance.now() - t0
      for (let i = 0; i < 20 && !lastDecision; i++) await sleep(5) // the turn's log line follows its reply
      return { ms, ok: r.ok, reached: reached.has(t), decision: lastDecision || (r.ok ? '?' : `http ${r.status}`), body }
    }
    const cpuNow = () => processTree(server.pid!).reduce((a, p) => a + cpuSeconds(p), 0) * 1000
    const pgNow = () => backendsOf(dbName).reduce((a, p) => a + cpuSeconds(p), 0) * 1000
    const results: { label: string; p50: number; p95: number; service: number; pg: number; reached: number; answered: number; turns: number }[] = []
    // warm-up, every workspace first: JIT, pools, caches, plans
    for (const w of o.workspaces) for (let i = 0; i < 10; i++) await ask(w, i % w.pages.vecs.length)
    for (const w of o.workspaces) {
      const times: number[] = []
      let got = 0
      let answered = 0
      const byDecision: Record<string, number> = {}
      const c0 = cpuNow()
      const p0 = pgNow()
      for (let i = 0; i < o.turns; i++) {
        const r = await ask(w, i % w.pages.vecs.length)
        byDecision[r.decision] = (byDecision[r.decision] ?? 0) + 1
        decisions[r.decision] = (decisions[r.decision] ?? 0) + 1
        if (r.reached) got++
        if (r.decision === 'answer') {
          answered++
          times.push(r.ms)
        }
      }
      const service = (cpuNow() - c0) / o.turns
      const pg = (pgNow() - p0) / o.turns
      const res = { label: w.label, p50: pct(times, 50), p95: pct(times, 95), service, pg, reached: got, answered, turns: o.turns }
      results.push(res)
      const yard = results[0]!
      console.log(
        `turn, ${w.label.padEnd(28)} p50 ${r1(res.p50)} / p95 ${r1(res.p95)} ms (${answered} answered turns counted; ${JSON.stringify(byDecision)}), CPU ${r1(service)} (service) + ${r1(pg)} (PostgreSQL) ms a turn, page reached the prompt ${got}/${o.turns}` +
          (results.length > 1
            ? ` | ratio to ${yard.label}: p95 ${r1(res.p95 / yard.p95)}x, CPU ${r1((res.service + res.pg) / (yard.service + yard.pg))}x`
            : '') +
          `, load ${o.load()}`,
      )
    }
    return results
  } finally {
    if (server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r))
      server.kill('SIGTERM')
      await exited
    }
    await fake.close()
  }
}
