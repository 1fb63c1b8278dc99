import { afterEach, describe, expect, it } from 'vitest'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { handedOff, teamName } from './helpers/live.js'
import { addMember } from './helpers/team.js'
import { advanceWhenIdle } from './helpers/wait.js'
import { WebhookReceiver } from './fakes/webhook-receiver.js'

/**
 * Live conversation, who is there to answer (contract "Live conversation"): office hours, members' status,
 * the widget's availability, auto-assignment of queued conversations.
 */
let fake: FakeLlm
let t: TestApp

// webhook receivers listen on 127.0.0.1: this app may reach loopback (as in test/webhooks.test.ts)
appWithFakeLlm({ CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true' }, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())

const ALL_WEEK = [0, 1, 2, 3, 4, 5, 6].map((day) => ({ day, start: '00:00', end: '24:00' }))
const todayUtc = () => t.clock.now().toISOString().slice(0, 10)

/** A widget visitor handed off to the team; returns the session and its ticket. */
async function handOff(owner: Tenant, botPublicId = owner.bot.public_id) {
  const { visitor, sid, ticket } = await handedOff(t, owner, { bot: botPublicId, note: 'Where is my refund?' })
  const history = await visitor.get(`/widget/history?bot_id=${botPublicId}&session_id=${sid}`)
  return { sid, ticket, owner: history.body.owner as string, assignee: history.body.assignee_name as string | null }
}

const assigneeOf = async (owner: Tenant, ticketId: string) => (await owner.api.get(`/escalations/${ticketId}`)).body.assignee_user_id as string | null

describe('office hours', () => {
  it('owners set them, every member reads them; a bad zone, time, day or date is a 422 naming the field', async () => {
    const owner = await createTenant(t)
    expect((await owner.api.get('/tenants/me/office-hours')).body).toEqual({ timezone: 'UTC', weekly: [], holidays: [] })
    const hours = { timezone: 'Europe/Berlin', weekly: [{ day: 1, start: '09:00', end: '17:30' }], holidays: ['2026-12-25'] }
    const put = await owner.api.put('/tenants/me/office-hours', hours)
    expect(put.status, put.text).toBe(200)
    expect(put.body).toEqual(hours)
    const agent = await addMember(t, owner, 'agent')
    expect((await agent.api.get('/tenants/me/office-hours')).body).toEqual(hours)
    expect((await agent.api.put('/tenants/me/office-hours', hours)).status).toBe(403)

    const bad: [unknown, (string | number)[]][] = [
      [{ ...hours, timezone: 'Mars/Olympus' }, ['body', 'timezone']],
      [{ ...hours, weekly: [{ day: 7, start: '09:00', end: '10:00' }] }, ['body', 'weekly', 0, 'day']],
      [{ ...hours, weekly: [{ day: 1, start: '9am', end: '10:00' }] }, ['body', 'weekly', 0, 'start']],
      [{ ...hours, weekly: [{ day: 1, start: '10:00', end: '09:00' }] }, ['body', 'weekly', 0, 'end']],
      [{ ...hours, holidays: ['2026-02-30'] }, ['body', 'holidays', 0]],
    ]
    for (const [body, loc] of bad) {
      const r = await owner.api.put('/tenants/me/office-hours', body)
      expect(r.status, JSON.stringify(body)).toBe(422)
      expect(
        r.body.detail.map((d: { loc: unknown }) => d.loc),
        JSON.stringify(body),
      ).toContainEqual(loc)
    }
    expect((await owner.api.get('/tenants/me/office-hours')).body).toEqual(hours)
  })

  it('a member sets its own status; last one wins', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    const on = await agent.api.put('/tenants/me/members/me/status', { status: 'online' })
    expect(on.status, on.text).toBe(200)
    expect(on.body).toMatchObject({ user_id: agent.userId, role: 'agent', status: 'online' })
    expect((await agent.api.put('/tenants/me/members/me/status', { status: 'away' })).body.status).toBe('away')
    expect((await agent.api.put('/tenants/me/members/me/status', { status: 'busy' })).status).toBe(422)
  })
})

describe('the widget availability', () => {
  it('online within hours with an agent online, not for an agent of another bot; the ETA is the median first reply', async () => {
    const owner = await createTenant(t)
    const config = async () => (await t.api().get(`/widget/config?bot_id=${owner.bot.public_id}`)).body.availability
    expect(await config()).toEqual({ online: false, reply_eta_s: null, next_open_at: null })

    // an agent limited to another bot does not make this bot's team online
    const other = (await owner.api.post('/bots', { name: 'Other bot' })).body as { id: string }
    const elsewhere = await addMember(t, owner, 'agent', { botIds: [other.id] })
    await elsewhere.api.put('/tenants/me/members/me/status', { status: 'online' })
    expect((await config()).online).toBe(false)

    const agent = await addMember(t, owner, 'agent')
    await agent.api.put('/tenants/me/members/me/status', { status: 'online' })
    expect(await config()).toMatchObject({ online: true, next_open_at: null })

    // a holiday today: offline, back tomorrow at midnight (UTC)
    const today = todayUtc()
    await owner.api.put('/tenants/me/office-hours', { timezone: 'UTC', weekly: ALL_WEEK, holidays: [today] })
    const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString()
    expect(await config()).toMatchObject({ online: false, next_open_at: tomorrow })
    await owner.api.put('/tenants/me/office-hours', { timezone: 'UTC', weekly: ALL_WEEK, holidays: [] })

    // first replies after 60 s and 180 s: the median is 120 s
    const a = await handOff(owner)
    t.clock.advance(60_000)
    expect((await agent.api.post(`/escalations/${a.ticket.id}/messages`, { content: 'Looking into it.' })).status).toBe(201)
    const b = await handOff(owner)
    t.clock.advance(180_000)
    expect((await agent.api.post(`/escalations/${b.ticket.id}/resolve`, { resolution_text: 'Sent today.' })).status).toBe(200)
    // (the manual clock runs on with real time: a second or so more); 4 minutes passed, so the agent's open
    // dashboard has sent its heartbeat meanwhile (without it the online status lapses after 3 minutes)
    expect((await config()).online).toBe(false)
    await agent.api.put('/tenants/me/members/me/status', { status: 'online' })
    const withEta = await config()
    expect(withEta).toMatchObject({ online: true, next_open_at: null })
    expect(withEta.reply_eta_s).toBeGreaterThanOrEqual(120)
    expect(withEta.reply_eta_s).toBeLessThan(125)

    await agent.api.put('/tenants/me/members/me/status', { status: 'offline' })
    expect((await config()).online).toBe(false)
  })
})

describe('auto-assignment', () => {
  it('settings default off with capacity 3; 1..50', async () => {
    const owner = await createTenant(t)
    expect((await owner.api.get('/tenants/me/support-settings')).body).toMatchObject({ auto_assign: false, agent_capacity: 3 })
    const put = await owner.api.put('/tenants/me/support-settings', { auto_assign: true, agent_capacity: 2 })
    expect(put.body).toMatchObject({ auto_assign: true, agent_capacity: 2 })
    expect((await owner.api.put('/tenants/me/support-settings', { agent_capacity: 51 })).status).toBe(422)
    expect((await owner.api.put('/tenants/me/support-settings', { agent_capacity: 0 })).status).toBe(422)
  })

  it('the fewest open conversations under capacity; never an offline agent or one limited to another bot; the queue goes to an agent coming online', async () => {
    const owner = await createTenant(t)
    await owner.api.put('/tenants/me/support-settings', { auto_assign: true, agent_capacity: 2 })
    const other = (await owner.api.post('/bots', { name: 'Other bot' })).body as { id: string }
    const elsewhere = await addMember(t, owner, 'agent', { botIds: [other.id] })
    await elsewhere.api.put('/tenants/me/members/me/status', { status: 'online' })
    const away = await addMember(t, owner, 'agent')
    await away.api.put('/tenants/me/members/me/status', { status: 'offline' })
    const a1 = await addMember(t, owner, 'agent')
    const a2 = await addMember(t, owner, 'agent')
    await a1.api.put('/tenants/me/members/me/status', { status: 'online' })
    await a2.api.put('/tenants/me/members/me/status', { status: 'online' })

    const got: (string | null)[] = []
    for (let i = 0; i < 4; i++) {
      const h = await handOff(owner)
      expect(h.owner).toBe('human')
      got.push(await assigneeOf(owner, h.ticket.id))
    }
    // alternating by the fewest open: two each, nobody else
    expect(got.filter((x) => x === a1.userId)).toHaveLength(2)
    expect(got.filter((x) => x === a2.userId)).toHaveLength(2)

    // everyone at capacity: the next one waits in the queue
    const waiting = await handOff(owner)
    expect(waiting.owner).toBe('queue')
    expect(await assigneeOf(owner, waiting.ticket.id)).toBeNull()

    // a free agent coming online takes it
    const a3 = await addMember(t, owner, 'agent')
    const on = await a3.api.put('/tenants/me/members/me/status', { status: 'online' })
    expect(on.status, on.text).toBe(200)
    expect(await assigneeOf(owner, waiting.ticket.id)).toBe(a3.userId)
    const ticket = await owner.api.get(`/escalations/${waiting.ticket.id}`)
    expect(ticket.body).toMatchObject({ owner: 'human', assignee_name: await teamName(owner) })
  })

  it('an agent with room again (a conversation resolved) takes the oldest queued one', async () => {
    const owner = await createTenant(t)
    await owner.api.put('/tenants/me/support-settings', { auto_assign: true, agent_capacity: 1 })
    const agent = await addMember(t, owner, 'agent')
    await agent.api.put('/tenants/me/members/me/status', { status: 'online' })
    const first = await handOff(owner)
    expect(first.owner).toBe('human')
    const older = await handOff(owner)
    const newer = await handOff(owner)
    expect([older.owner, newer.owner]).toEqual(['queue', 'queue'])
    expect((await agent.api.post(`/escalations/${first.ticket.id}/resolve`, { resolution_text: 'Done.' })).status).toBe(200)
    await expect.poll(() => assigneeOf(owner, older.ticket.id), { timeout: 15_000 }).toBe(agent.userId)
    expect(await assigneeOf(owner, newer.ticket.id)).toBeNull()
  })

  it('off: a hand-off waits in the queue even with agents online', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    await agent.api.put('/tenants/me/members/me/status', { status: 'online' })
    const h = await handOff(owner)
    expect(h.owner).toBe('queue')
  })
})

