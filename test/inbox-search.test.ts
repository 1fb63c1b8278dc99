import { describe, expect, it } from 'vitest'
import { backfillEmailHashes } from '../src/modules/escalations/email-hash.backfill.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { chatApi, identifiedSession } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'
import { handedOff } from './helpers/live.js'
import { addMember } from './helpers/team.js'
import { until } from './helpers/wait.js'

/**
 * Finding a visitor (#39): `GET /escalations?q=` and `GET /chat/sessions?q=` find an exact e-mail address
 * (stored encrypted, compared by a keyed hash), a ticket number and words, within the caller's scope; the
 * session objects carry visitor_gone; `GET /analytics/agents` gives the per-agent queue figures.
 */
let t: TestApp

appWithFakeLlm({}, (started) => (t = started.t))

/** The visitor writes in the widget (after a hand-off the message goes to the team; an address is kept). */
async function widgetSay(h: Awaited<ReturnType<typeof handedOff>>, message: string) {
  const res = await fetch(`${h.visitor.base}/widget/chat?bot_id=${h.bot}&session_id=${h.sid}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': h.visitor.ip },
    body: JSON.stringify({ message }),
  })
  expect(res.status, await res.text()).toBe(200)
}

const ids = (r: { status: number; text: string; body: { tickets?: { id: string }[]; sessions?: { session_id: string }[] } }) => {
  expect(r.status, r.text).toBe(200)
  return (r.body.tickets?.map((x) => x.id) ?? r.body.sessions!.map((x) => x.session_id)).sort()
}

describe('search by e-mail', () => {
  it('finds the ticket and the conversation by the exact address, any case, stored only encrypted and hashed; never by its parts or across scopes', async () => {
    const owner = await createTenant(t)
    const a = await handedOff(t, owner, { note: 'Where is my parcel?' })
    const b = await handedOff(t, owner, { note: 'Example of a wrong invoice' })
    await widgetSay(a, 'You can write to Some.One@Example.com please')
    await until(
      'the address is kept on the ticket',
      async () => (await owner.api.get(`/escalations/${a.ticket.id}`)).body.user_email === 'Some.One@Example.com',
    )

    const row = await t.ctx.db
      .selectFrom('escalation_tickets')
      .select(['user_email_enc', 'user_email_hash'])
      .where('id', '=', a.ticket.id)
      .executeTakeFirstOrThrow()
    expect(row.user_email_enc).not.toContain('Example.com')
    expect(row.user_email_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(row.user_email_hash).not.toContain('some')

    const tickets = (who: typeof owner.api, q: string) => who.get(`/escalations?q=${encodeURIComponent(q)}`)
    const sessions = (who: typeof owner.api, q: string) => who.get(`/chat/sessions?q=${encodeURIComponent(q)}`)
    expect(ids(await tickets(owner.api, 'some.one@example.com'))).toEqual([a.ticket.id])
    expect(ids(await tickets(owner.api, '  SOME.ONE@EXAMPLE.COM '))).toEqual([a.ticket.id])
    expect(ids(await sessions(owner.api, 'some.one@example.com'))).toEqual([a.sid])
    // another address finds nothing; the address's parts are not searched as words (b's note says "Example")
    expect(ids(await tickets(owner.api, 'someone.else@example.com'))).toEqual([])
    expect(ids(await tickets(owner.api, 'example'))).toEqual([b.ticket.id])

    // scope: another workspace, an agent of another bot
    const other = await createTenant(t)
    expect(ids(await tickets(other.api, 'some.one@example.com'))).toEqual([])
    expect(ids(await sessions(other.api, 'some.one@example.com'))).toEqual([])
    const bot2 = await owner.api.post('/bots', { name: 'Second' })
    expect(bot2.status, bot2.text).toBe(201)
    const scoped = await addMember(t, owner, 'agent', { botIds: [bot2.body.id] })
    expect(ids(await tickets(scoped.api, 'some.one@example.com'))).toEqual([])
    expect(ids(await sessions(scoped.api, 'some.one@example.com'))).toEqual([])

    // rows written before the hash existed are hashed at start (the migration has no key)
    await t.ctx.db.updateTable('escalation_tickets').set({ user_email_hash: null }).where('id', '=', a.ticket.id).execute()
    await t.ctx.db.updateTable('chat_sessions').set({ visitor_email_hash: null }).where('id', '=', a.sid).execute()
    expect(ids(await tickets(owner.api, 'some.one@example.com'))).toEqual([])
    const filled = await backfillEmailHashes(t.ctx.db, t.ctx.cipher)
    expect(filled.tickets).toBeGreaterThanOrEqual(1)
    expect(filled.sessions).toBeGreaterThanOrEqual(1)
    expect(ids(await tickets(owner.api, 'some.one@example.com'))).toEqual([a.ticket.id])
    expect(ids(await sessions(owner.api, 'Some.One@example.com'))).toEqual([a.sid])
    // a second run finds nothing left to do
    expect(await backfillEmailHashes(t.ctx.db, t.ctx.cipher)).toEqual({ tickets: 0, sessions: 0 })
  })

  it("finds an identified visitor's ticket by the e-mail of their identity token", async () => {
    const owner = await createTenant(t)
    const sessionId = await identifiedSession(t, owner, { user_id: 'u-7', email: 'Kim@Customer.test', name: 'Kim' })
    const r = await chatApi(t, owner).post('/chat', { question: 'I need to talk to a person about my contract', session_id: sessionId })
    expect(r.status, r.text).toBe(200)
    const found = await owner.api.get(`/escalations?q=${encodeURIComponent('kim@customer.test')}`)
    expect(found.status, found.text).toBe(200)
    expect(found.body.tickets.map((x: { ticket_number: string }) => x.ticket_number)).toEqual([r.body.ticket_number])
    expect(
      (await owner.api.get(`/chat/sessions?q=${encodeURIComponent('KIM@customer.test')}`)).body.sessions.map((x: { session_id: string }) => x.session_id),
    ).toEqual([sessionId])
  })
})

describe('GET /chat/sessions q and visitor_gone', () => {
  it('finds conversations by words of their messages and by ticket number; 422 for an empty or long q; session objects carry visitor_gone', async () => {
    const owner = await createTenant(t)
    const a = await handedOff(t, owner, { note: 'first' })
    const b = await handedOff(t, owner, { note: 'second' })
    await widgetSay(a, 'The espresso machine leaks water')
    await widgetSay(b, 'My invoice has the wrong VAT number')
    const sessions = (q: string) => owner.api.get(`/chat/sessions?q=${encodeURIComponent(q)}`)
    expect(ids(await sessions('espresso'))).toEqual([a.sid])
    expect(ids(await sessions('espr leak'))).toEqual([a.sid])
    expect(ids(await sessions('vat invoice'))).toEqual([b.sid])
    expect(ids(await sessions(b.ticket.ticket_number.toLowerCase()))).toEqual([b.sid])
    expect(ids(await sessions("'); DROP TABLE x; --"))).toEqual([])
    const found = await sessions('espresso')
    expect(found.body.total).toBe(1)
    expect((await owner.api.get('/chat/sessions?q=')).status).toBe(422)
    expect((await owner.api.get(`/chat/sessions?q=${'x'.repeat(201)}`)).status).toBe(422)

    // visitor_gone on the session objects: the list and the history
    expect(found.body.sessions[0]).toMatchObject({ session_id: a.sid, visitor_gone: false, owner: 'queue' })
    await t.ctx.db.updateTable('chat_sessions').set({ visitor_gone: true }).where('id', '=', a.sid).execute()
    expect((await sessions('espresso')).body.sessions[0].visitor_gone).toBe(true)
    const history = await owner.api.get(`/chat/history/${a.sid}`)
    expect(history.status, history.text).toBe(200)
    expect(history.body.visitor_gone).toBe(true)
    expect((await owner.api.get(`/chat/history/${b.sid}`)).body.visitor_gone).toBe(false)
  })
})

describe('GET /analytics/agents', () => {
  it('gives each member their hand-offs with first reply and resolution times; analysts may read it, agents may not; scope and range checked', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    const day = (offset: number) => new Date(t.clock.now().getTime() + offset * 86_400_000).toISOString().slice(0, 10)
    const range = `from=${day(-1)}&to=${day(1)}`
    const one = await handedOff(t, owner, { note: 'one' })
    const two = await handedOff(t, owner, { note: 'two' })
    await handedOff(t, owner, { note: 'nobody has this one' })
    for (const h of [one, two]) {
      const r = await owner.api.patch(`/escalations/${h.ticket.id}`, { assignee_user_id: agent.userId })
      expect(r.status, r.text).toBe(200)
    }
    t.clock.advance(60_000)
    expect((await agent.api.post(`/escalations/${one.ticket.id}/messages`, { content: 'Looking into it.' })).status).toBe(201)
    t.clock.advance(120_000)
    const resolved = await agent.api.post(`/escalations/${one.ticket.id}/resolve`, { resolution_text: 'Sent again.' })
    expect(resolved.status, resolved.text).toBe(200)

    const r = await owner.api.get(`/analytics/agents?${range}`)
    expect(r.status, r.text).toBe(200)
    expect(r.body.items).toHaveLength(1)
    const row = r.body.items[0]
    expect(row).toMatchObject({ user_id: agent.userId, conversations: 2, resolved: 1 })
    expect(typeof row.name).toBe('string')
    // the manual clock runs on with real time: the advances and the requests' own few seconds
    expect(row.first_reply_s.p50).toBeGreaterThanOrEqual(60)
    expect(row.first_reply_s.p50).toBeLessThan(120)
    expect(row.resolve_s.p50).toBeGreaterThanOrEqual(180)
    expect(row.resolve_s.p50).toBeLessThan(260)

    const analyst = await addMember(t, owner, 'analyst')
    expect((await analyst.api.get(`/analytics/agents?${range}`)).body.items).toHaveLength(1)
    expect((await agent.api.get(`/analytics/agents?${range}`)).status).toBe(403)
    // another workspace sees none of it; a range before the hand-offs is empty; a bad date is 422
    const other = await createTenant(t)
    expect((await other.api.get(`/analytics/agents?${range}`)).body.items).toEqual([])
    expect((await owner.api.get(`/analytics/agents?from=${day(-5)}&to=${day(-2)}`)).body.items).toEqual([])
    expect((await owner.api.get(`/analytics/agents?from=2026-02-31&to=${day(1)}`)).status).toBe(422)
    // a bot of another workspace is not found
    expect((await owner.api.get(`/analytics/agents?${range}&bot_id=${other.bot.id}`)).status).toBe(404)
  })
})
