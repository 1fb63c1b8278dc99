import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, isAnswer, REFUNDS_MD, withDocs } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'

let fake: FakeLlm
let t: TestApp

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, IDEMPOTENCY_WAIT_MS: '1500' } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})
afterEach(() => fake.reset())

const piiEvents = (tenantId: string) =>
  t.ctx.db.selectFrom('pii_events').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('entity_type').execute()

describe('PII in conversations', () => {
  it('stores and sends only redacted text; the original only with include_original; delete-original erases it', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const question = 'How long do refunds take? Reach me at kim.doe@example.com or +49 170 1234567, card 4111 1111 1111 1111'
    const r = await chatApi(t, owner).post('/chat', { question })
    expect(r.status, r.text).toBe(200)
    // nothing of it reached the model
    for (const q of fake.requests) {
      const body = JSON.stringify(q.body)
      expect(body).not.toContain('kim.doe@example.com')
      expect(body).not.toContain('4111 1111 1111 1111')
      expect(body).not.toContain('1234567')
    }
    const raw = await t.ctx.db.selectFrom('chat_messages').selectAll().where('session_id', '=', r.body.session_id).orderBy('created_at').execute()
    expect(raw[0]!.content).toBe('How long do refunds take? Reach me at [EMAIL] or [PHONE], card [CARD]')
    expect(raw[0]!.content_original_enc).not.toContain('kim.doe')
    const session = await t.ctx.db.selectFrom('chat_sessions').selectAll().where('id', '=', r.body.session_id).executeTakeFirstOrThrow()
    expect(session.last_question).not.toContain('kim.doe')

    const events = await piiEvents(owner.tenantId)
    expect(events.map((e) => [e.entity_type, e.action, e.direction, e.count])).toEqual([
      ['CARD', 'redacted', 'message', 1],
      ['EMAIL', 'redacted', 'message', 1],
      ['PHONE', 'redacted', 'message', 1],
    ])

    const plain = await owner.api.get(`/chat/logs/session/${r.body.session_id}`)
    expect(plain.body.messages[0]).toMatchObject({ content_original: null, content_original_available: true })
    expect(plain.body.messages[1]).toMatchObject({ content_original: null, content_original_available: false })
    expect(JSON.stringify(plain.body)).not.toContain('kim.doe@example.com')
    expect((await piiEvents(owner.tenantId)).filter((e) => e.action === 'original_viewed')).toHaveLength(0)

    const full = await owner.api.get(`/chat/logs/session/${r.body.session_id}?include_original=true`)
    expect(full.body.messages[0].content_original).toBe(question)
    const viewed = (await piiEvents(owner.tenantId)).filter((e) => e.action === 'original_viewed')
    expect(viewed.map((e) => e.entity_type).sort()).toEqual(['CARD', 'EMAIL', 'PHONE'])
    expect(viewed[0]!.actor_user_id).toBe(owner.userId)

    const del = await owner.api.post(`/chat/logs/session/${r.body.session_id}/delete-original`)
    expect(del.status).toBe(200)
    expect(del.body).toEqual({ deleted_count: 1 })
    const after = await owner.api.get(`/chat/logs/session/${r.body.session_id}?include_original=true`)
    expect(after.body.messages[0]).toMatchObject({ content_original: null, content_original_available: false, content: raw[0]!.content })
    expect((await piiEvents(owner.tenantId)).filter((e) => e.action === 'original_deleted').length).toBe(3)
    expect((await owner.api.post(`/chat/logs/session/${r.body.session_id}/delete-original`)).body).toEqual({ deleted_count: 0 })
  })

  it('redacts the optional types only when the tenant keeps them switched on', async () => {
    const owner = await createTenant(t)
    const api = chatApi(t, owner)
    const withIp = await api.post('/chat', { question: 'My server 203.0.113.77 cannot connect' })
    let stored = await t.ctx.db
      .selectFrom('chat_messages')
      .select('content')
      .where('session_id', '=', withIp.body.session_id)
      .where('role', '=', 'user')
      .executeTakeFirstOrThrow()
    expect(stored.content).toBe('My server [IP] cannot connect')
    expect((await owner.api.put('/tenants/me/privacy', { optional_entity_types: [] })).status).toBe(200)
    const without = await api.post('/chat', { question: 'My server 203.0.113.77 cannot connect' })
    stored = await t.ctx.db
      .selectFrom('chat_messages')
      .select('content')
      .where('session_id', '=', without.body.session_id)
      .where('role', '=', 'user')
      .executeTakeFirstOrThrow()
    expect(stored.content).toBe('My server 203.0.113.77 cannot connect')
  })
})

