import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chunksOf, uploadReady } from './helpers/documents.js'
import { createTenant } from './helpers/factories.js'

/**
 * Issue 51: the embedding jobs ask for the shared HNSW index when they take a workspace past
 * RETRIEVAL_VECTOR_INDEX_MIN_CHUNKS, so the index is built before the workspace's first question (before, only a
 * search asked for it, and that first search and every one until the build was done scanned all of its rows). A
 * workspace under the size asks for nothing. Needs pgvector (the embedded database has it); PostgreSQL without it has
 * no index to build.
 */
let fake: FakeLlm
let t: TestApp

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, RETRIEVAL_VECTOR_INDEX_MIN_CHUNKS: '6' } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const doc = (marker: string, topics: number) =>
  `# ${marker} manual\n\n` +
  Array.from(
    { length: topics },
    (_, i) => `## Topic ${i}\n\n${`Topic ${i} of the ${marker} manual explains the ${marker} settings page in detail. `.repeat(14)}`,
  ).join('\n\n')

async function embedded(documentId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const rows = await chunksOf(t, documentId)
    if (rows.length && rows.every((r) => r.has_embedding)) return rows
    if (Date.now() > deadline) throw new Error(`not embedded: ${rows.filter((r) => !r.has_embedding).length}/${rows.length}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const indexJobs = () => t.ctx.db.selectFrom('jobs').select(['status']).where('kind', '=', 'retrieval.vector_index').execute()

describe('the vector index follows embedding', () => {
  it('a workspace embedded past the size enqueues the index build without any question asked; a small one does not', async (ctx) => {
    if (!t.ctx.database.features.vector) return ctx.skip()
    const small = await createTenant(t, { llmKey: 'sk-index-small-1' })
    const one = await uploadReady(t, small.api, 'small.md', '# Lime\n\nLime settings are on the lime page.')
    expect((await embedded(one.id)).length).toBeLessThan(6)
    expect(await indexJobs()).toEqual([])

    const big = await createTenant(t, { llmKey: 'sk-index-big-1' })
    const many = await uploadReady(t, big.api, 'big.md', doc('quince', 10))
    expect((await embedded(many.id)).length).toBeGreaterThanOrEqual(6)
    // the embedding run's follow-up enqueues the build (the worker may have run it already)
    const deadline = Date.now() + 20_000
    while ((await indexJobs()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    expect((await indexJobs()).length).toBe(1)
  }, 120_000)
})
