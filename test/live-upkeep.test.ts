import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { handedOff, teamName } from './helpers/live.js'
import { addMember } from './helpers/team.js'

/**
 * The live conversation's upkeep: old events are swept after LIVE_EVENTS_RETENTION_DAYS, the ticket routes
 * and the live routes take their row locks in one order (no deadlock when both run at once), internal notes
 * come back with the ticket after a reload but never reach the visitor, and the inbox's unread count.
 */
let t: TestApp

appWithFakeLlm({ LIVE_EVENTS_RETENTION_DAYS: '30' }, (started) => (t = started.t))

const eventCount = async (sid: string) =>
  (await t.ctx.db.selectFrom('live_events').select(sql<number>`count(*)::int`.as('n')).where('session_id', '=', sid).executeTakeFirstOrThrow()).n

describe('live event retention', () => {
  it('the daily sweep deletes events older than LIVE_EVENTS_RETENTION_DAYS and keeps newer ones and the messages', async () => {
    const owner = await createTenant(t)
    const old = await handedOff(t, owner)
    const recent = await handedOff(t, owner)
    expect((await owner.api.post(`/escalations/${old.ticket.id}/messages`, { content: 'Looking into it.' })).status).toBe(201)
    expect(await eventCount(old.sid)).toBeGreaterThan(0)
    await sql`UPDATE live_events SET created_at = now() - interval '31 days' WHERE session_id = ${old.sid}`.execute(t.ctx.db)
    const recentBefore = await eventCount(recent.sid)

    await t.ctx.queue.enqueue('live.retention', {})
    await expect.poll(() => eventCount(old.sid), { timeout: 15_000 }).toBe(0)
    expect(await eventCount(recent.sid)).toBe(recentBefore)
    // the conversation itself stays: the operator's message is still in the visitor's history
    const h = await old.visitor.get(`/widget/history?bot_id=${old.bot}&session_id=${old.sid}`)
    expect(h.body.messages.some((m: { content: string }) => m.content === 'Looking into it.')).toBe(true)
    // a stream resuming from a swept seq carries on with new events (numbers never repeat)
    expect((await owner.api.post(`/escalations/${old.ticket.id}/messages`, { content: 'Done.' })).status).toBe(201)
    const seqs = await t.ctx.db.selectFrom('live_events').select(sql<string>`session_seq::text`.as('s')).where('session_id', '=', old.sid).execute()
    expect(seqs.map((r) => Number(r.s))).toEqual([expect.any(Number)])
    expect(Number(seqs[0]!.s)).toBeGreaterThan(2)
  })
})

describe('one lock order', () => {
  it('assign and resolve (ticket routes) racing the live routes (messages, return to bot, close, typing) never deadlock', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    const statuses: number[] = []
    for (let round = 0; round < 12; round++) {
      const { visitor, bot, sid, ticket } = await handedOff(t, owner)
      const calls = [
        agent.api.patch(`/escalations/${ticket.id}`, { assignee_user_id: agent.userId }),
        owner.api.post(`/escalations/${ticket.id}/messages`, { content: `Hello ${round}` }),
        owner.api.post(`/escalations/${ticket.id}/messages`, { content: `Note ${round}`, internal: true }),
        owner.api.post(`/escalations/${ticket.id}/typing`, { on: true }),
        visitor.post(`/widget/typing?bot_id=${bot}&session_id=${sid}`, { on: true }),
        owner.api.post(`/escalations/${ticket.id}/resolve`, { resolution_text: `Solved ${round}` }),
        owner.api.post(`/escalations/${ticket.id}/return-to-bot`),
        owner.api.patch(`/escalations/${ticket.id}`, { assignee_user_id: null }),
      ]
      if (round % 3 === 2) calls.push(owner.api.post(`/escalations/${ticket.id}/close`))
      const done = await Promise.all(calls)
      for (const r of done) {
        expect(r.status, r.text).toBeLessThan(500)
        statuses.push(r.status)
      }
      const after = await owner.api.get(`/escalations/${ticket.id}`)
      expect(after.status).toBe(200)
      expect(after.body.status).toBe('resolved')
    }
    // the race did run the changes (not only refusals)
    expect(statuses.filter((s) => s === 200 || s === 201 || s === 204).length).toBeGreaterThan(statuses.length / 2)
  })
})

