import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { REFUNDS_MD, chatApi, sseFrames, withDocs } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'
import { memoryLogger } from './helpers/logs.js'

/**
 * An unreachable LLM_BASE_URL (issue 16, item 3): the operator learns the address tried and the variable to
 * change, from the log and from GET /llm/status; the visitor sees only the contract's neutral failure.
 */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

describe('provider unreachable', () => {
  let t: TestApp
  let baseUrl: string
  const logs = memoryLogger()
  beforeAll(async () => {
    // Nothing listens there, and credentials in the address must never be shown or logged.
    const port = await closedPort()
    baseUrl = `http://127.0.0.1:${port}/v1`
    t = await startApp({
      log: logs.log,
      env: { LLM_BASE_URL: `http://proxyuser:pr0xy-secret@127.0.0.1:${port}/v1`, GUARDS_ENABLED: 'false', CHAT_FIRST_TOKEN_TIMEOUT_MS: '2000' },
    })
  })
  afterAll(() => t?.close())

  it('a fresh install shows the problem to the operator before any visitor asked', async () => {
    const owner = await createTenant(t)
    const r = await owner.api.get('/llm/status')
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      base_url: baseUrl,
      variable: 'LLM_BASE_URL',
      state: 'unreachable',
      last_success_at: null,
      last_error: { kind: 'network', status: null },
    })
    expect(r.body.hint).toContain(baseUrl)
    expect(r.body.hint).toContain('LLM_BASE_URL')
    expect(r.text).not.toContain('pr0xy-secret')
  })

  it('the visitor gets the neutral error; the operator gets the address and the variable, in the log and the status', async () => {
    const owner = await createTenant(t)
    // Indexing goes on without embeddings, so the question reaches generation (and its failure).
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const visitor = t.api()
    const init = await visitor.post('/widget/session/init', { bot_id: owner.bot.public_id })
    expect(init.status).toBe(200)
    const chat = await visitor.post(`/widget/chat?bot_id=${owner.bot.public_id}&session_id=${init.body.session_id}`, { message: 'How do refunds work?' })
    const frames = sseFrames(chat.text)
    expect(frames.find((f) => f.type === 'done' || f.type === 'error')).toBeTruthy()
    for (const leak of ['127.0.0.1', 'LLM_BASE_URL', 'pr0xy']) expect(chat.text, leak).not.toContain(leak)

    const api = t.api().withApiKey(owner.apiKey)
    const s2s = await api.post('/chat', { question: 'How do refunds work?' })
    expect(s2s.status).toBe(503)
    for (const leak of ['127.0.0.1', 'LLM_BASE_URL']) expect(s2s.text, leak).not.toContain(leak)

    const warn = logs.lines().find((l) => l.variable === 'LLM_BASE_URL')
    expect(warn, logs.text()).toMatchObject({ level: 40, base_url: baseUrl })
    expect(String(warn!.msg)).toContain('Set LLM_BASE_URL')
    expect(logs.text()).not.toContain('pr0xy-secret')

    const status = await owner.api.get('/llm/status')
    expect(status.body.state).toBe('unreachable')
    expect(Date.parse(status.body.checked_at)).not.toBeNaN()
  })

  it('is for signed-in operators only', async () => {
    expect((await t.api().get('/llm/status')).status).toBe(401)
  })
})

describe('provider reachable', () => {
  let t: TestApp
  let fake: FakeLlm
  beforeAll(async () => {
    fake = await startFakeLlm()
    t = await startApp({ env: { LLM_BASE_URL: fake.url } })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })

  it('probes on request and reports ok with no hint; a failing provider is an error naming LLM_BASE_URL', async () => {
    const owner = await createTenant(t)
    const ok = await owner.api.get('/llm/status?probe=true')
    expect(ok.body).toMatchObject({ base_url: fake.url, state: 'ok', last_error: null, hint: null, chat_model: 'gpt-4o-mini' })
    expect(Date.parse(ok.body.last_success_at)).not.toBeNaN()
    // The probe used the workspace's own key (the fake records only its last 4 characters).
    expect(fake.requests.some((r) => r.path === '/v1/models' && r.auth.last4 === '6789')).toBe(true)

    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    fake.fail(500)
    expect((await chatApi(t, owner).post('/chat', { question: 'How long do refunds take?' })).status).toBe(503)
    fake.reset()
    const bad = await owner.api.get('/llm/status')
    expect(bad.body).toMatchObject({ state: 'error', last_error: { kind: 'http', status: 500 } })
    expect(bad.body.hint).toContain('LLM_BASE_URL')
    expect((await owner.api.get('/llm/status?probe=true')).body.state).toBe('ok')
  })
})
