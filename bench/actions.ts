/**
 * Actions figures (npm run bench:actions), one process with the embedded database:
 *
 * A widget turn whose question makes the model call one read action (`order_status`) on a local API that
 * answers in API_MS (50 ms), with the fake model (test/fakes/fake-llm.ts, function calling included) taking
 * MODEL_MS (300 ms) before each reply. Sequential turns (BENCH_TURNS, default 30): the first answer token
 * (the first `chunk` frame) and the full turn (the `done` frame), p50/p95, against the goal "full turn <=
 * 2 model calls + API time + 50 ms". Then the same number of turns on a bot without actions (same knowledge,
 * same model delay), and the CPU time per turn of both (process.cpuUsage: this whole process, so the fake
 * model and the fake API are in both figures alike).
 *
 * Guards and answer validation are off (GUARDS_ENABLED, VALIDATION_ENABLED): they are model calls of their
 * own, not the action's cost; the model calls a turn made are counted and printed.
 */
import { performance } from 'node:perf_hooks'
import { FAKE_EMBEDDING_FLOOR, startFakeLlm } from '../test/fakes/fake-llm.js'
import { json, WorkspaceApi } from '../test/fakes/workspace-api.js'
import { reads } from '../test/helpers/http.js'
import { SseParser } from '../widget/src/sse.js'
import { benchService, benchWorkspace } from './support.js'

const TURNS = Number(process.env.BENCH_TURNS ?? 30)
const MODEL_MS = 300
const API_MS = 50
const QUESTION = 'Where is my order 12345?'
const KNOWLEDGE = `# Orders and delivery

Orders ship within two working days. You can see the status of an order in your account under Orders, or ask the assistant with your order number. Delivery takes three to five days.
`

const fake = await startFakeLlm()
fake.script(() => ({ delayMs: MODEL_MS }))
const wsApi = await new WorkspaceApi().start()
wsApi.handler = (_req, res) => void setTimeout(() => json(res, 200, { status: 'shipped', items: [{ name: 'Desk lamp' }] }), API_MS)

const service = await benchService('actions', {
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  LLM_BASE_URL: fake.url,
  ...FAKE_EMBEDDING_FLOOR,
  GUARDS_ENABLED: 'false',
  VALIDATION_ENABLED: 'false',
  CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true',
})
const { ctx, url } = service

// A workspace with a model key; everything else over HTTP as its owner
const { http } = await benchWorkspace(ctx, url)

const withActions = await http<{ id: string; public_id: string }>('POST', '/bots', { name: 'With actions' })
const without = await http<{ id: string; public_id: string }>('POST', '/bots', { name: 'Without actions' })
await http('POST', '/actions', {
  name: 'order_status',
  description: 'Look up the status of an order by its order number.',
  method: 'GET',
  url: `${wsApi.url}/orders/{order_number}`,
  parameters: [{ name: 'order_number', source: 'model', schema: { type: 'string', pattern: '^[0-9]{3,10}$' }, required: true }],
  response_fields: ['$.status', '$.items[*].name'],
  bot_ids: [withActions.id],
  enabled: true,
})
const form = new FormData()
form.append('file', new Blob([KNOWLEDGE], { type: 'text/markdown' }), 'orders.md')
const doc = await http<{ id: string }>('POST', '/documents', form)
for (let i = 0; ; i++) {
  const d = await http<{ status: string }>('GET', `/documents/${doc.id}`)
  if (d.status === 'ready') break
  if (d.status === 'error' || i > 300) throw new Error('document not indexed')
  await new Promise((r) => setTimeout(r, 100))
}

interface Turn {
  first: number | null
  full: number
  text: string
}
async function turn(bot: string, i: number): Promise<Turn> {
  const t0 = performance.now()
  const res = await fetch(`${url}/widget/chat?bot_id=${bot}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.${i >> 8}.${i & 255}` },
    body: JSON.stringify({ message: QUESTION }),
  })
  if (!res.ok || !res.body) throw new Error(`turn: ${res.status}`)
  const parser = new SseParser()
  const decoder = new TextDecoder()
  const out: Turn = { first: null, full: 0, text: '' }
  for await (const part of reads(res.body)) {
    for (const f of parser.push(decoder.decode(part, { stream: true })) as { type: string; text?: string }[]) {
      if (f.type === 'chunk') out.first ??= performance.now() - t0
      else if (f.type === 'done') {
        out.full = performance.now() - t0
        out.text = f.text ?? ''
      }
    }
  }
  return out
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}

