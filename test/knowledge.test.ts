import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type ChatRequestInfo, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { system, userText } from './helpers/chat.js'
import { uploadReady } from './helpers/documents.js'
import { createTenant } from './helpers/factories.js'
import { extractionSettled, until } from './helpers/wait.js'

let fake: FakeLlm
let t: TestApp

const isProfileCall = (req: ChatRequestInfo) => req.json && system(req).includes('knowledge profile')
const isFaqCall = (req: ChatRequestInfo) => req.json && system(req).includes('frequently asked questions')

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, KNOWLEDGE_EXTRACT_DELAY_SECONDS: '0' } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const REFUNDS = `# Refund policy

Acme Cloud refunds annual plans within 30 days. Write to help@acme.example for refunds.

## How do I request a refund?

Open Billing, choose the invoice and press Request refund. Refunds arrive within 5 business days.
`

const OPENAPI = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Acme API', version: '2' },
  paths: {
    '/v1/projects': {
      get: { summary: 'List projects', parameters: [{ name: 'page', in: 'query', schema: { type: 'integer' } }] },
      post: {
        summary: 'Create a project',
        requestBody: { content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } } },
      },
    },
    '/v1/projects/{id}': {
      delete: { summary: 'Delete a project', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }] },
      patch: { summary: 'Rename a project (old)', deprecated: true },
    },
  },
})

