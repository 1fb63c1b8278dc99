import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp } from './helpers/app.js'
import { chatApi, withDocsAndVectors } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'

/**
 * No silent loss of the vector side (issue 51): without pgvector, a workspace whose vectors outgrow the in-process
 * cache (RETRIEVAL_VECTOR_CACHE_MB, here 0 so one page is enough) has them only re-rank what its words found.
 * GET /llm/status says so and why; a question that shares no word with its page then finds nothing, where the same
 * workspace within the budget is answered. With pgvector (the embedded database) the status names pgvector's exact
 * search instead, and the question is answered either way.
 */
const PAGE = '# Refund policy\n\nUnused items can be returned within 30 days. Refunds are processed within 5 business days.\n'
const QUESTION = 'Can I send back something I never unwrapped and get my cash?'

describe('vector search of a workspace larger than the in-process cache', () => {
  let fake: FakeLlm
  beforeAll(async () => {
    fake = await startFakeLlm()
    fake.embedAs((text) => (text === QUESTION ? PAGE : undefined))
    fake.script((req) =>
      !req.json && req.messages.some((m) => m.content.includes('=== Sources ===')) ? { text: 'Refunds are processed within 5 business days [1].' } : undefined,
    )
  })
  afterAll(() => fake?.close())

  const run = async (cacheMb: string) => {
    const app = await startApp({ env: { LLM_BASE_URL: fake.url, RETRIEVAL_FLOOR_COSINE: '', RETRIEVAL_VECTOR_CACHE_MB: cacheMb } })
    try {
      const shop = await createTenant(app)
      await withDocsAndVectors(app, shop, { 'refunds.md': PAGE })
      const status = await shop.api.get('/llm/status')
      expect(status.status, status.text).toBe(200)
      const chat = await chatApi(app, shop).post('/chat', { question: QUESTION })
      expect(chat.status, chat.text).toBe(200)
      return { pgvector: app.ctx.database.features.vector, vectors: status.body.vector_search, answered: /5 business days/.test(chat.body.text) }
    } finally {
      await app.close()
    }
  }

  it('names the re-rank-only workspace, why and what to change, where pgvector is absent', async () => {
    const over = await run('0')
    if (over.pgvector) {
      expect(over.vectors).toEqual({ mode: 'pgvector_exact', embedded_chunks: 1, detail: null })
      expect(over.answered).toBe(true)
      return
    }
    expect(over.vectors.mode).toBe('rerank_only')
    expect(over.vectors.embedded_chunks).toBe(1)
    expect(over.vectors.detail).toMatch(/RETRIEVAL_VECTOR_CACHE_MB/)
    expect(over.vectors.detail).toMatch(/pgvector/)
    expect(over.answered).toBe(false)
    const within = await run('80')
    expect(within.vectors).toEqual({ mode: 'in_process', embedded_chunks: 1, detail: null })
    expect(within.answered).toBe(true)
  }, 300_000)
})