async function run(label: string, bot: string, offset: number) {
  for (let i = 0; i < 3; i++) await turn(bot, offset + i) // warm up: JIT, caches
  const calls0 = fake.chatCalls().length
  const api0 = wsApi.requests.length
  const cpu0 = process.cpuUsage()
  const turns: Turn[] = []
  for (let i = 0; i < TURNS; i++) turns.push(await turn(bot, offset + 100 + i))
  const cpu = process.cpuUsage(cpu0)
  const firsts = turns.map((t) => t.first).filter((x): x is number => x !== null)
  const fulls = turns.map((t) => t.full)
  return {
    label,
    firsts,
    fulls,
    modelCalls: (fake.chatCalls().length - calls0) / TURNS,
    apiCalls: (wsApi.requests.length - api0) / TURNS,
    cpuMs: (cpu.user + cpu.system) / 1000 / TURNS,
    sample: turns.at(-1)?.text ?? '',
  }
}

const a = await run('one read action', withActions.public_id, 0)
const b = await run('no actions', without.public_id, 1000)
const goal = 2 * MODEL_MS + API_MS + 50
const f = (x: number) => `${x.toFixed(0)} ms`
console.log(`actions bench: ${TURNS} sequential widget turns, fake model ${MODEL_MS} ms a call, API ${API_MS} ms, guards and validation off`)
for (const r of [a, b]) {
  console.log(
    `${r.label}: first answer token p50 ${f(pct(r.firsts, 50))} p95 ${f(pct(r.firsts, 95))}; full turn p50 ${f(pct(r.fulls, 50))} p95 ${f(pct(r.fulls, 95))}; ` +
      `${r.modelCalls.toFixed(1)} model calls and ${r.apiCalls.toFixed(1)} API calls a turn; CPU ${r.cpuMs.toFixed(1)} ms a turn`,
  )
}
console.log(
  `goal: full turn <= 2 model calls + API time + 50 ms = ${goal} ms: p50 ${pct(a.fulls, 50) <= goal ? 'met' : 'MISSED'}, p95 ${pct(a.fulls, 95) <= goal ? 'met' : 'MISSED'}`,
)
console.log(`CPU per turn with the action: ${(a.cpuMs - b.cpuMs).toFixed(1)} ms more than without (${a.cpuMs.toFixed(1)} vs ${b.cpuMs.toFixed(1)} ms)`)
console.log(`last answer with the action: ${JSON.stringify(a.sample.slice(0, 160))}`)

// Where a turn's time goes: the median of each stage timing the turns stored (debug.timings; persistence not included)
async function stages(botId: string) {
  const rows = await ctx.db
    .selectFrom('chat_messages as m')
    .innerJoin('chat_sessions as s', 's.id', 'm.session_id')
    .select('m.debug')
    .where('s.bot_id', '=', botId)
    .where('m.role', '=', 'assistant')
    .execute()
  const by: Record<string, number[]> = {}
  for (const r of rows) for (const [k, v] of Object.entries(((r.debug ?? {}) as { timings?: Record<string, number> }).timings ?? {})) (by[k] ??= []).push(v)
  return Object.entries(by)
    .map(([k, xs]) => `${k} ${pct(xs, 50).toFixed(0)}`)
    .join(', ')
}
console.log(`stage medians (ms), one read action: ${await stages(withActions.id)}`)
// what the action adds to a turn beyond the model and the API: generation less model time less the call's latency
const own = await ctx.db
  .selectFrom('chat_messages as m')
  .innerJoin('action_calls as c', 'c.session_id', 'm.session_id')
  .select(['m.debug', 'c.latency_ms'])
  .where('m.role', '=', 'assistant')
  .execute()
const overhead = own.map((r) => {
  const t = ((r.debug ?? {}) as { timings?: Record<string, number> }).timings ?? {}
  return (t.generation ?? 0) - (t.model ?? 0) - (r.latency_ms ?? 0)
})
console.log(`the action's own time in a turn (generation - model - API latency): p50 ${f(pct(overhead, 50))} p95 ${f(pct(overhead, 95))}`)
console.log(`stage medians (ms), no actions: ${await stages(without.id)}`)

await service.close()
await fake.close()
await wsApi.close()
