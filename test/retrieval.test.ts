import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { openDatabase, type DatabaseHandle, type Db } from '../src/db/client.js'
import { createRetrievalRepo } from '../src/modules/retrieval/retrieval.repo.js'
import { createRetrievalService } from '../src/modules/retrieval/retrieval.service.js'
import { idf, termScore } from '../src/modules/retrieval/bm25.fns.js'
import type { LlmClient } from '../src/modules/llm/llm.js'

let handle: DatabaseHandle
let db: Db

async function newTenant(): Promise<string> {
  const user = await db
    .insertInto('users')
    .values({ email: `${randomUUID()}@x.test`, password_hash: 'x', created_at: new Date(), updated_at: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow()
  const t = await db
    .insertInto('tenants')
    .values({ name: 't', owner_user_id: user.id, pii_optional_types: '[]', created_at: new Date(), updated_at: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow()
  return t.id
}

async function addDoc(
  tenantId: string,
  title: string,
  chunks: string[],
  opts: { lang?: string; url?: string; embed?: (t: string) => number[]; titled?: boolean } = {},
) {
  const doc = await db
    .insertInto('documents')
    .values({
      tenant_id: tenantId,
      filename: `${title}.md`,
      file_type: 'markdown',
      title,
      content_hash: randomUUID(),
      source_url: opts.url ?? null,
      size_bytes: 1,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const lang = opts.lang ?? 'english'
  const emb = (t: string) => {
    if (!opts.embed) return sql`NULL`
    const v = opts.embed(t)
    return handle.features.vector ? sql`${`[${v.join(',')}]`}::vector` : sql`${v}::real[]`
  }
  // titled: as the indexer does, the title's lexemes weighted A before the chunk's (B)
  const tsv = (c: string) =>
    opts.titled
      ? sql`setweight(to_tsvector(${lang}::regconfig, ${title}), 'A') || setweight(to_tsvector(${lang}::regconfig, ${c}), 'B')`
      : sql`to_tsvector(${lang}::regconfig, ${c})`
  const values = chunks.map(
    (c, i) => sql`(${tenantId}::uuid, ${doc.id}::uuid, ${i}, ${c}, ${c.split(/\s+/).length}, ${lang}, ${tsv(c)}, ${emb(c)}, ${opts.embed ? 'm' : null})`,
  )
  await sql`INSERT INTO chunks (tenant_id, document_id, ordinal, content, token_count, lang, tsv, embedding, embedding_model) VALUES ${sql.join(values)}`.execute(
    db,
  )
  return doc.id
}

const noLlm: Pick<LlmClient, 'embed'> = { embed: async () => ({ vectors: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }) }

beforeAll(async () => {
  handle = await openDatabase({ url: inject('databaseUrl'), pgliteDir: 'memory' })
  db = handle.db
})
afterAll(async () => handle?.close())

describe('lexical statistics (triggers on chunks)', () => {
  it('tracks document frequencies, corpus size and versions through insert, update and delete', async () => {
    const tenant = await newTenant()
    const docA = await addDoc(tenant, 'a', ['cats chase mice', 'cats sleep all day'])
    await addDoc(tenant, 'b', ['dogs chase cats'])
    const df = async (term: string) =>
      (await db.selectFrom('lexical_terms').select('df').where('tenant_id', '=', tenant).where('term', '=', term).executeTakeFirst())?.df ?? 0
    const corpus = () => db.selectFrom('lexical_corpus').selectAll().where('tenant_id', '=', tenant).executeTakeFirstOrThrow()
    expect(await df('cat')).toBe(3)
    expect(await df('chase')).toBe(2)
    const c1 = await corpus()
    expect(c1.n_chunks).toBe(3)
    expect(Number(c1.total_len)).toBe(3 + 4 + 3)
    expect(c1.langs).toEqual(['english'])

    await sql`UPDATE chunks SET tsv = to_tsvector('english', 'birds sing'), content = 'birds sing' WHERE document_id = ${docA} AND ordinal = 0`.execute(db)
    expect(await df('cat')).toBe(2)
    expect(await df('bird')).toBe(1)
    const c2 = await corpus()
    expect(Number(c2.version)).toBeGreaterThan(Number(c1.version))

    await db.deleteFrom('documents').where('id', '=', docA).execute()
    expect(await df('cat')).toBe(1)
    expect(await df('bird')).toBe(0)
    expect((await corpus()).n_chunks).toBe(1)
  })
})

describe('BM25 retrieval', () => {
  it('matches a BM25 computed by hand and ranks the better chunk first', async () => {
    const tenant = await newTenant()
    await addDoc(tenant, 'pw', ['To reset your password open settings and choose reset password.', 'Billing happens monthly by card.'])
    await addDoc(tenant, 'other', ['Password rules: at least twelve characters.', 'Our office is in Berlin.'])
    const svc = createRetrievalService({
      repo: createRetrievalRepo(db, handle.features),
      llm: noLlm,
      features: handle.features,
      embeddingModel: 'm',
      lexicalBudget: 1000,
      vectorCacheBytes: 1e7,
    })
    const res = await svc.lexical(tenant, 'How do I reset my password?', 10)
    expect(res.rows.length).toBe(2)
    const top = res.rows[0]!
    // by hand: N = 4 chunks of 10, 5, 6 and 5 words; chunk 1 has reset x2 and password x2
    const n = 4
    const avgdl = (10 + 5 + 6 + 5) / 4
    const expected = termScore(2, 10, avgdl, idf(1, n)) + termScore(2, 10, avgdl, idf(2, n))
    expect(top.score).toBeCloseTo(expected, 5)
    expect(res.rows[1]!.score).toBeCloseTo(termScore(1, 6, avgdl, idf(2, n)), 5)
  })

  it('is exact even when only the rarest terms generate candidates (MaxScore)', async () => {
    const tenant = await newTenant()
    const texts: string[] = []
    for (let i = 0; i < 60; i++) texts.push(`common words appear here number ${i} ${i % 7 === 0 ? 'special' : ''} ${i % 3 === 0 ? 'common common' : ''}`)
    await addDoc(tenant, 'many', texts)
    const repo = createRetrievalRepo(db, handle.features)
    const tiny = createRetrievalService({
      repo,
      llm: noLlm,
      features: handle.features,
      embeddingModel: 'm',
      lexicalBudget: 5,
      lexicalRounds: 3,
      vectorCacheBytes: 1e7,
    })
    const wide = createRetrievalService({ repo, llm: noLlm, features: handle.features, embeddingModel: 'm', lexicalBudget: 100000, vectorCacheBytes: 1e7 })
    const a = await tiny.lexical(tenant, 'special common words', 10)
    const b = await wide.lexical(tenant, 'special common words', 10)
    expect(a.rows.map((r) => r.score.toFixed(6))).toEqual(b.rows.map((r) => r.score.toFixed(6)))
    expect(a.rows.length).toBe(10)
  })

  it('scores in process exactly as the SQL statement does, and follows corpus changes', async () => {
    const tenant = await newTenant()
    const texts: string[] = []
    for (let i = 0; i < 80; i++)
      texts.push(`refund policy number ${i} ${i % 5 === 0 ? 'special refund' : ''} ${i % 3 === 0 ? "it's shipping shipping" : 'words'}`)
    await addDoc(tenant, 'many', texts)
    await addDoc(tenant, 'Refund special shipping', ['A titled chunk about policy words.', 'Another refund line.'], { titled: true })
    const repo = createRetrievalRepo(db, handle.features)
    const sqlOnly = createRetrievalService({ repo, llm: noLlm, features: handle.features, embeddingModel: 'm', lexicalBudget: 100000, vectorCacheBytes: 0 })
    const cached = createRetrievalService({
      repo,
      llm: noLlm,
      features: handle.features,
      embeddingModel: 'm',
      lexicalBudget: 5,
      vectorCacheBytes: 0,
      lexicalCacheBytes: 1e7,
      lexicalReloadMs: 0,
    })
    const same = async (q: string) => {
      const a = await sqlOnly.lexical(tenant, q, 15)
      const b = await cached.lexical(tenant, q, 15)
      expect(b.rows.map((r) => [r.id, r.score.toFixed(6)])).toEqual(a.rows.map((r) => [r.id, r.score.toFixed(6)]))
      return b.rows
    }
    expect(await same('special refund shipping')).toHaveLength(15)
    await same('policy words')
    // A new document changes the corpus version: the postings are reloaded, not served stale.
    await addDoc(tenant, 'new', ['A zebra refund story.'])
    const rows = await same('zebra refund')
    expect(rows[0]!.score).toBeGreaterThan(rows[1]!.score)
  })

  it('counts a hyphenated word of the question by its parts, on both paths', async () => {
    const tenant = await newTenant()
    // to_tsvector indexes 'x-ray' as 'x-ray', 'x' and 'ray'; the other chunk says the same without the hyphen
    await addDoc(tenant, 'a', ['x-ray scanner for every clinic'])
    await addDoc(tenant, 'b', ['x ray scanner for clinics'])
    for (let i = 0; i < 5; i++) await addDoc(tenant, `other ${i}`, [`refund policy number ${i}`])
    const repo = createRetrievalRepo(db, handle.features)
    const base = { repo, llm: noLlm, features: handle.features, embeddingModel: 'm', lexicalBudget: 100, vectorCacheBytes: 0 }
    for (const service of [createRetrievalService(base), createRetrievalService({ ...base, lexicalCacheBytes: 1e7 })]) {
      const r = await service.lexical(tenant, 'x-ray scanner', 5)
      expect(r.plan?.terms.map((t) => t.term).sort()).toEqual(['ray', 'scanner', 'x'])
      expect(r.rows).toHaveLength(2)
      expect(r.rows[0]!.score).toBeCloseTo(r.rows[1]!.score, 9)
    }
  })

  it('searches chunks of several languages with their own configuration', async () => {
    const tenant = await newTenant()
    await addDoc(tenant, 'de', ['Die Rechnungen werden monatlich verschickt.'], { lang: 'german' })
    await addDoc(tenant, 'en', ['Invoices are sent every month.'])
    const svc = createRetrievalService({
      repo: createRetrievalRepo(db, handle.features),
      llm: noLlm,
      features: handle.features,
      embeddingModel: 'm',
      lexicalBudget: 1000,
      vectorCacheBytes: 1e7,
    })
    expect((await svc.search(tenant, 'Wann werden Rechnungen verschickt?')).hits[0]?.text).toMatch(/Rechnungen/)
    expect((await svc.search(tenant, 'when are invoices sent')).hits[0]?.text).toMatch(/Invoices/)
    // an English question is not also searched with its German stems (they match other chunks and dilute)
    const plan = (await svc.lexical(tenant, 'Which invoices are sent monthly?', 5)).plan!
    expect(plan.terms.map((t) => t.term).sort()).toEqual(['invoic', 'month', 'sent'])
  })

  it('counts a word of the title or a heading three times (BM25F-style field weight)', async () => {
    const tenant = await newTenant()
    const body = 'Open the settings page and follow the steps below.'
    await addDoc(tenant, 'Export your data', [body], { titled: true })
    await addDoc(tenant, 'Getting started', [`${body} Export is also possible.`], { titled: true })
    await addDoc(tenant, 'Billing', ['Invoices are sent every month.'], { titled: true })
    const svc = createRetrievalService({
      repo: createRetrievalRepo(db, handle.features),
      llm: noLlm,
      features: handle.features,
      embeddingModel: 'm',
      lexicalBudget: 1000,
      vectorCacheBytes: 0,
    })
    const rows = (await svc.lexical(tenant, 'how do I export', 5)).rows
    expect(rows).toHaveLength(2)
    const n = 3
    const avgdl = (9 + 13 + 5) / 3
    // the titled chunk: tf 1 in the title, weighted 3; the other: once in its text
    expect(rows[0]!.score).toBeCloseTo(termScore(3, 9, avgdl, idf(2, n)), 5)
    expect(rows[1]!.score).toBeCloseTo(termScore(1, 13, avgdl, idf(2, n)), 5)
  })

  it('reports no documents, fuses vectors with BM25 and keeps tenants apart', async () => {
    const t1 = await newTenant()
    const t2 = await newTenant()
    // toy embeddings: one dimension per topic word
    const topics = ['refund', 'shipping', 'password', 'login']
    const embed = (t: string) => topics.map((w) => (t.toLowerCase().includes(w) || (w === 'refund' && /money back/i.test(t)) ? 1 : 0.01))
    const llm: Pick<LlmClient, 'embed'> = {
      embed: async (o) => ({ vectors: o.input.map(embed), usage: { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 } }),
    }
    const svc = createRetrievalService({
      repo: createRetrievalRepo(db, handle.features),
      llm,
      features: handle.features,
      embeddingModel: 'm',
      lexicalBudget: 1000,
      vectorCacheBytes: 1e7,
    })
    const empty = await svc.search(t1, 'anything', { apiKey: 'sk-x' })
    expect(empty.corpusChunks).toBe(0)
    expect(empty.hits).toEqual([])

    await addDoc(t1, 'policy', ['Refund requests are accepted within 30 days.', 'Shipping takes three days.', 'Password changes happen in settings.'], {
      embed,
      url: 'https://docs.example.com/policy',
    })
    await addDoc(t2, 'secret', ['Refund of tenant two is private.'], { embed })
    // no shared word with the refund chunk: only the vector finds it
    const res = await svc.search(t1, 'can I get my money back?', { apiKey: 'sk-x', k: 3 })
    expect(res.vectorUsed).toBe(true)
    expect(res.tokens).toBe(3)
    expect(res.hits[0]!.text).toMatch(/Refund requests/)
    expect(res.hits[0]!.vector).toBeGreaterThan(0.9)
    expect(res.hits[0]!.url).toBe('https://docs.example.com/policy')
    expect(res.hits.every((h) => !/tenant two/.test(h.text))).toBe(true)
    expect(res.bestScore).toBeGreaterThan(0.9)
  })
})