describe('notes and unread counts', () => {
  it('internal notes come back with the ticket after a reload, never in the visitor history; the inbox counts unread visitor messages', async () => {
    const owner = await createTenant(t)
    const { visitor, bot, sid, ticket } = await handedOff(t, owner)
    const note = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'VIP customer, be quick', internal: true })
    expect(note.status, note.text).toBe(201)

    const reloaded = await owner.api.get(`/escalations/${ticket.id}`)
    expect(reloaded.body.notes).toEqual([
      { id: note.body.id, author_name: await teamName(owner), content: 'VIP customer, be quick', created_at: note.body.created_at },
    ])
    const history = await visitor.get(`/widget/history?bot_id=${bot}&session_id=${sid}`)
    expect(JSON.stringify(history.body)).not.toContain('VIP customer')
    // the list carries no notes (the single ticket does)
    const listed = (await owner.api.get('/escalations')).body.tickets.find((x: { id: string }) => x.id === ticket.id)
    expect(listed.notes).toBeUndefined()
    expect(listed.unread_count).toBe(0)

    // two visitor messages while the queue has it: two unread; an operator message reads them
    for (const message of ['Anyone there?', 'Hello?']) {
      const r = await fetch(`${visitor.base}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor.ip },
        body: JSON.stringify({ message }),
      })
      expect(r.status).toBe(200)
      await r.text()
    }
    const unread = async () => (await owner.api.get('/escalations')).body.tickets.find((x: { id: string }) => x.id === ticket.id).unread_count
    expect(await unread()).toBe(2)
    expect((await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'Yes, here.' })).status).toBe(201)
    expect(await unread()).toBe(0)

    // another workspace cannot read the notes
    const other = await createTenant(t)
    expect((await other.api.get(`/escalations/${ticket.id}`)).status).toBe(404)
  })
})

describe('status heartbeat', () => {
  it('an online status lapses when the dashboard stops re-sending it, and a heartbeat brings it back without a new event', async () => {
    const owner = await createTenant(t)
    const bot = owner.bot.public_id
    const available = async () => (await t.api().get(`/widget/config?bot_id=${bot}`)).body.availability.online as boolean
    expect((await owner.api.put('/tenants/me/members/me/status', { status: 'online' })).status).toBe(200)
    expect(await available()).toBe(true)
    const workspaceEvents = async () =>
      (
        await t.ctx.db
          .selectFrom('live_events')
          .select(sql<number>`count(*)::int`.as('n'))
          .where('tenant_id', '=', owner.tenantId)
          .where('type', '=', 'availability')
          .executeTakeFirstOrThrow()
      ).n
    const events = await workspaceEvents()
    // a heartbeat while online changes nothing anyone sees
    expect((await owner.api.put('/tenants/me/members/me/status', { status: 'online' })).status).toBe(200)
    expect(await workspaceEvents()).toBe(events)

    await sql`UPDATE users SET live_status_at = now() - interval '4 minutes' WHERE tenant_id = ${owner.tenantId}`.execute(t.ctx.db)
    expect(await available()).toBe(false)
    expect((await owner.api.put('/tenants/me/members/me/status', { status: 'online' })).status).toBe(200)
    expect(await available()).toBe(true)
    expect(await workspaceEvents()).toBe(events + 1)
  })
})

describe('offline form', () => {
  it('a manual hand-off keeps the e-mail of the next visitor message on the ticket (what the widget offline form sends)', async () => {
    const owner = await createTenant(t)
    const { visitor, bot, sid, ticket } = await handedOff(t, owner)
    const r = await fetch(`${visitor.base}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor.ip },
      body: JSON.stringify({ message: 'visitor.mail@example.org' }),
    })
    expect(r.status).toBe(200)
    await r.text()
    const got = await owner.api.get(`/escalations/${ticket.id}`)
    expect(got.body.user_email).toBe('visitor.mail@example.org')
  })
})
