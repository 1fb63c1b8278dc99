import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { WorkspaceApi } from './fakes/workspace-api.js'
import { orderStatus } from './helpers/actions.js'
import { startApp, type TestApp } from './helpers/app.js'
import { REFUNDS_MD, SHIPPING_MD, chatApi, isAnswer, system, withDocs } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'
import { chunksOf } from './helpers/documents.js'

/**
 * Issue 37 as a deployment meets it: the service pointed at a server that acts like Ollama (float embeddings
 * whatever is asked, native width, a chat model without tools), and at a broken embedding server.
 */
let fake: FakeLlm
let api: WorkspaceApi
let t: TestApp

const PRICING_MD = `# Pricing\n\nThe Pro plan costs 29 euros a month and includes five seats.\n`

beforeAll(async () => {
  fake = await startFakeLlm({ server: 'ollama' })
  api = await new WorkspaceApi().start()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, EMBEDDING_MODEL: 'nomic-embed-text', CHAT_MODEL: 'gemma2', CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true' } })
}, 240_000)
afterAll(async () => {
  await t?.close()
  await fake?.close()
  await api?.close()
})

async function embeddedAll(documentIds: string[], timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const rows = (await Promise.all(documentIds.map((id) => chunksOf(t, id)))).flat()
    if (rows.length && rows.every((r) => r.has_embedding)) return
    if (Date.now() > deadline) throw new Error('not embedded')
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('an Ollama-like server', () => {
  it('float embeddings are stored as real vectors and the answer passage reaches the model', async () => {
    const owner = await createTenant(t)
    const ids = await withDocs(t, owner, { 'refunds.md': REFUNDS_MD, 'shipping.md': SHIPPING_MD, 'pricing.md': PRICING_MD })
    await embeddedAll(Object.values(ids))
    const calls = fake.embeddingCalls()
    expect(calls.length).toBeGreaterThan(0)
    expect(calls.every((c) => c.body.encoding_format === 'float')).toBe(true)
    const from = fake.chatCalls().length
    const r = await chatApi(t, owner).post('/chat', { question: 'How long does standard shipping take?' })
    expect(r.status, r.text).toBe(200)
    const answer = fake
      .chatCalls()
      .slice(from)
      .find((c) => isAnswer(c))!
    expect(system(answer)).toContain('3 to 4 working days')
    expect(r.body.text).toContain('3 to 4 working days')
  })

  it('a bot with an enabled action answers (no 503) when the chat model refuses tools; tools are not sent again', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const created = await owner.api.post('/actions', orderStatus(api.url))
    expect(created.status, created.text).toBe(201)
    for (let i = 0; i < 2; i++) {
      const r = await chatApi(t, owner).post('/chat', { question: 'How long do refunds take to be processed?' })
      expect(r.status, r.text).toBe(200)
      expect(r.body.text).toContain('5 business days')
    }
    const withTools = fake.chatCalls().filter((c) => Array.isArray(c.body.tools))
    expect(withTools.length).toBeLessThanOrEqual(1)
    const status = await owner.api.get('/llm/status')
    expect(status.status, status.text).toBe(200)
    expect(status.body.capabilities.tools).toBe(false)
    expect(status.body.capabilities.tools_reason).toContain('actions are not offered')
    const names = status.body.checks.map((c: { name: string }) => c.name)
    expect(names).toEqual(['chat_stream', 'json_mode', 'tool_call', 'embedding', 'vision'])
    const tool = status.body.checks.find((c: { name: string }) => c.name === 'tool_call')
    expect(tool.ok).toBe(false)
    expect(tool.detail).toContain('CHAT_MODEL')
    const emb = status.body.checks.find((c: { name: string }) => c.name === 'embedding')
    expect(emb).toMatchObject({ ok: true })
    expect(emb.detail).toContain('width 768')
    expect(status.body.state).toBe('ok')
    // cached: a second look makes no model call
    const n = fake.requests.length
    expect((await owner.api.get('/llm/status')).status).toBe(200)
    expect(fake.requests.length).toBe(n)
  })
})

describe('a broken embedding server', () => {
  it('all-zero vectors are refused: the document says why, the turn runs on BM25 alone, /llm/status names it', async () => {
    fake.behaveAs({ floatEmbeddings: true, badVectors: 'zeros' })
    try {
      // its own key: the status checks are cached per key
      const owner = await createTenant(t, { llmKey: 'sk-test-zero-vectors-42' })
      const ids = await withDocs(t, owner, { 'shipping.md': SHIPPING_MD, 'refunds.md': REFUNDS_MD })
      let doc: any
      const deadline = Date.now() + 30_000
      for (;;) {
        doc = (await owner.api.get(`/documents/${ids['shipping.md']}`)).body
        if (doc.embedding_error || Date.now() > deadline) break
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(doc.embedding_error).toContain('all-zero vectors')
      expect(doc.embeddings).toMatchObject({ status: 'failed', reason: 'zero_norm' })
      expect((await chunksOf(t, ids['shipping.md']!)).some((c) => c.has_embedding)).toBe(false)
      const r = await chatApi(t, owner).post('/chat', { question: 'How long does standard shipping take?' })
      expect(r.status, r.text).toBe(200)
      expect(r.body.text).toContain('3 to 4 working days')
      const status = await owner.api.get('/llm/status')
      const emb = status.body.checks.find((c: { name: string }) => c.name === 'embedding')
      expect(emb.ok).toBe(false)
      expect(emb.detail).toContain('all zeros')
      expect(status.body.state).toBe('error')
    } finally {
      fake.behaveAs('ollama')
    }
  })
})