describe('sessions, history, feedback and bad answers', () => {
  it('lists sessions newest first with their summary, and shows the history', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const api = chatApi(t, owner)
    const a = await api.post('/chat', { question: 'How long do refunds take?' })
    t.clock.advance(60_000)
    const b = await api.post('/chat', { question: 'Is there a refund for digital products?' })
    t.clock.advance(60_000)
    await api.post('/chat', { question: 'Are downloaded digital products refunded?', session_id: a.body.session_id })
    const list = await owner.api.get('/chat/sessions')
    expect(list.status).toBe(200)
    expect(list.body.sessions.map((s: any) => s.session_id)).toEqual([a.body.session_id, b.body.session_id])
    expect(list.body.sessions[0]).toMatchObject({
      bot_public_id: owner.bot.public_id,
      channel: 'api',
      mode: 'anonymous',
      message_count: 4,
      last_question: 'Are downloaded digital products refunded?',
      chat_ended: false,
      ticket_number: null,
    })
    expect(list.body.sessions[0].last_answer_preview.length).toBeGreaterThan(10)
    expect(list.body.total).toBe(2)
    expect((await owner.api.get('/chat/sessions?limit=1&offset=1')).body.sessions.map((s: any) => s.session_id)).toEqual([b.body.session_id])
    // one channel only (#38): a widget conversation is listed apart from the API's
    const w = (await t.api().post('/widget/session/init', { bot_id: owner.bot.public_id })).body.session_id as string
    const widgetOnly = await owner.api.get('/chat/sessions?channel=widget')
    expect(widgetOnly.body).toMatchObject({ total: 1, sessions: [{ session_id: w, channel: 'widget' }] })
    expect((await owner.api.get('/chat/sessions?channel=api')).body.total).toBe(2)
    expect((await owner.api.get('/chat/sessions?channel=email')).body).toEqual({ sessions: [], total: 0 })
    const bad = await owner.api.get('/chat/sessions?channel=fax')
    expect(bad.status).toBe(422)
    expect(bad.text).toMatch(/channel/)

    const h = await owner.api.get(`/chat/history/${a.body.session_id}`)
    expect(h.status).toBe(200)
    expect(h.body.session_id).toBe(a.body.session_id)
    expect(h.body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(h.body.messages[0]).toEqual({
      id: expect.any(String),
      role: 'user',
      content: 'How long do refunds take?',
      created_at: expect.any(String),
      from_operator: false,
      author_name: null,
    })
    expect(h.body).toMatchObject({ chat_ended: false, owner: 'bot', assignee_name: null })
  })

  it('records feedback on answers only and lists the bad ones with their question', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const api = chatApi(t, owner)
    const r1 = await api.post('/chat', { question: 'How long do refunds take?' })
    const r2 = await api.post('/chat', { question: 'Are digital products refundable?' })
    const up = await owner.api.post(`/chat/messages/${r1.body.message_id}/feedback`, { feedback: 'up' })
    expect(up.body).toEqual({ id: r1.body.message_id, feedback: 'up', ideal_answer: null })
    const down = await owner.api.post(`/chat/messages/${r2.body.message_id}/feedback`, { feedback: 'down', ideal_answer: 'Within 14 days if not downloaded.' })
    expect(down.body).toEqual({ id: r2.body.message_id, feedback: 'down', ideal_answer: 'Within 14 days if not downloaded.' })

    const bad = await owner.api.get('/chat/bad-answers')
    expect(bad.status).toBe(200)
    expect(bad.body.items).toEqual([
      {
        message_id: r2.body.message_id,
        session_id: r2.body.session_id,
        question: 'Are digital products refundable?',
        answer: r2.body.text,
        ideal_answer: 'Within 14 days if not downloaded.',
        created_at: expect.any(String),
      },
    ])
    // the question log follows, for the gap analyzer
    const q = await t.ctx.db.selectFrom('question_log').select(['message_id', 'feedback']).where('tenant_id', '=', owner.tenantId).execute()
    expect(Object.fromEntries(q.map((x) => [x.message_id, x.feedback]))).toEqual({ [r1.body.message_id]: 'up', [r2.body.message_id]: 'down' })
    // taking it back removes it from the list
    await owner.api.post(`/chat/messages/${r2.body.message_id}/feedback`, { feedback: 'none' })
    expect((await owner.api.get('/chat/bad-answers')).body.items).toEqual([])

    const log = await owner.api.get(`/chat/logs/session/${r1.body.session_id}`)
    const userMessage = log.body.messages[0].id
    expect((await owner.api.post(`/chat/messages/${userMessage}/feedback`, { feedback: 'down' })).status).toBe(400)
    expect((await owner.api.post(`/chat/messages/${r1.body.message_id}/feedback`, { feedback: 'meh' })).status).toBe(422)
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'limit=abc']) expect((await owner.api.get(`/chat/bad-answers?${q}`)).status).toBe(422)
    expect((await owner.api.get('/chat/bad-answers?limit=100&offset=5')).status).toBe(200)
  })

  it('proposes an ideal answer as an FAQ candidate, which answers the question once approved', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const question = 'Can I get my refund paid out in bitcoin?'
    const first = await chatApi(t, owner).post('/chat', { question })
    expect(first.body.ticket_number).toMatch(/^ESC-/)
    const ideal = 'Refunds go back to the card you paid with; we cannot pay them out in bitcoin.'
    expect((await owner.api.post(`/chat/messages/${first.body.message_id}/feedback`, { feedback: 'down', ideal_answer: ideal })).status).toBe(200)
    const faq = await owner.api.get('/knowledge/faq?source=logs')
    expect(faq.body.items).toEqual([expect.objectContaining({ question, answer: ideal, source: 'logs', approved: false })])
    // saving the same ideal answer again, or another answer to the same question, proposes nothing more
    await owner.api.post(`/chat/messages/${first.body.message_id}/feedback`, { feedback: 'down', ideal_answer: `${ideal} ` })
    expect((await owner.api.get('/knowledge/faq?source=logs')).body.items).toHaveLength(1)
    expect((await owner.api.post(`/knowledge/faq/${faq.body.items[0].id}/approve`)).status).toBe(200)
    const again = await chatApi(t, owner).post('/chat', { question })
    expect(again.status, again.text).toBe(200)
    expect(again.body.text).toContain('cannot pay them out in bitcoin')
    expect(again.body).not.toHaveProperty('ticket_number')
  })

  it('answers 404 for every id of another tenant, and shows no foreign session', async () => {
    const owner = await createTenant(t)
    const other = await createTenant(t)
    const r = await chatApi(t, owner).post('/chat', { question: 'hello there, I have a question about invoices' })
    const sid = r.body.session_id
    const mid = r.body.message_id
    for (const [method, path, body] of [
      ['GET', `/chat/logs/session/${sid}`],
      ['GET', `/chat/logs/session/${sid}?include_original=true`],
      ['POST', `/chat/logs/session/${sid}/delete-original`],
      ['GET', `/chat/history/${sid}`],
      ['POST', `/chat/messages/${mid}/feedback`, { feedback: 'down' }],
    ] as const) {
      const res = await other.api.request(method, path, body)
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body).toEqual({ detail: expect.any(String) })
    }
    expect((await chatApi(t, other).post(`/chat/${sid}/escalate`, {})).status).toBe(404)
    expect((await other.api.get('/chat/sessions')).body.sessions).toEqual([])
    expect((await other.api.get('/chat/bad-answers')).body.items).toEqual([])
    // a turn with a foreign session id starts a new session of its own: nothing leaks, nothing is appended
    const foreign = await chatApi(t, other).post('/chat', { question: 'hello, about invoices again', session_id: sid })
    expect(foreign.status).toBe(200)
    expect(foreign.body.session_id).not.toBe(sid)
    expect((await owner.api.get(`/chat/history/${sid}`)).body.messages).toHaveLength(2)
    // unknown ids and no credentials
    expect((await owner.api.get(`/chat/history/${crypto.randomUUID()}`)).status).toBe(404)
    expect((await owner.api.get('/chat/history/not-a-uuid')).status).toBe(422)
    expect((await t.api().get('/chat/sessions')).status).toBe(401)
    expect((await t.api().withApiKey(owner.apiKey).get('/chat/sessions')).status).toBe(401)
  })
})

