/**
 * Evaluation-run figures (npm run bench:evals), one process with the embedded database:
 *
 * 1. BENCH_CASES (default 200) evaluation cases (POST /evals/cases) against a small knowledge base, the fake model
 *    (test/fakes/fake-llm.ts) taking BENCH_MODEL_MS (default 300 ms) before each chat reply; a run (POST /evals/runs)
 *    polled (GET /evals/runs/{id}) until done: cases per minute.
 * 2. Live chat's first answer token (the first `chunk` frame of POST /widget/chat), BENCH_TURNS (default 30)
 *    sequential turns with no run, then the same while a run is going: p50/p95 and the p95 ratio (goal <= 1.2x).
 * 3. BENCH_EVALS_VISITOR=1 (and BENCH_DOCS, default ../shared/data/docs-corpus/duckduckgo-help-pages, present):
 *    the DuckDuckGo help centre uploaded as bench/grounding.ts does, the covered questions of
 *    bench/grounding-visitor-questions.json imported as cases (expect answered, sources_any: the page's document
 *    id; tagged dev / heldout), one run per tag with the fake model answering at once: pass rate and reached share.
 */
import { existsSync, readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { FAKE_EMBEDDING_FLOOR, startFakeLlm } from '../test/fakes/fake-llm.js'
import { benchService, benchWorkspace, helpPages } from './support.js'

const CASES = Number(process.env.BENCH_CASES ?? 200)
const TURNS = Number(process.env.BENCH_TURNS ?? 30)
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 300)
const VISITOR = process.env.BENCH_EVALS_VISITOR === '1'
const DOCS = process.env.BENCH_DOCS ?? '../shared/data/docs-corpus/duckduckgo-help-pages'

const TOPICS = [
  ['refunds', 'Refunds are paid back to the original card within 5 business days of the return arriving at our warehouse.'],
  ['shipping', 'Orders ship within two working days and delivery takes three to five days inside the country.'],
  ['passwords', 'To reset your password, open Settings, choose Security and click Reset password; a link is sent by e-mail.'],
  ['invoices', 'Invoices are available in your account under Billing, as PDF files, for the last 24 months.'],
  ['plans', 'The Pro plan costs 12 euros a month and includes unlimited projects and priority support.'],
] as const
const KNOWLEDGE = `# Help centre\n\n${TOPICS.map(([t, text]) => `## ${t[0]!.toUpperCase()}${t.slice(1)}\n\n${text}\n`).join('\n')}`
const QUESTIONS = [
  (t: string) => `How do ${t} work?`,
  (t: string) => `Tell me about ${t}, please`,
  (t: string) => `I have a question on ${t}`,
  (t: string) => `What should I know about ${t}?`,
]

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}

const fake = await startFakeLlm()
let modelMs = MODEL_MS
fake.script(() => (modelMs > 0 ? { delayMs: modelMs } : undefined))

const service = await benchService('evals', {
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  LLM_BASE_URL: fake.url,
  ...FAKE_EMBEDDING_FLOOR,
  UPLOAD_RATE_PER_HOUR: '10000',
  WORKER_POLL_MS: '50',
  KNOWLEDGE_EXTRACT_DELAY_SECONDS: '86400',
  // the run must not stop at the default token budget before the last case
  EVAL_MAX_TOKENS: '100000000',
})
const { ctx, url } = service

// A workspace with a model key; everything else over HTTP as its owner
const { http } = await benchWorkspace(ctx, url)

async function upload(name: string, text: string): Promise<string> {
  const form = new FormData()
  form.append('file', new Blob([text], { type: 'text/markdown' }), name)
  return (await http<{ id: string }>('POST', '/documents', form)).id
}
async function waitIndexed(ids: string[]) {
  for (const id of ids) {
    for (let i = 0; ; i++) {
      const d = await http<{ status: string }>('GET', `/documents/${id}`)
      if (d.status !== 'processing') break
      if (i > 3000) throw new Error('document not indexed')
      await sleep(100)
    }
  }
}

interface Run {
  id: string
  status: string
  progress: number
  partial: boolean
  totals: { cases: number; passed: number; failed: number }
  results: { passed: boolean; reached: boolean; outcome: string }[]
}
async function startRun(body: Record<string, unknown>): Promise<string> {
  return (await http<{ id: string }>('POST', '/evals/runs', body)).id
}
async function waitRun(id: string): Promise<Run> {
  for (;;) {
    const r = await http<Run>('GET', `/evals/runs/${id}`)
    if (r.status === 'done' || r.status === 'failed') return r
    await sleep(250)
  }
}

const bot = await http<{ id: string; public_id: string }>('POST', '/bots', { name: 'Bench bot' })
const docId = await upload('help.md', KNOWLEDGE)
await waitIndexed([docId])

