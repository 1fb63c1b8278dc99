import { isDeepStrictEqual } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm, type RecordedRequest } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { uploadReady } from './helpers/documents.js'
import { createTenant } from './helpers/factories.js'
import type { Api } from './helpers/http.js'
import { until } from './helpers/wait.js'

let fake: FakeLlm
let t: TestApp

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const doc = (marker: string) =>
  `# ${marker} guide\n\n${`The ${marker} guide explains how the settings page and the billing page work, step by step. `.repeat(12)}`
const embeddingOf = (marker: string) => (r: RecordedRequest) => r.path.endsWith('/embeddings') && JSON.stringify(r.body).includes(marker)

/**
 * The document as the detail, the list and the health endpoint show it, once the three agree: they are read
 * in parallel, and a failure or a backfill recorded between two of the reads is seen by one and not yet by
 * another (null: read again).
 */
async function shown(api: Api, id: string) {
  const [detail, list, health] = await Promise.all([api.get(`/documents/${id}`), api.get('/documents'), api.get(`/documents/${id}/health`)])
  expect(detail.status).toBe(200)
  expect(health.status).toBe(200)
  const listed = list.body.documents.find((d: { id: string }) => d.id === id)
  if (!isDeepStrictEqual(listed.embeddings, detail.body.embeddings) || !isDeepStrictEqual(listed.health_status, health.body)) return null
  return { ...detail.body, health: health.body }
}

describe('honest indexing status', () => {
  it('shows vectors missing with the reason while the provider fails, and backfills within seconds once it answers', async () => {
    const tenant = await createTenant(t)
    fake.fail('http500', { match: embeddingOf('durian') })
    const uploaded = await uploadReady(t, tenant.api, 'durian.md', doc('durian'))
    const failed = await until('vectors failed', async () => {
      const d = await shown(tenant.api, uploaded.id)
      return d?.embeddings.status === 'failed' ? d : null
    })
    expect(failed.status).toBe('ready') // searchable by keywords meanwhile
    expect(failed.embeddings).toMatchObject({ reason: 'provider_error', done: 0, total: failed.chunk_count, model: 'text-embedding-3-small' })
    expect(failed.embeddings.message).toMatch(/^Embeddings failed: provider error\./)
    expect(failed.embeddings.message).not.toMatch(/server had an error/i) // never the provider's own words
    const warning = failed.health.warnings.find((w: { type: string }) => w.type === 'embeddings_missing')
    expect(warning).toMatchObject({ severity: 'medium', message: failed.embeddings.message })
    expect(failed.health.score).toBeLessThan(100)

    fake.reset() // the provider answers again: the probe (5 s after the failure) finds it and the backfill runs
    const since = Date.now()
    const ready = await until('vectors backfilled', async () => {
      const d = await shown(tenant.api, uploaded.id)
      return d?.embeddings.status === 'ready' ? d : null
    })
    expect(Date.now() - since).toBeLessThan(15_000)
    expect(ready.embeddings).toMatchObject({ done: ready.chunk_count, total: ready.chunk_count, reason: null, message: null })
    expect(ready.health.warnings.some((w: { type: string }) => w.type === 'embeddings_missing')).toBe(false)
  })

  it('a refused key shows as such; a new key backfills at once', async () => {
    const tenant = await createTenant(t, { llmKey: 'sk-refused-key-7777' })
    fake.fail('http401', { match: (r) => r.path.endsWith('/embeddings') && r.auth.last4 === '7777' })
    const uploaded = await uploadReady(t, tenant.api, 'guava.md', doc('guava'))
    const failed = await until('key refused', async () => {
      const d = (await tenant.api.get(`/documents/${uploaded.id}`)).body
      return d.embeddings.status === 'failed' ? d : null
    })
    expect(failed.embeddings.reason).toBe('key_refused')
    expect(failed.embeddings.message).toContain('the model key was refused')
    expect(failed.embeddings.message).not.toContain('7777')
    const sources = await tenant.api.get('/documents/sources')
    expect(sources.body.documents.find((d: { id: string }) => d.id === uploaded.id).embeddings.reason).toBe('key_refused')

    const since = Date.now()
    expect((await tenant.api.patch('/tenants/me', { llm_api_key: 'sk-working-key-8888' })).status).toBe(200)
    await until('vectors after the new key', async () => (await tenant.api.get(`/documents/${uploaded.id}`)).body.embeddings.status === 'ready')
    expect(Date.now() - since).toBeLessThan(5_000)
    fake.reset()
  })
})

describe('OpenAPI FAQ candidates', () => {
  it('are listed within seconds of the upload, not after the extraction debounce', async () => {
    expect(t.ctx.config.KNOWLEDGE_EXTRACT_DELAY_SECONDS).toBeGreaterThanOrEqual(60)
    const tenant = await createTenant(t)
    const spec = JSON.stringify({
      openapi: '3.0.3',
      info: { title: 'Kumquat API', version: '1' },
      paths: { '/v1/orders': { get: { summary: 'List orders' }, post: { summary: 'Create an order' } } },
    })
    const since = Date.now()
    const uploaded = await uploadReady(t, tenant.api, 'kumquat.json', spec)
    expect(uploaded.file_type).toBe('swagger')
    const list = await until('swagger FAQ candidates', async () => {
      const r = await tenant.api.get('/knowledge/faq?source=swagger')
      return r.body.total === 2 ? r.body : null
    })
    expect(Date.now() - since).toBeLessThan(5_000)
    expect(list.items.map((i: { question: string }) => i.question).sort()).toEqual(['How do I create an order?', 'How do I list orders?'])
    // the debounced extraction (profile) is still ahead, and will not read the API document again. It is queued once
    // the document's vectors are written, after the candidates (a loaded machine shows the list first): waited for.
    const queued = await until('the debounced extraction queued', () =>
      t.ctx.db
        .selectFrom('jobs')
        .select('run_at')
        .where('tenant_id', '=', tenant.tenantId)
        .where('kind', '=', 'knowledge.extract')
        .where('status', '=', 'queued')
        .executeTakeFirst(),
    )
    expect(queued.run_at.getTime()).toBeGreaterThan(Date.now() + 30_000)
  })
})
