import { afterEach, describe, expect, it } from 'vitest'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { chatApi, identifiedSession, isAnswer, REFUNDS_MD, system, withDocs } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'

let fake: FakeLlm
let t: TestApp

appWithFakeLlm({}, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())

const ticketOf = (tenantId: string, number: string) =>
  t.ctx.db.selectFrom('escalation_tickets').selectAll().where('tenant_id', '=', tenantId).where('ticket_number', '=', number).executeTakeFirstOrThrow()

describe('tickets opened by a turn', () => {
  it('opens a no_documents ticket when the tenant has no knowledge, numbered per tenant', async () => {
    const a = await createTenant(t)
    const b = await createTenant(t)
    const r = await chatApi(t, a).post('/chat', { question: 'How do I change my delivery address?' })
    expect(r.status, r.text).toBe(200)
    expect(r.body.ticket_number).toBe('ESC-0001')
    expect(r.body.text).toContain('ESC-0001')
    expect(r.body.delivered_to_operator).toBe(true)
    // the conversation is the team's now (chat_ended: owner is not the bot)
    expect(r.body).toMatchObject({ chat_ended: true, owner: 'queue' })
    const ticket = await ticketOf(a.tenantId, 'ESC-0001')
    expect(ticket).toMatchObject({
      trigger: 'no_documents',
      priority: 'low',
      status: 'open',
      session_id: r.body.session_id,
      primary_question: 'How do I change my delivery address?',
    })
    expect(ticket.transcript.map((m) => m.content)).toEqual(['How do I change my delivery address?'])
    expect(fake.chatCalls().filter(isAnswer)).toHaveLength(0)
    // the next tenant starts at 1 too; the same tenant goes on (in a new conversation: the first is the team's)
    expect((await chatApi(t, b).post('/chat', { question: 'Where is my parcel tracking number?' })).body.ticket_number).toBe('ESC-0001')
    expect((await chatApi(t, a).post('/chat', { question: 'Where is my parcel tracking number?' })).body.ticket_number).toBe('ESC-0002')
    // the question log records the outcome for the gap analyzer
    const logged = await t.ctx.db.selectFrom('question_log').selectAll().where('tenant_id', '=', a.tenantId).orderBy('created_at').execute()
    expect(logged.map((q) => [q.outcome, q.trigger])).toEqual([
      ['escalated', 'no_documents'],
      ['escalated', 'no_documents'],
    ])
  })

  it('opens a low_similarity ticket when nothing matches well enough, with the evidence', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const r = await chatApi(t, owner).post('/chat', { question: 'Which payment methods do you accept for corporate invoices?' })
    expect(r.body.ticket_number).toMatch(/^ESC-\d{4}$/)
    expect(r.body.text).toMatch(/couldn't find an answer .* ticket number is ESC-/)
    const ticket = await ticketOf(owner.tenantId, r.body.ticket_number)
    expect(ticket).toMatchObject({ trigger: 'low_similarity', priority: 'low' })
    const q = await t.ctx.db.selectFrom('question_log').selectAll().where('message_id', '=', r.body.message_id).executeTakeFirstOrThrow()
    expect(q.best_score).toBeLessThan(t.ctx.config.RETRIEVAL_MIN_SCORE)
  })

  it('opens a user_request ticket when the visitor asks for a person, and adds later hand-offs to it', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const api = chatApi(t, owner)
    const first = await api.post('/chat', { question: 'How long do refunds take?' })
    const r = await api.post('/chat', { question: 'I want to talk to a human please', session_id: first.body.session_id })
    expect(r.body.ticket_number).toMatch(/^ESC-\d{4}$/)
    expect(r.body.text).toMatch(/a person will get back to you/)
    const ticket = await ticketOf(owner.tenantId, r.body.ticket_number)
    expect(ticket).toMatchObject({ trigger: 'user_request', priority: 'medium' })
    expect(ticket.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    // a second request in the same session goes to the team that has it; no second ticket, no bot answer
    const again = await api.post('/chat', { question: 'Can I speak to a real person now?', session_id: first.body.session_id })
    expect(again.body).not.toHaveProperty('ticket_number')
    expect(again.body).toMatchObject({ delivered_to_operator: true, text: '', owner: 'queue' })
    // a manual escalation of the same session adds to the open ticket
    const manual = await api.post(`/chat/${first.body.session_id}/escalate`, {})
    expect(manual.body.ticket_number).toBe(r.body.ticket_number)
    const count = await t.ctx.db
      .selectFrom('escalation_tickets')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', owner.tenantId)
      .executeTakeFirstOrThrow()
    expect(Number(count.n)).toBe(1)
  })

  it('asks the guard model about a human request the patterns miss', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    fake.script((req) =>
      req.json && system(req).includes('routing classifier') ? { json: { injection: false, wants_human: true, relevant: true } } : undefined,
    )
    const r = await chatApi(t, owner).post('/chat', { question: 'Können Sie mich bitte mit Ihrem Kundendienst verbinden?' })
    expect(r.body.ticket_number).toMatch(/^ESC-/)
    expect(r.body.text).toMatch(/Ticketnummer lautet ESC-/)
  })

  it('raises the priority for an identified visitor on a paid plan and keeps who they are', async () => {
    const owner = await createTenant(t)
    const sessionId = await identifiedSession(t, owner, { user_id: 'u-42', email: 'kim@customer.test', name: 'Kim', plan_tier: 'enterprise' })
    const r = await chatApi(t, owner).post('/chat', { question: 'I need to talk to a person about my contract', session_id: sessionId })
    expect(r.body.session_id).toBe(sessionId)
    const ticket = await ticketOf(owner.tenantId, r.body.ticket_number)
    expect(ticket).toMatchObject({ trigger: 'user_request', priority: 'high', user_id: 'u-42', user_name: 'Kim' })
    expect(ticket.user_email_enc).not.toContain('kim@customer.test')
    expect(t.ctx.cipher.decrypt(ticket.user_email_enc!)).toBe('kim@customer.test')
    const free = await identifiedSession(t, await createTenant(t), { user_id: 'u-1', plan_tier: 'free' })
    expect(free).toBeTruthy()
  })

  it('numbers concurrent escalations of one tenant without gaps or duplicates', async () => {
    const owner = await createTenant(t)
    const api = chatApi(t, owner)
    const rs = await Promise.all(Array.from({ length: 12 }, (_, i) => api.post('/chat', { question: `Question number ${i} about warranty coverage` })))
    const numbers = rs.map((r) => r.body.ticket_number).sort()
    expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => `ESC-${String(i + 1).padStart(4, '0')}`))
  })

  it('numbers past ESC-9999 with five digits (the number is made in the ticket insert)', async () => {
    const owner = await createTenant(t)
    await t.ctx.db.insertInto('ticket_counters').values({ tenant_id: owner.tenantId, last: 9998 }).execute()
    const api = chatApi(t, owner)
    expect((await api.post('/chat', { question: 'Where is my parcel tracking number?' })).body.ticket_number).toBe('ESC-9999')
    const r = await api.post('/chat', { question: 'How do I change my delivery address?' })
    expect(r.body.ticket_number).toBe('ESC-10000')
    expect((await ticketOf(owner.tenantId, 'ESC-10000')).seq).toBe(10000)
  })
})