describe('knowledge profile', () => {
  it('is extracted with the guard model after indexing, and operator edits win over later extractions', async () => {
    const owner = await createTenant(t)
    let productName = 'Acme Cloud'
    fake.script((req) => {
      if (!isProfileCall(req) || !userText(req).includes('Acme')) return undefined
      return {
        json: {
          product_name: productName,
          topics: ['Refunds', 'Billing'],
          glossary: [{ term: 'Workspace', definition: 'A team account' }],
          support_email: 'help@acme.example',
          support_urls: ['https://acme.example/help', 'not a url'],
        },
      }
    })
    fake.script((req) => (isFaqCall(req) && userText(req).includes('Acme Cloud refunds') ? { json: { faqs: [] } } : undefined))

    const before = await owner.api.get('/knowledge/profile')
    expect(before.status).toBe(200)
    expect(before.body).toMatchObject({
      product_name: null,
      topics: [],
      glossary: [],
      support_email: null,
      support_urls: [],
      extraction_status: 'pending',
      faq_auto_approve: false,
    })

    await uploadReady(t, owner.api, 'refunds.md', REFUNDS)
    await extractionSettled(t, owner)
    const p = await owner.api.get('/knowledge/profile')
    expect(p.body).toMatchObject({
      product_name: 'Acme Cloud',
      topics: ['Refunds', 'Billing'],
      glossary: [{ term: 'Workspace', definition: 'A team account' }],
      support_email: 'help@acme.example',
      support_urls: ['https://acme.example/help'],
      extraction_status: 'done',
      operator_fields: [],
    })
    const call = fake.chatCalls().find((c) => isProfileCall(c) && userText(c).includes('Acme Cloud refunds'))!
    expect(call.model).toBe(t.ctx.config.GUARD_MODEL)
    expect(call.request.auth.last4).toBe('6789') // the tenant's own key

    // the operator names the product; a later extraction changes the other fields but not that one
    const patched = await owner.api.patch('/knowledge/profile', { product_name: 'Acme Cloud Pro', support_urls: ['https://acme.example/contact'] })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.operator_fields).toEqual(['product_name', 'support_urls'])
    productName = 'Something Else'
    await uploadReady(t, owner.api, 'more.md', '# Acme Billing\n\nAcme Cloud invoices are sent monthly.\n')
    await extractionSettled(t, owner)
    const after = await owner.api.get('/knowledge/profile')
    expect(after.body.product_name).toBe('Acme Cloud Pro')
    expect(after.body.support_urls).toEqual(['https://acme.example/contact'])
    expect(fake.chatCalls().filter((c) => isProfileCall(c) && userText(c).includes('Acme')).length).toBeGreaterThanOrEqual(2)

    // handing a field back lets the next extraction set it
    const reset = await owner.api.patch('/knowledge/profile', { reset_fields: ['product_name'] })
    expect(reset.body.operator_fields).toEqual(['support_urls'])

    const bad = await owner.api.patch('/knowledge/profile', { support_urls: ['javascript:alert(1)'] })
    expect(bad.status).toBe(422)
    expect((await owner.api.patch('/knowledge/profile', { topics: 'Refunds' })).status).toBe(422)
    expect((await owner.api.patch('/knowledge/profile', { support_email: 'nope' })).status).toBe(422)
  })

  it('feeds product name, topics and glossary to the relevance guard and the answer prompt; an edit reaches the next turn', async () => {
    const owner = await createTenant(t, { llmKey: 'sk-test-0123456789' })
    await uploadReady(t, owner.api, 'refunds.md', REFUNDS)
    await extractionSettled(t, owner)
    const patched = await owner.api.patch('/knowledge/profile', {
      product_name: 'Orbit Ledger',
      topics: ['Refunds', 'Invoices'],
      glossary: [{ term: 'Ledger seat', definition: 'One paid user of an Orbit Ledger workspace' }],
    })
    expect(patched.status, patched.text).toBe(200)
    const ask = async (question: string) => {
      const before = fake.chatCalls().length
      const res = await t.api().withApiKey(owner.apiKey).post('/chat', { question })
      expect(res.status, res.text).toBe(200)
      const calls = fake.chatCalls().slice(before)
      return {
        guard: calls.find((c) => system(c).includes('routing classifier')),
        answer: calls.find((c) => system(c).includes('customer-support assistant of')),
      }
    }
    const first = await ask('How do I request a refund for an annual plan?')
    expect(system(first.guard!)).toContain('Business: Orbit Ledger')
    expect(system(first.guard!)).toContain('Topics: Refunds; Invoices.')
    expect(system(first.answer!)).toContain('customer-support assistant of Orbit Ledger')
    expect(system(first.answer!)).toContain('- Ledger seat: One paid user of an Orbit Ledger workspace')
    // the profile is cached per tenant; an edit is announced and the very next turn uses it
    expect((await owner.api.patch('/knowledge/profile', { product_name: 'Orbit Books' })).status).toBe(200)
    const second = await ask('How long does a refund take?')
    expect(system(second.answer!)).toContain('customer-support assistant of Orbit Books')
  })

  it('is marked failed when the model fails, and the FAQ falls back to question headings', async () => {
    const owner = await createTenant(t)
    fake.fail('http500', { match: (r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body ?? {}).includes('Zebra Widgets'), times: 20 })
    await uploadReady(
      t,
      owner.api,
      'zebra.md',
      '# Zebra Widgets\n\n## How do I paint a zebra widget?\n\nUse the striped brush from the toolbox and two coats.\n',
    )
    await until('failed status', async () => (await owner.api.get('/knowledge/profile')).body.extraction_status === 'failed')
    const faq = await until('heading FAQ', async () => {
      const r = await owner.api.get('/knowledge/faq?source=docs')
      return r.body.items.length ? r.body : null
    })
    expect(faq.items[0]).toMatchObject({ question: 'How do I paint a zebra widget?', source: 'docs', approved: false })
    expect(faq.items[0].answer).toContain('striped brush')
  })
})

