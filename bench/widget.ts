/**
 * Widget streaming figures, on one process with the embedded database:
 *
 *   npm run bench:widget -- [--requests 200] [--concurrent 300]
 *
 * 1. request -> first SSE frame (the `thinking` status), sequential turns: p50/p95.
 * 2. the model's first token leaving the model server -> the visitor's first `chunk` frame: the latency
 *    our pipeline adds on the streaming path (SDK parsing, pipeline, SSE write, client parse).
 * 3. N concurrent streaming turns (distinct visitor IPs): every one must end with `done`.
 * 4. gzipped sizes of embed.js and widget.js.
 *
 * Embedded database by default; DATABASE_URL (and REDIS_URL) run it on a server, in a scratch database.
 *
 * The model is a small OpenAI-compatible server in this file (stream answers word by word after a fixed
 * delay, JSON guard replies and embeddings from the test fake's deterministic helpers), so the timestamps
 * of its writes are exact. Guards and answer validation are switched off for figure 2 (they are separate
 * model calls before/after generation, not streaming latency); figure 1 and 3 run the full pipeline.
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { performance } from 'node:perf_hooks'
import { gzipSync } from 'node:zlib'
import { createBotsRepo } from '../src/modules/bots/bots.repo.js'
import { createBotsService } from '../src/modules/bots/bots.service.js'
import { defaultAnswer, defaultJson, FAKE_EMBEDDING_FLOOR, fakeEmbedding, wordChunks } from '../test/fakes/fake-llm.js'
import { reads } from '../test/helpers/http.js'
import { SseParser } from '../widget/src/sse.js'
import { benchService, benchWorkspace } from './support.js'

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const REQUESTS = arg('requests', 200)
const CONCURRENT = arg('concurrent', 300)
const FIRST_TOKEN_DELAY_MS = 30
const KNOWLEDGE = `# Resetting your password

To reset your password, open Settings, choose Security and press the Reset password button. We then send a reset link to your e-mail address, and the link stays valid for one hour. If the password reset mail does not arrive, check the spam folder and ask support to reset the password for you.
`
const CHUNK_DELAY_MS = 10

// --- model server --------------------------------------------------------------------------------------
const firstTokenAt = new Map<string, number>()
const model = createServer((req, res) => {
  let body = ''
  req.on('data', (c) => (body += c))
  req.on('end', async () => {
    const json = JSON.parse(body || '{}')
    if (req.url?.endsWith('/embeddings')) {
      const inputs: string[] = Array.isArray(json.input) ? json.input : [json.input]
      const dims = json.dimensions ?? 1536
      const data = inputs.map((t, index) => ({ object: 'embedding', index, embedding: Array.from(fakeEmbedding(String(t), dims)) }))
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ object: 'list', data, model: json.model, usage: { prompt_tokens: 1, total_tokens: 1 } }))
    }
    const messages = (json.messages ?? []).map((m: { role: string; content: unknown }) => ({ role: m.role, content: String(m.content ?? '') }))
    const isJson = json.response_format?.type === 'json_object'
    const text = isJson ? JSON.stringify(defaultJson(messages)) : defaultAnswer(messages)
    if (!json.stream) {
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          created: 0,
          model: json.model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      )
    }
    // The bench tags its question with a marker word (letters only, so redaction leaves it alone).
    const marker = /benchmark[a-z]{12}/.exec(body)?.[0]
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.flushHeaders()
    const frame = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: json.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    await new Promise((r) => setTimeout(r, FIRST_TOKEN_DELAY_MS))
    const chunks = wordChunks(text)
    for (let i = 0; i < chunks.length; i++) {
      if (res.destroyed) return
      if (i === 0 && marker) firstTokenAt.set(marker, performance.now())
      res.write(frame({ content: chunks[i] }, null))
      await new Promise((r) => setTimeout(r, CHUNK_DELAY_MS))
    }
    res.write(frame({}, 'stop'))
    res.end('data: [DONE]\n\n')
  })
})
await new Promise<void>((r) => model.listen(0, '127.0.0.1', r))
const modelUrl = `http://127.0.0.1:${(model.address() as { port: number }).port}/v1`

// --- service -------------------------------------------------------------------------------------------
/** With DATABASE_URL the runs use a scratch database on that server, dropped at the end. */

async function startService(env: Record<string, string>) {
  const service = await benchService(
    'widget',
    {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      LLM_BASE_URL: modelUrl,
      ...FAKE_EMBEDDING_FLOOR,
      REDIS_URL: process.env.REDIS_URL,
      ...env,
    },
    process.env.DATABASE_URL,
  )
  const { ctx, url } = service

  // A tenant with a key and a bot, written through the services (no e-mail round trip needed here).
  const { tenantId, jwt } = await benchWorkspace(ctx, url)
  const { db, clock } = ctx
  const bot = await createBotsService({
    db,
    clock,
    repo: createBotsRepo(db, ctx.database.changes),
    changes: ctx.database.changes,
    audit: { record: async () => {} },
  }).create(tenantId, {
    name: 'Bench bot',
  })
  // Knowledge through the real upload path, so answers are generated (and streamed) from it.
  const form = new FormData()
  form.append('file', new Blob([KNOWLEDGE], { type: 'text/markdown' }), 'help.md')
  const up = await fetch(`${url}/documents`, { method: 'POST', headers: { authorization: `Bearer ${jwt}` }, body: form })
  if (up.status !== 201) throw new Error(`upload failed: ${up.status} ${await up.text()}`)
  const docId = ((await up.json()) as { id: string }).id
  for (let i = 0; ; i++) {
    const d = (await (await fetch(`${url}/documents/${docId}`, { headers: { authorization: `Bearer ${jwt}` } })).json()) as { status: string }
    if (d.status === 'ready') break
    if (d.status === 'error' || i > 300) throw new Error('document not indexed')
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    url,
    bot: bot.public_id,
    close: service.close,
  }
}

