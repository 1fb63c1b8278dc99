import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { REFUNDS_MD, chatApi, withDocs } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'

/** GET /metrics: off by default, behind a bearer token or on a port of its own, in the Prometheus text format. */
const TOKEN = 'metrics-token-0123456789abcdef'

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

/** The value of one series, or undefined: `name{a="x",...} value`, labels in any order. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    const wanted = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))
    if (wanted) return Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return undefined
}

describe('metrics off', () => {
  let t: TestApp
  beforeAll(async () => (t = await startApp()))
  afterAll(() => t?.close())
  it('has no /metrics without METRICS_TOKEN or METRICS_PORT', async () => {
    expect((await t.api().get('/metrics')).status).toBe(404)
  })
})

describe('metrics behind METRICS_TOKEN', () => {
  let t: TestApp
  let fake: FakeLlm
  beforeAll(async () => {
    fake = await startFakeLlm()
    t = await startApp({ env: { LLM_BASE_URL: fake.url, METRICS_TOKEN: TOKEN } })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })

  it('answers only the bearer token', async () => {
    expect((await t.api().get('/metrics')).status).toBe(401)
    expect((await t.api().get('/metrics', { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401)
    const ok = await t.api().get('/metrics', { authorization: `Bearer ${TOKEN}` })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(ok.text).toContain('scb_process_cpu_user_seconds_total')
  })

  it('counts requests by route pattern, model and embedding calls, jobs, ingestion, caches and stage timings', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const chat = await chatApi(t, owner).post('/chat', { question: 'How long do refunds take?' })
    expect(chat.status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await owner.api.get(`/bots/${owner.bot.id}`)).status).toBe(200)
    expect((await owner.api.get('/no/such/route')).status).toBe(404)

    const text = (await t.api().get('/metrics', { authorization: `Bearer ${TOKEN}` })).text
    // The route pattern, never the id: one series for every bot.
    expect(sample(text, 'scb_http_request_duration_seconds_count', { method: 'GET', route: '/bots/:bot_id', status_code: '200' })).toBe(3)
    expect(text).not.toContain(owner.bot.id)
    expect(sample(text, 'scb_http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' })).toBeGreaterThanOrEqual(1)
    expect(sample(text, 'scb_http_request_duration_seconds_count', { method: 'POST', route: '/chat', status_code: '200' })).toBe(1)

    expect(sample(text, 'scb_llm_request_duration_seconds_count', { operation: 'embed', outcome: 'ok' })).toBeGreaterThanOrEqual(1)
    expect(text).toMatch(/scb_llm_request_duration_seconds_count\{operation="chat(_stream)?",model="gpt-4o-mini",outcome="ok"\} [1-9]/)
    expect(sample(text, 'scb_llm_tokens_total', { type: 'prompt' })).toBeGreaterThan(0)
    expect(sample(text, 'scb_embedding_inputs_total', { model: 'text-embedding-3-small' })).toBeGreaterThanOrEqual(1)
    expect(sample(text, 'scb_job_duration_seconds_count', { kind: 'documents.index', outcome: 'done' })).toBe(1)
    expect(sample(text, 'scb_ingest_documents_total')).toBe(1)
    expect(sample(text, 'scb_ingest_bytes_total')).toBe(new TextEncoder().encode(REFUNDS_MD).length)
    expect(sample(text, 'scb_ingest_chunks_total')).toBeGreaterThanOrEqual(1)
    expect(text).toContain('# TYPE scb_jobs_queued gauge')
    expect(text).toContain('# TYPE scb_crawl_fetches_total counter')
    expect(sample(text, 'scb_cache_requests_total', { result: 'hit' })).toBeGreaterThanOrEqual(1)
    // The one turn above, stage by stage, as its log line reports them.
    for (const stage of ['session', 'guards', 'retrieval', 'generation', 'persist', 'model', 'total']) {
      expect(sample(text, 'scb_chat_stage_duration_seconds_count', { stage }), stage).toBe(1)
    }
    // Its own scrapes are not counted, and no credential is ever a label.
    expect(text).not.toContain('route="/metrics"')
    expect(text).not.toContain(TOKEN)
    expect(text).not.toContain(owner.apiKey)
  })

  it('counts model errors by kind', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    fake.fail(500)
    expect((await chatApi(t, owner).post('/chat', { question: 'How long do refunds take?' })).status).toBe(503)
    fake.reset()
    const text = (await t.api().get('/metrics', { authorization: `Bearer ${TOKEN}` })).text
    expect(text).toMatch(/scb_llm_errors_total\{operation="chat(_stream)?",kind="http"\} [1-9]/)
  })
})

describe('metrics on METRICS_PORT', () => {
  let t: TestApp
  let port: number
  beforeAll(async () => {
    port = await freePort()
    t = await startApp({ env: { METRICS_PORT: String(port), HOST: '127.0.0.1' } })
  })
  afterAll(() => t?.close())

  it('serves /metrics on its own port without a token, and not on the main port', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('# TYPE scb_http_request_duration_seconds histogram')
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404)
    expect((await t.api().get('/metrics')).status).toBe(404)
  })
})
