import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { wireDocuments } from '../src/modules/documents/documents.wire.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { chunksOf, uploadReady } from './helpers/documents.js'

let fake: FakeLlm
let t: TestApp

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, EMBEDDING_BATCH: '4' } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const longDoc = (marker: string) =>
  `# ${marker} manual\n\n` +
  Array.from(
    { length: 8 },
    (_, i) => `## Topic ${i}\n\n${`Topic ${i} of the ${marker} manual explains the settings page and the billing page in detail. `.repeat(14)}`,
  ).join('\n\n')

/** Waits until every chunk of the document has a vector (or the timeout). */
async function embedded(documentId: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const rows = await chunksOf(t, documentId)
    if (rows.length && rows.every((r) => r.has_embedding)) return rows
    if (Date.now() > deadline) throw new Error(`not embedded: ${rows.filter((r) => !r.has_embedding).length}/${rows.length}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function dims(documentId: string) {
  const q = t.ctx.database.features.vector
    ? sql<{ d: number }>`SELECT vector_dims(embedding) AS d FROM chunks WHERE document_id = ${documentId} LIMIT 1`
    : sql<{ d: number }>`SELECT array_length(embedding, 1) AS d FROM chunks WHERE document_id = ${documentId} LIMIT 1`
  return (await q.execute(t.ctx.db)).rows[0]?.d
}

describe('embeddings', () => {
  it('embeds every chunk in batches with the configured model when the tenant has a key', async () => {
    const tenant = await createTenant(t, { llmKey: 'sk-embed-tenant-1' })
    const doc = await uploadReady(t, tenant.api, 'manual.md', longDoc('kiwi'))
    const rows = await embedded(doc.id)
    expect(rows.length).toBeGreaterThan(4)
    expect(rows.every((r) => r.embedding_model === 'text-embedding-3-small')).toBe(true)
    expect(await dims(doc.id)).toBe(1536)
    const calls = fake.embeddingCalls().filter((c) => JSON.stringify(c.body).includes('kiwi'))
    expect(calls.length).toBeGreaterThanOrEqual(Math.ceil(rows.length / 4))
    for (const c of calls) {
      expect(c.body.model).toBe('text-embedding-3-small')
      expect(c.body.dimensions).toBe(1536)
      expect(c.body.input.length).toBeLessThanOrEqual(4)
    }
    // each input carries the document title and the heading path as context
    expect(calls.flatMap((c) => c.body.input).some((s: string) => s.startsWith('kiwi manual — kiwi manual > Topic'))).toBe(true)
  })

  it('without a key the document is lexical only; setting a key embeds it in the background', async () => {
    const tenant = await createTenant(t, { llmKey: null })
    const doc = await uploadReady(t, tenant.api, 'nokey.md', longDoc('mango'))
    expect((await chunksOf(t, doc.id)).every((r) => !r.has_embedding)).toBe(true)
    expect(fake.embeddingCalls().some((c) => JSON.stringify(c.body).includes('mango'))).toBe(false)
    const patch = await tenant.api.patch('/tenants/me', { llm_api_key: 'sk-late-key-0001' })
    expect(patch.status).toBe(200)
    const rows = await embedded(doc.id)
    expect(rows.every((r) => r.embedding_model === 'text-embedding-3-small')).toBe(true)
  })

  it('a provider failure never fails the document; the backfill embeds it later', async () => {
    const tenant = await createTenant(t, { llmKey: 'sk-flaky-provider-1' })
    fake.fail('http500', { match: (r) => r.path.endsWith('/embeddings') && JSON.stringify(r.body).includes('papaya') })
    const doc = await uploadReady(t, tenant.api, 'flaky.md', longDoc('papaya'))
    expect(doc.status).toBe('ready')
    expect(doc.chunk_count).toBeGreaterThan(0)
    await new Promise((r) => setTimeout(r, 300))
    expect((await chunksOf(t, doc.id)).every((r) => !r.has_embedding)).toBe(true)
    fake.reset()
    // the retry is scheduled minutes later: move the clock past it
    t.clock.advance(301_000)
    await embedded(doc.id)
  })

  it('re-indexing unchanged text reuses the vectors instead of paying for them again', async () => {
    const tenant = await createTenant(t, { llmKey: 'sk-reuse-vectors-1' })
    const doc = await uploadReady(t, tenant.api, 'reuse.md', longDoc('quince'))
    const before = await embedded(doc.id)
    const calls = fake.embeddingCalls().length
    const wired = wireDocuments(t.ctx, t.app as never, { llmKey: async () => 'sk-reuse-vectors-1', audit: { record: async () => {} } })
    try {
      await wired.documents.indexDocument(tenant.tenantId, doc.id)
      const r = await wired.documents.embedPending(tenant.tenantId, { documentId: doc.id })
      expect(r).toEqual({ embedded: 0, status: 'done' })
    } finally {
      await wired.parser.close()
    }
    const after = await chunksOf(t, doc.id)
    expect(after.map((c) => c.content)).toEqual(before.map((c) => c.content))
    expect(after.map((c) => c.id)).not.toEqual(before.map((c) => c.id))
    expect(after.every((c) => c.has_embedding)).toBe(true)
    expect(fake.embeddingCalls().length).toBe(calls)
  })

  it('the recurring sweep finds tenants whose chunks still lack vectors', async () => {
    const tenant = await createTenant(t, { llmKey: 'sk-sweep-tenant-1' })
    const doc = await uploadReady(t, tenant.api, 'sweep.md', longDoc('lychee'))
    await embedded(doc.id)
    // vectors lost (e.g. the model changed): the sweep queues a backfill
    await sql`UPDATE chunks SET embedding = NULL, embedding_model = NULL WHERE document_id = ${doc.id}`.execute(t.ctx.db)
    await t.ctx.queue.enqueue('documents.embed_sweep', {}, { dedupeKey: 'test-sweep' })
    await embedded(doc.id)
  })
})