interface Turn {
  firstFrameMs: number
  firstChunkAt: number | null
  chunks: number
  done: boolean
  error: string | null
}

async function turn(url: string, bot: string, message: string, ip: string): Promise<Turn> {
  const t0 = performance.now()
  const res = await fetch(`${url}/widget/chat?bot_id=${bot}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: JSON.stringify({ message }),
  })
  const out: Turn = { firstFrameMs: -1, firstChunkAt: null, chunks: 0, done: false, error: res.ok ? null : `http ${res.status}` }
  if (!res.ok || !res.body) return out
  const parser = new SseParser()
  const decoder = new TextDecoder()
  for await (const part of reads(res.body)) {
    for (const f of parser.push(decoder.decode(part, { stream: true })) as { type: string; code?: string }[]) {
      if (out.firstFrameMs < 0) out.firstFrameMs = performance.now() - t0
      if (f.type === 'chunk') {
        out.chunks++
        out.firstChunkAt ??= performance.now()
      } else if (f.type === 'done') out.done = true
      else if (f.type === 'error') out.error = f.code ?? 'error'
    }
  }
  return out
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN
}
const ms = (x: number) => `${x.toFixed(2)} ms`
const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`

// 1 + 2: sequential, the streaming path alone (no guard or validation calls).
{
  const svc = await startService({ GUARDS_ENABLED: 'false', VALIDATION_ENABLED: 'false' })
  for (let i = 0; i < 5; i++) await turn(svc.url, svc.bot, 'warm up please', ip(i)) // JIT, bundles, caches
  const first: number[] = []
  const added: number[] = []
  let failures = 0
  for (let i = 0; i < REQUESTS; i++) {
    const marker = `benchmark${Array.from(randomBytes(12), (b) => String.fromCharCode(97 + (b % 26))).join('')}`
    const r = await turn(svc.url, svc.bot, `How do I reset my password? ${marker}`, ip(1000 + i))
    if (!r.done) failures++
    first.push(r.firstFrameMs)
    const sent = firstTokenAt.get(marker)
    if (sent !== undefined && r.firstChunkAt !== null) added.push(r.firstChunkAt - sent)
  }
  console.log(`request -> first SSE frame (${REQUESTS} sequential turns): p50 ${ms(pct(first, 50))}, p95 ${ms(pct(first, 95))}`)
  if (added.length) {
    console.log(`model first token -> visitor first chunk (${added.length} turns): p50 ${ms(pct(added, 50))}, p95 ${ms(pct(added, 95))}`)
  } else {
    console.log('model first token -> visitor first chunk: not measured (the question marker did not reach the model)')
  }
  if (failures) console.log(`  ${failures} sequential turns did not end with done`)
  await svc.close()
}

// 3: concurrency with the full pipeline.
{
  const svc = await startService({})
  await turn(svc.url, svc.bot, 'warm up please', ip(1))
  const t0 = performance.now()
  const results = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) =>
      turn(svc.url, svc.bot, 'How do I reset my password?', ip(5000 + i)).catch((e) => ({
        done: false,
        error: String(e),
        chunks: 0,
        firstFrameMs: -1,
        firstChunkAt: null,
      })),
    ),
  )
  const wall = performance.now() - t0
  const ok = results.filter((r) => r.done && !r.error).length
  const errors = results.filter((r) => r.error).map((r) => r.error)
  const firsts = results.filter((r) => r.firstFrameMs >= 0).map((r) => r.firstFrameMs)
  console.log(
    `${CONCURRENT} concurrent streaming turns: ${ok} done, ${errors.length} errors${errors.length ? ` (${[...new Set(errors)].join(', ')})` : ''}, ` +
      `wall ${(wall / 1000).toFixed(2)} s, first frame p50 ${ms(pct(firsts, 50))} p95 ${ms(pct(firsts, 95))}, ` +
      `chunks per answer p50 ${pct(
        results.map((r) => r.chunks),
        50,
      )}`,
  )
  // 4: bundle sizes as served.
  for (const path of ['/embed.js', '/widget.js']) {
    const body = Buffer.from(await (await fetch(`${svc.url}${path}`, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer())
    console.log(`${path}: ${(body.length / 1024).toFixed(2)} KB, ${(gzipSync(body, { level: 9 }).length / 1024).toFixed(2)} KB gzipped`)
  }
  await svc.close()
}
model.close()
process.exit(0)
