import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { wireDocuments } from '../src/modules/documents/documents.wire.js'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { chunksOf, upload, uploadReady, waitReady } from './helpers/documents.js'
import { makeDocx, makeEncryptedPdf, makePdf, makeZipBombDocx, OPENAPI_YAML, PNG_HEADER, randomBytesSeeded, word97Sample } from './fixtures/files.js'

let t: TestApp
let owner: Tenant
let other: Tenant

beforeAll(async () => {
  t = await startApp()
  ;[owner, other] = await Promise.all([createTenant(t, { llmKey: null }), createTenant(t, { llmKey: null })])
})
afterAll(async () => t?.close())

const countDocs = async (tenantId: string) =>
  (await t.ctx.db.selectFrom('documents').select(sql<number>`count(*)::int`.as('n')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow()).n
const countChunks = async (tenantId: string) =>
  (await t.ctx.db.selectFrom('chunks').select(sql<number>`count(*)::int`.as('n')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow()).n

/** What PostgreSQL full-text search finds for the tenant, with each chunk's own configuration. */
async function search(tenantId: string, query: string) {
  const r = await sql<{ document_id: string; content: string }>`
    SELECT document_id, content FROM chunks
    WHERE tenant_id = ${tenantId} AND tsv @@ websearch_to_tsquery(lang::regconfig, ${query})`.execute(t.ctx.db)
  return r.rows
}

describe('uploading every accepted format', () => {
  it('markdown: front matter dropped, headings kept as the chunk path, searchable with stemming', async () => {
    const md =
      '---\ntitle: Install Guide\nsidebar: 3\n---\n# Guide\n\n## Install\n\nRun the installer on Linux and follow the prompts to finish the setup of the agent.\n\n```bash\nsudo ./install.sh --agent\n```\n'
    const doc = await uploadReady(t, owner.api, 'guide.md', md)
    expect(doc).toMatchObject({ filename: 'guide.md', file_type: 'markdown', title: 'Install Guide', source_id: null, source_url: null, error_message: null })
    expect(doc.size_bytes).toBe(Buffer.byteLength(md))
    expect(doc.parsed_text).not.toContain('sidebar')
    expect(doc.parsed_text_length).toBe(doc.parsed_text.length)
    expect(doc.chunk_count).toBe(1)
    const [chunk] = await chunksOf(t, doc.id)
    expect(chunk).toMatchObject({ heading_path: 'Guide > Install', section_title: 'Install', lang: 'english', ordinal: 0 })
    expect(chunk!.content).toContain('sudo ./install.sh --agent')
    expect(chunk!.tsv_len).toBeGreaterThan(10)
    // english stemming: "installing" finds "installer"/"install"
    expect((await search(owner.tenantId, 'installing agents')).map((r) => r.document_id)).toContain(doc.id)
  })

  it('mdx: imports, exports and JSX dropped, component content kept', async () => {
    const mdx = "import { Note } from '../components'\nexport const x = 1\n\n# Webhooks\n\n<Note>\n  Webhooks are retried five times with backoff.\n</Note>\n"
    const doc = await uploadReady(t, owner.api, 'webhooks.mdx', mdx)
    expect(doc.file_type).toBe('markdown')
    expect(doc.parsed_text).toBe('# Webhooks\n\nWebhooks are retried five times with backoff.')
  })

  it('plain text, plain JSON and YAML', async () => {
    const txt = await uploadReady(t, owner.api, 'notes.txt', 'Opening hours are nine to five on weekdays. Support answers within one business day.')
    expect(txt.file_type).toBe('plaintext')
    const json = await uploadReady(t, owner.api, 'plans.json', JSON.stringify({ plans: { basic: { price: 10, seats: 3 }, pro: { price: 30, seats: 10 } } }))
    expect(json.file_type).toBe('json')
    expect(json.parsed_text).toMatch(/^### plans › basic$/m)
    expect(json.parsed_text).toContain('- **price**: 10')
    const yml = await uploadReady(t, owner.api, 'settings.yml', 'timeouts:\n  connect: 5\n  read: 30\nretries: 3\n')
    expect(yml.file_type).toBe('yaml')
    expect(yml.parsed_text).toContain('- **retries**: 3')
  })

  it('OpenAPI YAML becomes swagger with one chunk per operation', async () => {
    const doc = await uploadReady(t, owner.api, 'petstore.yaml', OPENAPI_YAML)
    expect(doc.file_type).toBe('swagger')
    const chunks = await chunksOf(t, doc.id)
    const ops = chunks.map((c) => c.section_title).filter((s) => /^(GET|POST|DELETE) /.test(s ?? ''))
    expect(ops).toEqual(['GET /pets', 'POST /pets', 'DELETE /pets/{petId}'])
    const post = chunks.find((c) => c.section_title === 'POST /pets')!
    expect(post.content).toContain('Create a pet')
    expect(post.content).toContain('`422`: Invalid pet')
  })

  it('pdf with layout headings', async () => {
    const doc = await uploadReady(t, owner.api, 'billing.pdf', await makePdf({ pages: 2, marker: 'pdfmarker' }))
    expect(doc).toMatchObject({ file_type: 'pdf', title: 'Billing FAQ' })
    const chunks = await chunksOf(t, doc.id)
    expect(chunks.length).toBeGreaterThan(0)
    expect(chunks.map((c) => c.section_title)).toContain('Chapter 2: Invoices and refunds')
    expect((await search(owner.tenantId, 'pdfmarker refunds')).some((r) => r.document_id === doc.id)).toBe(true)
  })

  it('docx with headings, list and table; a .doc that is really a docx too', async () => {
    const doc = await uploadReady(t, owner.api, 'router.docx', await makeDocx({ marker: 'docxmarker' }))
    expect(doc).toMatchObject({ file_type: 'docx', title: 'Router Handbook' })
    expect(doc.parsed_text).toContain('| Green | Online |')
    const chunks = await chunksOf(t, doc.id)
    expect(chunks.map((c) => c.heading_path)).toContain('Installation')
    const renamed = await uploadReady(t, owner.api, 'old-name.doc', await makeDocx({ marker: 'renamed' }))
    expect(renamed.file_type).toBe('docx')
  })

  it('legacy Word 97 .doc', async () => {
    const doc = await uploadReady(t, owner.api, 'sample.doc', word97Sample())
    expect(doc.file_type).toBe('doc')
    expect(doc.parsed_text).toContain('Nom Document1')
    expect(doc.chunk_count).toBeGreaterThan(0)
  })

  it('German text is indexed with the German stemmer', async () => {
    const de =
      '# Rechnungen\n\nDie Rechnungen werden monatlich verschickt, und Sie können alle Rechnungen im Kundenkonto herunterladen, wenn Sie angemeldet sind.'
    const doc = await uploadReady(t, owner.api, 'rechnungen.md', de)
    const [chunk] = await chunksOf(t, doc.id)
    expect(chunk!.lang).toBe('german')
    expect((await search(owner.tenantId, 'Rechnung herunterladen')).map((r) => r.document_id)).toContain(doc.id)
  })
})

describe('listing, detail, deletion', () => {
  it('lists the tenant documents newest first, without the text', async () => {
    const a = await uploadReady(t, other.api, 'first.md', '# First\n\nThe first document of this tenant.')
    const b = await uploadReady(t, other.api, 'second.md', '# Second\n\nThe second document of this tenant.')
    const list = await other.api.get('/documents')
    expect(list.status).toBe(200)
    const ids = list.body.documents.map((d: { id: string }) => d.id)
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id))
    expect(list.body.documents[0]).not.toHaveProperty('parsed_text')
    expect(Object.keys(list.body.documents[0]).sort()).toEqual(
      [
        'id',
        'filename',
        'title',
        'file_type',
        'status',
        'error_message',
        'source_id',
        'source_url',
        'size_bytes',
        'chunk_count',
        'health_status',
        'created_at',
        'updated_at',
        'embeddings', // added: whether the vectors exist (contract: adding a field is fine)
        'embedding_error', // added (contract "Model servers"): why the embedding server's reply was refused, or null
      ].sort(),
    )
    // the owner's documents are not in the other tenant's list
    const mine = await owner.api.get('/documents')
    expect(mine.body.documents.map((d: { id: string }) => d.id)).not.toContain(a.id)
  })

  it('deletes a document with its chunks', async () => {
    const doc = await uploadReady(t, owner.api, 'to-delete.md', '# Gone\n\nThis document will be deleted together with its chunks soon.')
    expect((await chunksOf(t, doc.id)).length).toBe(1)
    const del = await owner.api.delete(`/documents/${doc.id}`)
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    expect((await chunksOf(t, doc.id)).length).toBe(0)
    expect((await owner.api.get(`/documents/${doc.id}`)).status).toBe(404)
    expect((await owner.api.delete(`/documents/${doc.id}`)).status).toBe(404)
  })

  it('answers 404 for another tenant’s document on every id route, and 422 for a non-uuid', async () => {
    const doc = await uploadReady(t, owner.api, 'private.md', '# Private\n\nOnly the owner may see or delete this document.')
    for (const [method, path] of [
      ['get', `/documents/${doc.id}`],
      ['delete', `/documents/${doc.id}`],
      ['get', `/documents/${doc.id}/health`],
      ['post', `/documents/${doc.id}/health/run`],
    ] as const) {
      const r = await other.api.request(method.toUpperCase(), path)
      expect(r.status, `${method} ${path}`).toBe(404)
      expect(r.body).toEqual({ detail: expect.any(String) })
    }
    expect((await owner.api.get(`/documents/${doc.id}`)).status).toBe(200)
    expect((await owner.api.get('/documents/not-a-uuid')).status).toBe(422)
    expect((await owner.api.get('/documents/00000000-0000-4000-8000-000000000000')).status).toBe(404)
  })

  it('requires a verified dashboard login', async () => {
    const anon = t.api()
    expect((await anon.get('/documents')).status).toBe(401)
    expect((await upload(anon, 'x.md', '# x')).status).toBe(401)
    expect((await t.api().withApiKey(owner.apiKey).get('/documents')).status).toBe(401)
  })
})

describe('refused uploads leave nothing behind', () => {
  const cases: [string, string, () => Promise<Uint8Array> | Uint8Array, number, RegExp][] = [
    ['unsupported extension', 'tool.exe', () => Buffer.from('MZ binary'), 400, /Unsupported file type/],
    ['image named .md', 'photo.md', () => PNG_HEADER, 400, /PNG/],
    ['encrypted PDF', 'secret.pdf', () => makeEncryptedPdf(), 422, /encrypted/i],
    ['random bytes named .pdf', 'random.pdf', () => randomBytesSeeded(8192), 422, /not a valid PDF/],
    ['truncated docx', 'cut.docx', async () => (await makeDocx()).subarray(0, 3000), 422, /damaged|not a Word/i],
    ['zip bomb docx', 'bomb.docx', () => makeZipBombDocx(300), 422, /zip bomb/i],
    ['invalid JSON', 'broken.json', () => Buffer.from('{"a": [1, 2'), 422, /Invalid JSON/],
    ['empty file', 'empty.txt', () => Buffer.alloc(0), 422, /empty/],
  ]
  for (const [name, filename, make, status, message] of cases) {
    it(`${name} -> ${status}`, async () => {
      const before = [await countDocs(other.tenantId), await countChunks(other.tenantId)]
      const r = await upload(other.api, filename, await make())
      expect(r.status, r.text).toBe(status)
      expect(r.body.detail).toMatch(message)
      expect([await countDocs(other.tenantId), await countChunks(other.tenantId)]).toEqual(before)
    })
  }

  it('a request without the file field is a 422 validation error', async () => {
    const form = new FormData()
    form.append('other', 'value')
    const r = await other.api.post('/documents', form)
    expect(r.status).toBe(422)
    expect(r.body.detail[0]).toMatchObject({ loc: ['body', 'file'], type: 'missing' })
    const json = await other.api.post('/documents', { file: 'nope' })
    expect(json.status).toBe(422)
    const wrongField = await upload(other.api, 'a.md', '# A', 'document')
    expect(wrongField.status).toBe(422)
  })

  it('identical content -> 409 naming the existing document; another tenant may upload it', async () => {
    const content = '# Pricing\n\nThe pro plan costs thirty euros a month and includes ten seats for the team.'
    const first = await uploadReady(t, owner.api, 'pricing.md', content)
    const again = await upload(owner.api, 'pricing-copy.md', content)
    expect(again.status).toBe(409)
    expect(again.body.detail).toContain(first.id)
    const elsewhere = await upload(other.api, 'pricing.md', content)
    expect(elsewhere.status).toBe(201)
  })
})

describe('limits', () => {
  let small: TestApp
  let tenant: Tenant
  beforeAll(async () => {
    small = await startApp({ env: { MAX_UPLOAD_BYTES: '4096', MAX_DOCUMENTS_PER_TENANT: '2' } })
    tenant = await createTenant(small, { llmKey: null })
    // worker stopped: uploads stay 'processing', which is also what a document looks like before its health check
    await small.worker!.stop()
  })
  afterAll(async () => small?.close())

  it('refuses a file over MAX_UPLOAD_BYTES with 400 and stores nothing', async () => {
    const r = await upload(tenant.api, 'big.md', `# Big\n\n${'word '.repeat(5000)}`)
    expect(r.status).toBe(400)
    expect(r.body.detail).toBe('File too large: the limit is 4 KB')
    const exact = await upload(tenant.api, 'exact.txt', 'x'.repeat(4096))
    expect(exact.status).toBe(201)
    expect((await tenant.api.delete(`/documents/${exact.body.id}`)).status).toBe(204)
  })

  it('refuses documents beyond the tenant capacity with 400', async () => {
    for (const i of [1, 2]) expect((await upload(tenant.api, `d${i}.md`, `# Doc ${i}\n\nText number ${i}.`)).status).toBe(201)
    const r = await upload(tenant.api, 'd3.md', '# Doc 3\n\nOne too many.')
    expect(r.status).toBe(400)
    expect(r.body.detail).toMatch(/at most 2 documents/)
    const list = await tenant.api.get('/documents')
    expect(list.body.documents).toHaveLength(2)
    expect(list.body.documents.every((d: { status: string }) => d.status === 'processing')).toBe(true)
  })

  it('health: 404 while never checked, then computed on demand and stored', async () => {
    const [doc] = (await tenant.api.get('/documents')).body.documents
    expect(doc.health_status).toBeNull()
    const before = await tenant.api.get(`/documents/${doc.id}/health`)
    expect(before.status).toBe(404)
    const run = await tenant.api.post(`/documents/${doc.id}/health/run`)
    expect(run.status).toBe(200)
    expect(run.body).toMatchObject({ score: expect.any(Number), checked_at: expect.any(String), error: null })
    expect(run.body.warnings.map((w: { type: string }) => w.type)).toContain('too_short')
    const after = await tenant.api.get(`/documents/${doc.id}/health`)
    expect(after.body).toEqual(run.body)
  })
})

describe('health after indexing', () => {
  it('is stored automatically and reflects the rules', async () => {
    const text = `# Handbook\n\n## Setup\n\n## Usage\n\n${'Use the dashboard to invite your team and assign roles to every member. '.repeat(3)}\n\nTODO: screenshots`
    const doc = await uploadReady(t, owner.api, 'handbook.md', text)
    expect(doc.health_status).not.toBeNull()
    const h = await owner.api.get(`/documents/${doc.id}/health`)
    expect(h.status).toBe(200)
    const types = h.body.warnings.map((w: { type: string }) => w.type)
    expect(types).toEqual(expect.arrayContaining(['unfinished_section', 'placeholder_text', 'too_short']))
    expect(h.body.score).toBeLessThan(100)
    for (const w of h.body.warnings) expect(['high', 'medium', 'low']).toContain(w.severity)
  })
})

describe('indexing is idempotent and resumable', () => {
  it('running the index twice, even concurrently, never duplicates chunks', async () => {
    const text = Array.from(
      { length: 12 },
      (_, i) => `## Part ${i}\n\n${'This section explains one more detail of the product in plain words. '.repeat(12)}`,
    ).join('\n\n')
    const doc = await uploadReady(t, owner.api, 'parts.md', `# Parts\n\n${text}`)
    const first = await chunksOf(t, doc.id)
    expect(first.length).toBeGreaterThan(3)
    const wired = wireDocuments(t.ctx, t.app as never, { llmKey: async () => null, audit: { record: async () => {} } })
    try {
      await Promise.all([wired.documents.indexDocument(owner.tenantId, doc.id), wired.documents.indexDocument(owner.tenantId, doc.id)])
      await wired.documents.indexDocument(owner.tenantId, doc.id)
    } finally {
      await wired.parser.close()
    }
    const again = await chunksOf(t, doc.id)
    expect(again.map((c) => c.ordinal)).toEqual(first.map((c) => c.ordinal))
    expect(again.map((c) => c.content)).toEqual(first.map((c) => c.content))
    const detail = await owner.api.get(`/documents/${doc.id}`)
    expect(detail.body).toMatchObject({ status: 'ready', chunk_count: first.length })
  })

  it('a job left running by a crashed worker is picked up again and finishes', async () => {
    const paused = await startApp()
    try {
      const tenant = await createTenant(paused, { llmKey: null })
      await paused.worker!.stop()
      const r = await upload(tenant.api, 'crash.md', '# Crash\n\nThe worker died while indexing this document, and another one finished it.')
      expect(r.status).toBe(201)
      // the dead worker's claim: running, lease expired
      await paused.ctx.db
        .updateTable('jobs')
        .set({ status: 'running', attempts: 1, locked_by: 'w-dead', locked_until: new Date(Date.now() - 1000) })
        .where('kind', '=', 'documents.index')
        .execute()
      expect((await tenant.api.get(`/documents/${r.body.id}`)).body.status).toBe('processing')
      const { createWorker } = await import('../src/runtime.js')
      const { wireModules } = await import('../src/modules/index.js')
      const modules = wireModules(paused.ctx)
      const worker = createWorker(paused.ctx, modules)
      await worker.drain()
      const doc = await waitReady(paused, tenant.api, r.body.id)
      expect(doc).toMatchObject({ status: 'ready', chunk_count: 1 })
      expect((await chunksOf(paused, r.body.id)).length).toBe(1)
    } finally {
      await paused.close()
    }
  })
})