describe('POST /chat/{session_id}/escalate', () => {
  it('hands the session over to the team: later turns are delivered to it, unanswered; a closed chat is answered politely', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const api = chatApi(t, owner)
    const first = await api.post('/chat', { question: 'How long do refunds take? kim@example.com' })
    const r = await api.post(`/chat/${first.body.session_id}/escalate`, {
      trigger: 'answer_rejected',
      user_note: 'The answer was wrong, call me at +49 170 1234567',
      failure_type: 'wrong_answer',
    })
    expect(r.status, r.text).toBe(200)
    expect(r.body.ticket_number).toMatch(/^ESC-\d{4}$/)
    expect(r.body.message).toContain(r.body.ticket_number)
    const ticket = await ticketOf(owner.tenantId, r.body.ticket_number)
    expect(ticket).toMatchObject({ trigger: 'answer_rejected', priority: 'medium' })
    expect(ticket.primary_question).toBe('How long do refunds take? [EMAIL]')
    expect(ticket.user_note).toBe('The answer was wrong, call me at [PHONE]')
    expect(JSON.stringify(ticket.transcript)).not.toContain('kim@example.com')
    const q = await t.ctx.db.selectFrom('question_log').selectAll().where('session_id', '=', first.body.session_id).executeTakeFirstOrThrow()
    expect(q).toMatchObject({ outcome: 'escalated', trigger: 'answer_rejected' })

    expect(r.body).toMatchObject({ chat_ended: true, owner: 'queue' })
    const history = await owner.api.get(`/chat/history/${first.body.session_id}`)
    expect(history.body).toMatchObject({ chat_ended: true, owner: 'queue', ticket_number: r.body.ticket_number })
    expect(history.body.messages.at(-1).content).toBe(r.body.message)

    const after = await api.post('/chat', { question: 'Hello? Anyone?', session_id: first.body.session_id })
    expect(after.status).toBe(200)
    expect(after.body).toMatchObject({ chat_ended: true, text: '', delivered_to_operator: true })
    expect(fake.chatCalls().filter(isAnswer)).toHaveLength(1)

    await owner.api.post(`/escalations/${ticket.id}/close`)
    const closed = await api.post('/chat', { question: 'Still there?', session_id: first.body.session_id })
    expect(closed.body.chat_ended).toBe(true)
    expect(closed.body.text).toMatch(/conversation has ended/)
  })

  it('opens an llm_unavailable ticket with high priority from the original message', async () => {
    const owner = await createTenant(t)
    const sessionId = (await chatApi(t, owner).post('/chat', { question: 'hi' })).body.session_id
    const r = await chatApi(t, owner).post(`/chat/${sessionId}/escalate`, { trigger: 'llm_unavailable', original_user_message: 'Where is my order 123?' })
    expect(r.status).toBe(200)
    expect(r.body.message).toMatch(/temporarily unavailable/)
    expect(await ticketOf(owner.tenantId, r.body.ticket_number)).toMatchObject({
      trigger: 'llm_unavailable',
      priority: 'high',
      primary_question: 'Where is my order 123?',
    })
  })

  it('defaults to user_request, accepts an empty body and refuses bad input', async () => {
    const owner = await createTenant(t)
    const sessionId = (await chatApi(t, owner).post('/chat', { question: 'hello' })).body.session_id
    const api = chatApi(t, owner)
    const r = await api.request('POST', `/chat/${sessionId}/escalate`)
    expect(r.status, r.text).toBe(200)
    expect(await ticketOf(owner.tenantId, r.body.ticket_number)).toMatchObject({ trigger: 'user_request' })
    expect((await api.post(`/chat/${sessionId}/escalate`, { trigger: 'low_similarity' })).status).toBe(422)
    expect((await api.post(`/chat/not-a-uuid/escalate`, {})).status).toBe(422)
    expect((await api.post(`/chat/${crypto.randomUUID()}/escalate`, {})).status).toBe(404)
    expect((await t.api().post(`/chat/${sessionId}/escalate`, {})).status).toBe(401)
    // another tenant's key cannot touch this session
    const other = await createTenant(t)
    expect((await chatApi(t, other).post(`/chat/${sessionId}/escalate`, {})).status).toBe(404)
  })
})
