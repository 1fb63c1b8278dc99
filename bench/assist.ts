/**
 * Operator assist figures (npm run bench:assist): the latency of POST /escalations/{id}/suggest next to the fake
 * model's own latency measured in the same run, the time the service adds on top of the model, the model calls and
 * the tokens per suggestion; and the summary, written then kept.
 *
 * The service runs in this process on the embedded database (or a scratch PostgreSQL database with
 * BENCH_DATABASE_URL), with the fake OpenAI-compatible model over real HTTP; every model call goes through a
 * wrapper that counts calls and the time at least one was in flight. The fake model takes BENCH_MODEL_MS (default
 * 300) for each chat completion (embeddings answer at once, as a local embedder would; their time is counted as
 * model time all the same). A workspace with three help pages, one visitor conversation handed to the team, then
 * BENCH_SUGGESTIONS (default 40) suggestions one after another (instructions alternating), each timed from the
 * request to the answer. "Our time" is that minus the model's in-flight time. Goal: at most one model completion
 * per suggestion and < 50 ms of our own time. The machine is shared: figures move with whatever else runs.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { loadConfig } from '../src/config.js'
import { closeContext, createContext } from '../src/context.js'
import type { ChatStream, LlmClient } from '../src/modules/llm/llm.js'
import { createOpenAiClient } from '../src/modules/llm/openai-client.js'
import { startFakeLlm } from '../test/fakes/fake-llm.js'
import { benchWorkspace, scratchDatabase, serveInProcess } from './support.js'

const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 300)
const N = Number(process.env.BENCH_SUGGESTIONS ?? 40)
const PG = process.env.BENCH_DATABASE_URL

const PAGES: Record<string, string> = {
  'refunds.md': `# Refunds\n\nRefunds are processed within 5 business days after we receive the returned item.\n\n## Digital products\n\nDigital products can be refunded within 14 days of purchase if they were not downloaded.\n`,
  'shipping.md': `# Shipping\n\nStandard shipping to Germany takes 3 to 4 working days and costs 4.90 euros.\nExpress shipping arrives the next working day for 12 euros.\n`,
  'account.md': `# Account\n\nYou can change the e-mail address of your account under Settings > Profile.\nPasswords are reset from the sign-in page with "Forgot password".\n`,
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : Number.NaN
}
const f = (x: number) => `${x.toFixed(1)} ms`

/** Counts model calls and the time at least one was in flight (the same union as the chat's model meter). */
function metered(inner: LlmClient) {
  const m = { chat: 0, embed: 0, inFlight: 0, since: 0, ms: 0 }
  const begin = () => {
    if (m.inFlight++ === 0) m.since = performance.now()
    return () => {
      if (--m.inFlight === 0) m.ms += performance.now() - m.since
    }
  }
  const llm: LlmClient = {
    async chat(o) {
      m.chat++
      const end = begin()
      try {
        return await inner.chat(o)
      } finally {
        end()
      }
    },
    async embed(o) {
      m.embed++
      const end = begin()
      try {
        return await inner.embed(o)
      } finally {
        end()
      }
    },
    chatStream(o): ChatStream {
      m.chat++
      return inner.chatStream(o)
    },
  }
  return {
    llm,
    reset: () => Object.assign(m, { chat: 0, embed: 0, ms: 0 }),
    read: () => ({ chat: m.chat, embed: m.embed, ms: m.ms }),
  }
}