describe('operator messages the visitor has not seen are mailed once per grace period', () => {
  const GRACE_MS = 600_000
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
  async function widgetTurn(visitor: ReturnType<TestApp['api']>, bot: string, sid: string, message: string) {
    const res = await fetch(`${visitor.base}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor.ip },
      body: JSON.stringify({ message }),
    })
    return res.text()
  }

  /** A visitor handed off who left an e-mail, and the ticket. */
  async function visitorWithEmail(owner: Tenant) {
    const bot = owner.bot.public_id
    const visitor = t.api()
    const sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id as string
    await widgetTurn(visitor, bot, sid, 'I want to talk to a human about my refund')
    const email = `visitor-${Math.random().toString(16).slice(2, 10)}@example.com`
    await widgetTurn(visitor, bot, sid, email)
    const list = await owner.api.get('/escalations')
    const ticket = list.body.tickets.find((x: { session_id: string }) => x.session_id === sid) as { id: string; ticket_number: string }
    expect(ticket).toBeTruthy()
    return { visitor, bot, sid, email, ticket }
  }

  const replyMails = (to: string) => t.smtp.to(to).filter((m) => /Reply to your support request/.test(m.subject))

  it('three quick messages make one mail listing them; nothing before the grace period ends; a note is never mailed', async () => {
    const owner = await createTenant(t)
    const { email, ticket } = await visitorWithEmail(owner)
    for (const content of ['First: looking into it.', 'Second: found your order.', 'Third: refund sent.']) {
      expect((await owner.api.post(`/escalations/${ticket.id}/messages`, { content })).status).toBe(201)
    }
    await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'Note: customer is VIP', internal: true })
    await advanceWhenIdle(t, GRACE_MS - 5_000)
    await sleep(300)
    expect(replyMails(email)).toHaveLength(0)
    await advanceWhenIdle(t, 10_000)
    const mail = await t.smtp.waitFor((m) => m.to.includes(email) && /Reply to your support request/.test(m.subject))
    expect(mail.text).toContain('First: looking into it.')
    expect(mail.text).toContain('Second: found your order.')
    expect(mail.text).toContain('Third: refund sent.')
    expect(mail.text).not.toContain('VIP')
    await advanceWhenIdle(t, GRACE_MS)
    await advanceWhenIdle(t, 0)
    await sleep(300)
    expect(replyMails(email)).toHaveLength(1)
  })

  it('no mail when the read receipt reached the last message', async () => {
    const owner = await createTenant(t)
    const { visitor, bot, sid, email, ticket } = await visitorWithEmail(owner)
    let last = ''
    for (const content of ['One', 'Two', 'Three']) last = (await owner.api.post(`/escalations/${ticket.id}/messages`, { content })).body.id
    const read = await visitor.post(`/widget/messages/read?bot_id=${bot}&session_id=${sid}`, { message_id: last })
    expect(read.status, read.text).toBe(200)
    await advanceWhenIdle(t, GRACE_MS + 1_000)
    await advanceWhenIdle(t, 0)
    const states = () =>
      t.ctx.db
        .selectFrom('operator_replies')
        .select('mail_status')
        .where('ticket_id', '=', ticket.id)
        .execute()
        .then((r) => r.map((x) => x.mail_status))
    await expect.poll(states, { timeout: 5000 }).toEqual(['read', 'read', 'read'])
    await sleep(300)
    expect(replyMails(email)).toHaveLength(0)
  })
})

describe('webhooks of a live conversation', () => {
  it('handed_off and assigned (auto-assignment), message.created for visitor and operator messages but never a note, returned_to_bot', async () => {
    const r = await new WebhookReceiver().start()
    try {
      const owner = await createTenant(t)
      const events = ['conversation.handed_off', 'conversation.assigned', 'conversation.returned_to_bot', 'message.created']
      const ep = await owner.api.post('/webhooks/endpoints', { url: r.url, events })
      expect(ep.status, ep.text).toBe(201)
      r.secrets.push(ep.body.secret)
      await owner.api.put('/tenants/me/support-settings', { auto_assign: true })
      const agent = await addMember(t, owner, 'agent')
      await agent.api.put('/tenants/me/members/me/status', { status: 'online' })

      const h = await handOff(owner)
      expect(h.owner).toBe('human')
      await expect.poll(() => r.ofType('conversation.assigned').length, { timeout: 15_000 }).toBe(1)
      expect(r.ofType('conversation.handed_off')[0]!.json.data).toMatchObject({
        session_id: h.sid,
        ticket_id: h.ticket.id,
        owner: 'human',
        previous_owner: 'bot',
      })
      expect(r.ofType('conversation.assigned')[0]!.json.data).toMatchObject({ session_id: h.sid, assignee_user_id: agent.userId })

      expect((await agent.api.post(`/escalations/${h.ticket.id}/messages`, { content: 'Internal: check the refund queue', internal: true })).status).toBe(201)
      expect((await agent.api.post(`/escalations/${h.ticket.id}/messages`, { content: 'Hello, I am on it.' })).status).toBe(201)
      const res = await fetch(`${t.api().base}/widget/chat?bot_id=${owner.bot.public_id}&session_id=${h.sid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Thanks, waiting.' }),
      })
      await res.text()
      await expect.poll(() => r.ofType('message.created').length, { timeout: 15_000 }).toBe(2)
      const messages = r.ofType('message.created').map((x) => x.json.data)
      expect(messages).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ session_id: h.sid, from_operator: true, content: 'Hello, I am on it.' }),
          expect.objectContaining({ session_id: h.sid, role: 'user', from_operator: false, content: 'Thanks, waiting.' }),
        ]),
      )

      expect((await agent.api.post(`/escalations/${h.ticket.id}/return-to-bot`)).status).toBe(200)
      await expect.poll(() => r.ofType('conversation.returned_to_bot').length, { timeout: 15_000 }).toBe(1)
      expect(r.ofType('conversation.returned_to_bot')[0]!.json.data).toMatchObject({ session_id: h.sid, owner: 'bot', previous_owner: 'human' })
      // the note never left the workspace
      expect(r.received.some((x) => x.body.includes('refund queue'))).toBe(false)
      expect(r.ofType('conversation.assigned')).toHaveLength(1)
      expect(r.ofType('message.created')).toHaveLength(2)
    } finally {
      await r.close()
    }
  })
})