/** One widget turn; the time to its first `chunk` frame (null when none came). */
async function firstToken(i: number): Promise<number | null> {
  const t0 = performance.now()
  const res = await fetch(`${url}/widget/chat?bot_id=${bot.public_id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.7.${(i >> 8) & 255}.${i & 255}` },
    body: JSON.stringify({ message: QUESTIONS[i % QUESTIONS.length]!(TOPICS[i % TOPICS.length]![0]) }),
  })
  if (!res.ok || !res.body) throw new Error(`widget turn: ${res.status}`)
  const reader = res.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let first: number | null = null
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    if (first === null && text.includes('"type":"chunk"')) first = performance.now() - t0
  }
  return first
}
async function chatTurns(offset: number, n: number, stop?: () => boolean): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n && !stop?.(); i++) {
    const f = await firstToken(offset + i)
    if (f !== null) out.push(f)
  }
  return out
}

// --- 1. throughput
const tc = performance.now()
for (let i = 0; i < CASES; i++) {
  const [topic] = TOPICS[i % TOPICS.length]!
  await http('POST', '/evals/cases', {
    question: `${QUESTIONS[Math.floor(i / TOPICS.length) % QUESTIONS.length]!(topic)} (case ${i + 1})`,
    expect: { outcome: 'answered', sources_any: [docId] },
    tags: ['throughput'],
  })
}
console.log(
  `evals bench: ${CASES} cases created over HTTP in ${((performance.now() - tc) / 1000).toFixed(1)} s; fake model ${MODEL_MS} ms a chat call; embedded DB, one process`,
)
const calls0 = fake.chatCalls().length
const t0 = performance.now()
const run = await waitRun(await startRun({ tags: ['throughput'] }))
const secs = (performance.now() - t0) / 1000
console.log(
  `run of ${run.totals.cases} cases: ${run.status}${run.partial ? ' (partial)' : ''} in ${secs.toFixed(1)} s = ${((run.totals.cases / secs) * 60).toFixed(1)} cases/min; ` +
    `${run.totals.passed} passed; ${((fake.chatCalls().length - calls0) / Math.max(1, run.totals.cases)).toFixed(1)} model calls a case`,
)

// --- 2. live chat first token, without then during a run
await chatTurns(10_000, 3) // warm-up
const idle = await chatTurns(0, TURNS)
const during = await startRun({ tags: ['throughput'] })
await sleep(500)
const busy = await chatTurns(1000, TURNS)
const runState = await http<Run>('GET', `/evals/runs/${during}`)
await waitRun(during)
// no run again after it ended: the machine is shared, so the no-run figure is both passes together
const idleAfter = await chatTurns(2000, TURNS)
const none = [...idle, ...idleAfter]
const ratio = pct(busy, 95) / pct(none, 95)
console.log(
  `widget first answer token, ${TURNS} sequential turns each: no run (before) p50 ${pct(idle, 50).toFixed(0)} / p95 ${pct(idle, 95).toFixed(0)} ms, (after) p50 ${pct(idleAfter, 50).toFixed(0)} / p95 ${pct(idleAfter, 95).toFixed(0)} ms; ` +
    `during a run p50 ${pct(busy, 50).toFixed(0)} / p95 ${pct(busy, 95).toFixed(0)} ms (${busy.length} answered; the run was ${runState.status}, ${(100 * runState.progress).toFixed(0)} % done at the end)`,
)
console.log(
  `p95 ratio during / without a run (both no-run passes, ${none.length} turns): ${ratio.toFixed(2)}x (goal <= 1.2x: ${ratio <= 1.2 ? 'met' : 'MISSED'})`,
)

// --- 3. visitor questions of the DuckDuckGo help centre as cases
if (VISITOR) {
  if (!existsSync(DOCS)) console.log(`visitor mode: ${DOCS} not found, skipped`)
  else {
    modelMs = 0
    const pages = helpPages(DOCS)
    const idOf = new Map<string, string>()
    for (const p of pages) idOf.set(p.path, await upload(p.path.replace(/\//g, '__'), p.text))
    await waitIndexed([...idOf.values()])
    const questions = (
      JSON.parse(readFileSync('bench/grounding-visitor-questions.json', 'utf8')) as {
        q: string
        covered: boolean
        pages: string[]
        split: 'dev' | 'heldout'
      }[]
    ).filter((q) => q.covered)
    let made = 0
    for (const q of questions) {
      const ids = q.pages.map((p) => idOf.get(p)).filter((x): x is string => !!x)
      if (!ids.length) continue
      await http('POST', '/evals/cases', { question: q.q, expect: { outcome: 'answered', sources_any: ids }, tags: [`visitor-${q.split}`] })
      made++
    }
    console.log(`visitor mode: ${pages.length} pages uploaded, ${made} covered questions as cases; fake model answering at once, hashed fake embedder`)
    for (const split of ['dev', 'heldout']) {
      const r = await waitRun(await startRun({ tags: [`visitor-${split}`] }))
      const n = r.results.length
      const passed = r.results.filter((x) => x.passed).length
      const reached = r.results.filter((x) => x.reached).length
      const answered = r.results.filter((x) => x.outcome === 'answered').length
      console.log(
        `visitor ${split}: ${n} cases, passed ${((100 * passed) / n).toFixed(1)} %, reached=true ${((100 * reached) / n).toFixed(1)} %, answered ${((100 * answered) / n).toFixed(1)} %`,
      )
    }
  }
}

await service.close()
await fake.close()