async function main() {
  const fake = await startFakeLlm()
  fake.script((r) => {
    const sys = r.messages.find((x) => x.role === 'system')?.content ?? ''
    if (sys.includes('You draft the next reply'))
      return { text: 'Refunds are processed within 5 business days after we receive the item [1].', delayMs: MODEL_MS }
    if (sys.includes('You summarise a support conversation'))
      return { text: 'Wants: the refund.\nBot said: 5 business days.\nOpen: where the refund is.', delayMs: MODEL_MS }
    return undefined
  })
  const meter = metered(createOpenAiClient(fake.url))
  const scratch = PG ? await scratchDatabase(PG, 'assist') : null
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-bench-assist-'))
  const config = loadConfig(
    {
      DATA_DIR: dataDir,
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      RATE_LIMIT_ENABLED: 'false',
      LLM_BASE_URL: fake.url,
      LOG_LEVEL: 'warn',
      DATABASE_URL: scratch?.url,
    },
    () => {},
  )
  const ctx = await createContext(config, { pgliteDir: 'memory', llm: meter.llm })
  const served = await serveInProcess(ctx)
  const { url } = served
  try {
    const ws = await benchWorkspace(ctx, url)
    const bot = (await ws.http<{ public_id: string }>('POST', '/bots', { name: 'Bench bot' })).public_id
    for (const [name, text] of Object.entries(PAGES)) {
      const form = new FormData()
      form.append('file', new Blob([text], { type: 'text/markdown' }), name)
      const doc = await ws.http<{ id: string }>('POST', '/documents', form)
      for (let i = 0; ; i++) {
        const d = await ws.http<{ status: string }>('GET', `/documents/${doc.id}`)
        if (d.status === 'ready') break
        if (d.status === 'error' || i > 600) throw new Error('document not indexed')
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    // a visitor asks the bot, asks for a person, and writes again
    const visitor = (path: string, body: unknown) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => {
        const text = await r.text()
        if (!r.ok) throw new Error(`${path}: ${r.status} ${text}`)
        return text
      })
    const sid = (JSON.parse(await visitor('/widget/session/init', { bot_id: bot })) as { session_id: string }).session_id
    await visitor(`/widget/chat?bot_id=${bot}&session_id=${sid}`, { message: 'How long do refunds take?' })
    await visitor(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: 'My refund is late' })
    await visitor(`/widget/chat?bot_id=${bot}&session_id=${sid}`, { message: 'I returned the jacket two weeks ago and the refund is still not here.' })
    const tickets = await ws.http<{ tickets: { id: string; session_id: string }[] }>('GET', '/escalations')
    const ticketId = tickets.tickets.find((t) => t.session_id === sid)!.id

    // the fake model's own latency, same run: one bare completion of a suggestion's size
    const bare: number[] = []
    for (let i = 0; i < Math.min(N, 20); i++) {
      const t0 = performance.now()
      await createOpenAiClient(fake.url).chat({
        apiKey: 'sk-bench-0123456789',
        model: config.CHAT_MODEL,
        messages: [
          { role: 'system', content: `You draft the next reply. ${'x'.repeat(3000)}` },
          { role: 'user', content: 'Write the reply.' },
        ],
      })
      bare.push(performance.now() - t0)
    }

    const total: number[] = []
    const own: number[] = []
    const calls: number[] = []
    const embeds: number[] = []
    await ws.http('POST', `/escalations/${ticketId}/suggest`, {}) // warm-up (JIT, caches), not counted
    for (let i = 0; i < N; i++) {
      meter.reset()
      const t0 = performance.now()
      await ws.http('POST', `/escalations/${ticketId}/suggest`, i % 2 ? { instruction: 'shorter' } : {})
      const ms = performance.now() - t0
      const m = meter.read()
      total.push(ms)
      own.push(ms - m.ms)
      calls.push(m.chat)
      embeds.push(m.embed)
    }
    // the same run's floor: an authenticated read of the ticket (auth, one query, JSON) on this loaded machine
    const floor: number[] = []
    for (let i = 0; i < 20; i++) {
      const t1 = performance.now()
      await ws.http('GET', `/escalations/${ticketId}`)
      floor.push(performance.now() - t1)
    }
    const rows = await ctx.db.selectFrom('assist_drafts').select(['tokens']).where('tenant_id', '=', ws.tenantId).where('kind', '=', 'suggestion').execute()
    const tokens = rows.map((r) => r.tokens)

    // the summary: written once, then kept until a new message
    meter.reset()
    let t0 = performance.now()
    await ws.http('POST', `/escalations/${ticketId}/summary`)
    const firstSummary = performance.now() - t0
    const firstCalls = meter.read().chat
    const kept: number[] = []
    meter.reset()
    for (let i = 0; i < 20; i++) {
      t0 = performance.now()
      await ws.http('POST', `/escalations/${ticketId}/summary`)
      kept.push(performance.now() - t0)
    }
    const keptCalls = meter.read().chat

    const db = PG ? 'PostgreSQL' : 'embedded PGlite'
    console.log(`\nbench:assist: ${N} suggestions, fake model ${MODEL_MS} ms per completion, ${db}, load ${loadavg()[0]!.toFixed(1)}`)
    console.log(`  fake model alone (bare completion): p50 ${f(pct(bare, 50))}  p95 ${f(pct(bare, 95))}`)
    console.log(`  POST /suggest:                      p50 ${f(pct(total, 50))}  p95 ${f(pct(total, 95))}`)
    console.log(`  our own time (total - model):       p50 ${f(pct(own, 50))}  p95 ${f(pct(own, 95))}   goal < 50 ms`)
    console.log(`  floor: GET /escalations/{id}:        p50 ${f(pct(floor, 50))}  p95 ${f(pct(floor, 95))}   (same run: auth, one read, JSON)`)
    console.log(`  model completions per suggestion:   max ${Math.max(...calls)} (goal 1); query embeddings: max ${Math.max(...embeds)}`)
    console.log(`  tokens per suggestion:              mean ${(tokens.reduce((a, b) => a + b, 0) / tokens.length).toFixed(0)}  max ${Math.max(...tokens)}`)
    console.log(`  POST /summary: first ${f(firstSummary)} (${firstCalls} completion), kept p50 ${f(pct(kept, 50))} (${keptCalls} completions in 20 calls)`)
  } finally {
    await served.app.close()
    await served.worker.stop(2000)
    await closeContext(ctx)
    await fake.close()
    await scratch?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