describe('analytics of the queue', () => {
  it('queue_wait_s is the wait from hand-off to a person; a hand-off left without any human reply is abandoned', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    const day = (offset: number) => new Date(t.clock.now().getTime() + offset * 86_400_000).toISOString().slice(0, 10)
    const range = `from=${day(-1)}&to=${day(1)}`
    const answered = await handOff(owner)
    await handOff(owner) // nobody ever answers this one
    t.clock.advance(90_000)
    expect((await agent.api.post(`/escalations/${answered.ticket.id}/messages`, { content: 'Here now.' })).status).toBe(201)
    const early = await owner.api.get(`/analytics/summary?${range}`)
    expect(early.status, early.text).toBe(200)
    // the manual clock runs on with real time: 90 s and the requests' own few
    const wait = early.body.queue_wait_s as { p50: number; p90: number }
    expect(wait.p50).toBeGreaterThanOrEqual(90)
    expect(wait.p50).toBeLessThan(120)
    expect(wait.p90).toBe(wait.p50)
    expect(early.body.abandoned_in_queue).toBe(0)
    t.clock.advance(31 * 60_000)
    const late = await owner.api.get(`/analytics/summary?${range}`)
    expect(late.body).toMatchObject({ queue_wait_s: wait, abandoned_in_queue: 1 })
  })
})