describe('FAQ candidates', () => {
  it('come from an uploaded OpenAPI document without a model, one per operation, and can be reviewed', async () => {
    const owner = await createTenant(t)
    const doc = await uploadReady(t, owner.api, 'acme-api.json', OPENAPI)
    expect(doc.file_type).toBe('swagger')
    await extractionSettled(t, owner)
    const list = await owner.api.get('/knowledge/faq?source=swagger')
    expect(list.status).toBe(200)
    const questions = list.body.items.map((i: { question: string }) => i.question).sort()
    expect(questions).toEqual(['How do I create a project?', 'How do I delete a project?', 'How do I list projects?'])
    expect(list.body.total).toBe(3)
    expect(list.body.pending_count).toBe(3)
    const create = list.body.items.find((i: { question: string }) => i.question === 'How do I create a project?')
    expect(create).toMatchObject({ source: 'swagger', approved: false, document_id: doc.id })
    expect(create.answer).toContain('`POST /v1/projects`')
    expect(create.answer).toContain('`name` (string, required)')
    expect(create.confidence).toBeGreaterThan(0.8)
    // no model call read the API document for FAQs
    expect(fake.chatCalls().some((c) => isFaqCall(c) && userText(c).includes('/v1/projects'))).toBe(false)

    const del = list.body.items.find((i: { question: string }) => i.question === 'How do I delete a project?')
    const listQ = list.body.items.find((i: { question: string }) => i.question === 'How do I list projects?')

    // approve, then editing the answer keeps the approval, editing the question un-approves
    expect((await owner.api.post(`/knowledge/faq/${create.id}/approve`)).body).toEqual({ id: create.id, approved: true })
    const a1 = await owner.api.put(`/knowledge/faq/${create.id}`, { answer: 'POST /v1/projects with a name.' })
    expect(a1.body).toMatchObject({ approved: true, answer: 'POST /v1/projects with a name.' })
    const a2 = await owner.api.put(`/knowledge/faq/${create.id}`, { question: 'How can I make a new project?' })
    expect(a2.body).toMatchObject({ approved: false, question: 'How can I make a new project?' })

    expect((await owner.api.post(`/knowledge/faq/${del.id}/reject`)).body).toEqual({ id: del.id, deleted: true })
    expect((await owner.api.delete(`/knowledge/faq/${listQ.id}`)).body).toEqual({ id: listQ.id, deleted: true })
    expect((await owner.api.post(`/knowledge/faq/${del.id}/approve`)).status).toBe(404)
    expect((await owner.api.put(`/knowledge/faq/${listQ.id}`, { answer: 'x' })).status).toBe(404)

    const remaining = await owner.api.get('/knowledge/faq')
    expect(remaining.body.items.map((i: { id: string }) => i.id)).toEqual([create.id])
    expect((await owner.api.get('/knowledge/faq?approved=true')).body.total).toBe(0)
    expect((await owner.api.post('/knowledge/faq/approve-all')).body).toEqual({ approved_count: 1 })
    const approved = await owner.api.get('/knowledge/faq?approved=true&source=all&limit=1&offset=0')
    expect(approved.body).toMatchObject({ total: 1, pending_count: 0 })

    for (const q of ['approved=maybe', 'source=web', 'limit=0', 'limit=201', 'offset=-1']) {
      expect((await owner.api.get(`/knowledge/faq?${q}`)).status, q).toBe(422)
    }
    expect((await owner.api.put(`/knowledge/faq/${create.id}`, { question: '' })).status).toBe(422)
    expect((await owner.api.post('/knowledge/faq/not-a-uuid/approve')).status).toBe(422)

    // every review step is in the workspace audit log, the refused ones are not
    expect((await owner.api.patch('/knowledge/profile', { product_name: 'Acme Projects' })).status).toBe(200)
    const log = await owner.api.get('/tenants/me/audit-log?limit=50')
    expect(log.status, log.text).toBe(200)
    const steps = log.body.items
      .filter((e: { item_type: string }) => e.item_type === 'faq' || e.item_type === 'knowledge_profile')
      .map((e: { action: string; item_type: string; item_id: string | null; actor_email: string }) => [e.action, e.item_type, e.item_id, e.actor_email])
      .reverse()
    expect(steps).toEqual([
      ['approved', 'faq', create.id, owner.email],
      ['updated', 'faq', create.id, owner.email],
      ['updated', 'faq', create.id, owner.email],
      ['rejected', 'faq', del.id, owner.email],
      ['deleted', 'faq', listQ.id, owner.email],
      ['approved_all', 'faq', null, owner.email],
      ['updated', 'knowledge_profile', null, owner.email],
    ])
  })

  it('are approved automatically above the confidence threshold when the tenant switches it on', async () => {
    const owner = await createTenant(t)
    const on = await owner.api.patch('/knowledge/profile', { faq_auto_approve: true })
    expect(on.body.faq_auto_approve).toBe(true)
    expect(on.body.operator_fields).toEqual([])
    await uploadReady(t, owner.api, 'api.json', OPENAPI)
    await extractionSettled(t, owner)
    const list = await owner.api.get('/knowledge/faq')
    expect(list.body.total).toBe(3)
    expect(list.body.items.every((i: { approved: boolean }) => i.approved)).toBe(true)
    expect(list.body.pending_count).toBe(0)
  })

  it('answer a matching question directly when approved, cited as the FAQ', async () => {
    const owner = await createTenant(t)
    await uploadReady(t, owner.api, 'api.json', OPENAPI)
    await extractionSettled(t, owner)
    const list = await owner.api.get('/knowledge/faq')
    const create = list.body.items.find((i: { question: string }) => i.question === 'How do I create a project?')
    await owner.api.put(`/knowledge/faq/${create.id}`, { answer: 'Send POST /v1/projects with a JSON body holding the project name.' })
    const chat = t.api().withApiKey(owner.apiKey)

    // not approved yet: the model writes the answer
    const calls0 = fake.chatCalls().length
    const r0 = await chat.post('/chat', { question: 'How do I create a project?' })
    expect(r0.status, r0.text).toBe(200)
    expect(r0.body.text).not.toBe('Send POST /v1/projects with a JSON body holding the project name.')

    await owner.api.post(`/knowledge/faq/${create.id}/approve`)
    const calls1 = fake.chatCalls().length
    expect(calls1).toBeGreaterThan(calls0)
    const r1 = await chat.post('/chat', { question: 'how can I create a project' })
    expect(r1.status, r1.text).toBe(200)
    expect(r1.body.text).toBe('Send POST /v1/projects with a JSON body holding the project name.')
    // no answer was generated for it (guards may still run)
    expect(
      fake
        .chatCalls()
        .slice(calls1)
        .filter((c) => !c.json),
    ).toHaveLength(0)
    const msg = await t.ctx.db.selectFrom('chat_messages').select('debug').where('id', '=', r1.body.message_id).executeTakeFirstOrThrow()
    expect(JSON.stringify(msg.debug)).toContain(create.id)

    // a close (not very close) match joins the answer's context instead
    const calls2 = fake.chatCalls().length
    const r2 = await chat.post('/chat', { question: 'How do I create a project for my whole team?' })
    expect(r2.status, r2.text).toBe(200)
    expect(r2.body.text).not.toBe('Send POST /v1/projects with a JSON body holding the project name.')
    const generation = fake
      .chatCalls()
      .slice(calls2)
      .find((c) => !c.json)!
    expect(system(generation)).toContain('Send POST /v1/projects with a JSON body holding the project name.')

    // approved FAQs are cached for the answer path: an edit and a removal reach the very next turn
    await owner.api.put(`/knowledge/faq/${create.id}`, { answer: 'Use the New project button on the dashboard.' })
    const r3 = await chat.post('/chat', { question: 'how can I create a project' })
    expect(r3.body.text).toBe('Use the New project button on the dashboard.')
    expect((await owner.api.delete(`/knowledge/faq/${create.id}`)).status).toBeLessThan(300)
    const r4 = await chat.post('/chat', { question: 'how can I create a project' })
    expect(r4.status, r4.text).toBe(200)
    expect(r4.body.text).not.toBe('Use the New project button on the dashboard.')
  })
})