describe('Idempotency-Key', () => {
  it('replays the first response byte for byte and runs nothing', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const api = chatApi(t, owner)
    const first = await api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': '  order-42-q1  ' })
    expect(first.status).toBe(200)
    const calls = fake.requests.length
    const replay = await api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'order-42-q1' })
    expect(replay.status).toBe(200)
    expect(replay.text).toBe(first.text)
    expect(fake.requests.length).toBe(calls)
    const messages = await t.ctx.db.selectFrom('chat_messages').select('id').where('tenant_id', '=', owner.tenantId).execute()
    expect(messages).toHaveLength(2)
    // other keys, and other tenants with the same key, run normally
    const other = await createTenant(t)
    const foreign = await chatApi(t, other).post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'order-42-q1' })
    expect(foreign.body.session_id).not.toBe(first.body.session_id)
    // after 24 hours the key is new again
    t.clock.advance(24 * 3600 * 1000 + 1000)
    const later = await api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'order-42-q1' })
    expect(later.body.message_id).not.toBe(first.body.message_id)
  })

  it('refuses the same key with a different question, session or bot: 422 idempotency_key_reused, nothing run', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const api = chatApi(t, owner)
    const first = await api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'reuse-1' })
    expect(first.status).toBe(200)
    const calls = fake.requests.length
    const other = await api.post('/chat', { question: 'Do you ship to Canada?' }, { 'idempotency-key': 'reuse-1' })
    expect(other.status).toBe(422)
    expect(other.body).toEqual({ detail: { code: 'idempotency_key_reused', message: expect.any(String) } })
    expect(other.text).not.toContain('Canada')
    const otherSession = await api.post('/chat', { question: 'How long do refunds take?', session_id: crypto.randomUUID() }, { 'idempotency-key': 'reuse-1' })
    expect(otherSession.status).toBe(422)
    expect(otherSession.body.detail.code).toBe('idempotency_key_reused')
    expect(fake.requests.length).toBe(calls)
    // the original request still replays
    const replay = await api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'reuse-1' })
    expect(replay.text).toBe(first.text)
    // a different question while the first is still running is refused too, not made to wait
    fake.script((req) => (!req.json ? { text: 'Refunds are processed within 5 business days [1].', delayMs: 1000 } : undefined))
    const slow = api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'reuse-2' })
    await new Promise((r) => setTimeout(r, 200))
    const started = Date.now()
    const during = await api.post('/chat', { question: 'Do you ship to Canada?' }, { 'idempotency-key': 'reuse-2' })
    expect(during.status).toBe(422)
    expect(during.body.detail.code).toBe('idempotency_key_reused')
    expect(Date.now() - started).toBeLessThan(800)
    expect((await slow).status).toBe(200)
  })

  it('runs the pipeline once for 20 concurrent duplicates', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    fake.script((req) => (!req.json ? { chunks: ['Refunds are processed ', 'within 5 business days [1].'], chunkDelayMs: 150 } : undefined))
    const api = chatApi(t, owner)
    const rs = await Promise.all(
      Array.from({ length: 20 }, () => api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'dup-20' })),
    )
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200))
    expect(new Set(rs.map((r) => r.text)).size).toBe(1)
    expect(fake.chatCalls().filter(isAnswer)).toHaveLength(1)
    const messages = await t.ctx.db.selectFrom('chat_messages').select('id').where('tenant_id', '=', owner.tenantId).execute()
    expect(messages).toHaveLength(2)
  })

  it('answers 409 idempotency_in_flight when the first request takes too long, and frees the key after a failure', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    fake.script((req) => (!req.json ? { text: 'Refunds are processed within 5 business days [1].', delayMs: 2500 } : undefined))
    const api = chatApi(t, owner)
    const slow = api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'slow-1' })
    await new Promise((r) => setTimeout(r, 200))
    const dup = await api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'slow-1' })
    expect(dup.status).toBe(409)
    expect(dup.body.detail.code).toBe('idempotency_in_flight')
    expect((await slow).status).toBe(200)
    fake.reset()

    fake.fail(500)
    expect((await api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'fails-1' })).status).toBe(503)
    fake.reset()
    const retry = await api.post('/chat', { question: 'How long do refunds take?' }, { 'idempotency-key': 'fails-1' })
    expect(retry.status).toBe(200)
  })
})