describe('both URL forms', () => {
  it("answer for the caller's own tenant only", async () => {
    const a = await createTenant(t)
    const b = await createTenant(t)
    await a.api.patch('/knowledge/profile', { product_name: 'Alpha' })
    const long = await a.api.get(`/api/v1/tenants/${a.tenantId}/knowledge/profile`)
    expect(long.status).toBe(200)
    expect(long.body.product_name).toBe('Alpha')
    expect((await a.api.get(`/knowledge/profile?tenant_id=${a.tenantId}`)).body.product_name).toBe('Alpha')

    const patched = await a.api.patch(`/api/v1/tenants/${a.tenantId}/knowledge/profile`, { topics: ['Onboarding'] })
    expect(patched.body.topics).toEqual(['Onboarding'])
    expect((await a.api.get(`/api/v1/tenants/${a.tenantId}/knowledge/faq?approved=all`)).body).toEqual({ items: [], total: 0, pending_count: 0 })
    expect((await a.api.post(`/api/v1/tenants/${a.tenantId}/knowledge/faq/approve-all`)).body).toEqual({ approved_count: 0 })

    // another tenant (existing or not, uuid or not) is a 404 on every route, in both forms
    for (const other of [b.tenantId, '00000000-0000-4000-8000-000000000000', 'me']) {
      expect((await a.api.get(`/api/v1/tenants/${other}/knowledge/profile`)).status).toBe(404)
      expect((await a.api.patch(`/api/v1/tenants/${other}/knowledge/profile`, { product_name: 'X' })).status).toBe(404)
      expect((await a.api.get(`/api/v1/tenants/${other}/knowledge/faq`)).status).toBe(404)
      expect((await a.api.post(`/api/v1/tenants/${other}/knowledge/faq/approve-all`)).status).toBe(404)
      expect((await a.api.get(`/knowledge/profile?tenant_id=${other}`)).status).toBe(404)
      expect((await a.api.get(`/knowledge/faq?tenant_id=${other}`)).status).toBe(404)
    }
    expect((await b.api.get('/knowledge/profile')).body.product_name).toBeNull()

    // FAQ ids of another tenant are 404 too
    await uploadReady(t, b.api, 'api.json', OPENAPI)
    await extractionSettled(t, b)
    const faq = (await b.api.get('/knowledge/faq')).body.items[0]
    expect((await a.api.post(`/knowledge/faq/${faq.id}/approve`)).status).toBe(404)
    expect((await a.api.post(`/api/v1/tenants/${a.tenantId}/knowledge/faq/${faq.id}/reject`)).status).toBe(404)
    expect((await a.api.delete(`/knowledge/faq/${faq.id}`)).status).toBe(404)
    expect((await a.api.put(`/knowledge/faq/${faq.id}`, { answer: 'mine' })).status).toBe(404)
    expect((await b.api.post(`/api/v1/tenants/${b.tenantId}/knowledge/faq/${faq.id}/approve`)).body).toEqual({ id: faq.id, approved: true })

    // no JWT, or a widget key instead of one: 401
    expect((await t.api().get('/knowledge/profile')).status).toBe(401)
    expect((await t.api().withApiKey(a.apiKey).get(`/api/v1/tenants/${a.tenantId}/knowledge/profile`)).status).toBe(401)

    // distinct operation ids for the two forms
    const spec = await t.api().get('/openapi.json')
    if (spec.status === 200) {
      const ids = [spec.body.paths['/knowledge/profile']?.get?.operationId, spec.body.paths['/api/v1/tenants/{tenant_id}/knowledge/profile']?.get?.operationId]
      expect(ids[0]).toBeTruthy()
      expect(ids[1]).toBeTruthy()
      expect(ids[0]).not.toBe(ids[1])
    }
  })
})
