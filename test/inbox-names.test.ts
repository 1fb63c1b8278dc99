import { describe, expect, it } from 'vitest'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { handedOff, teamName } from './helpers/live.js'
import { addMember } from './helpers/team.js'

/**
 * Display names (#39, contract "Operator assist"): a member's display_name is what visitors see on operator
 * messages, "joined" (owner) events and resolution replies; without one, the bot's name + " team", never
 * the part of the e-mail before the @.
 */
let t: TestApp

appWithFakeLlm({}, (started) => (t = started.t))

const historyOf = (h: { visitor: { get: (p: string) => Promise<{ body: any }> }; bot: string; sid: string }) =>
  h.visitor.get(`/widget/history?bot_id=${h.bot}&session_id=${h.sid}`).then((r) => r.body)

describe('PATCH /auth/me display_name', () => {
  it('sets, returns and clears the name; 422 for empty, blank or too long, and for unknown fields', async () => {
    const owner = await createTenant(t)
    expect((await owner.api.get('/auth/me')).body.display_name).toBeNull()
    const set = await owner.api.patch('/auth/me', { display_name: '  Kim   Lee ' })
    expect(set.status, set.text).toBe(200)
    expect(set.body.display_name).toBe('Kim Lee')
    expect((await owner.api.get('/auth/me')).body).toMatchObject({ display_name: 'Kim Lee', notify_on_assignment: expect.any(Boolean) })

    for (const bad of ['', '   ', 'x'.repeat(81)]) {
      const r = await owner.api.patch('/auth/me', { display_name: bad })
      expect(r.status, `${JSON.stringify(bad)} ${r.text}`).toBe(422)
      expect(r.text).toContain('display_name')
    }
    expect((await owner.api.patch('/auth/me', { display_name: 'x'.repeat(80) })).status).toBe(200)
    // the other setting leaves the name alone
    const notify = await owner.api.patch('/auth/me', { notify_on_assignment: false })
    expect(notify.body).toMatchObject({ display_name: 'x'.repeat(80), notify_on_assignment: false })
    const cleared = await owner.api.patch('/auth/me', { display_name: null })
    expect(cleared.status, cleared.text).toBe(200)
    expect(cleared.body.display_name).toBeNull()
    expect((await t.api().patch('/auth/me', { display_name: 'Nobody' })).status).toBe(401)
  })
})

describe('issue 50, finding 13: a display name cannot hide or pass for the bot', () => {
  it("drops bidi overrides, zero-width and control characters; refuses the bot's own name with a 422 naming it", async () => {
    const owner = await createTenant(t)
    const botName = (await owner.api.get('/bots')).body.items[0].name as string
    const set = await owner.api.patch('/auth/me', { display_name: 'Kim\u202E Lee\u200B\u0007' })
    expect(set.status, set.text).toBe(200)
    expect(set.body.display_name).toBe('Kim Lee')
    expect((await owner.api.patch('/auth/me', { display_name: '\u202E\u200D' })).status).toBe(422)
    for (const copy of [botName, botName.toUpperCase(), `\u200B${botName}\u202E`]) {
      const r = await owner.api.patch('/auth/me', { display_name: copy })
      expect(r.status, r.text).toBe(422)
      expect(r.body.detail[0].loc).toEqual(['body', 'display_name'])
      expect(r.body.detail[0].msg).toBe(`display_name must not be the bot's name (${botName})`)
    }
    expect((await owner.api.get('/auth/me')).body.display_name).toBe('Kim Lee')
  })
})

describe('the name visitors see', () => {
  it('is the display name on messages, joins and resolution replies, else "<bot> team", never the local part', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    const team = await teamName(owner)
    expect(team).toMatch(/ team$/)

    // no display name: the team name, on the join (owner event) and the message
    const h1 = await handedOff(t, owner)
    const m1 = await agent.api.post(`/escalations/${h1.ticket.id}/messages`, { content: 'Hello there.' })
    expect(m1.status, m1.text).toBe(201)
    expect(m1.body.author_name).toBe(team)
    const hist1 = await historyOf(h1)
    expect(hist1).toMatchObject({ owner: 'human', assignee_name: team })
    const op1 = hist1.messages.find((m: { content: string }) => m.content === 'Hello there.')
    expect(op1).toMatchObject({ from_operator: true, author_name: team })
    expect(JSON.stringify(hist1)).not.toContain(agent.email.split('@')[0])
    const ownerEvents = await t.ctx.db.selectFrom('live_events').select('data').where('session_id', '=', h1.sid).where('type', '=', 'owner').execute()
    expect(ownerEvents.map((e) => (e.data as { assignee_name: string | null }).assignee_name)).toContain(team)

    // with a display name: that name everywhere, also on the ticket the team reads
    expect((await agent.api.patch('/auth/me', { display_name: 'Kim' })).status).toBe(200)
    const h2 = await handedOff(t, owner)
    const m2 = await agent.api.post(`/escalations/${h2.ticket.id}/messages`, { content: 'Kim here.' })
    expect(m2.body.author_name).toBe('Kim')
    expect(await historyOf(h2)).toMatchObject({ owner: 'human', assignee_name: 'Kim' })
    expect((await owner.api.get(`/escalations/${h2.ticket.id}`)).body).toMatchObject({ assignee_name: 'Kim' })
    const note = await agent.api.post(`/escalations/${h2.ticket.id}/messages`, { content: 'internal', internal: true })
    expect(note.body.author_name).toBe('Kim')

    // a resolution reply is signed by its author, not left anonymous ("Operator")
    const res = await agent.api.post(`/escalations/${h2.ticket.id}/resolve`, { resolution_text: 'Refund sent today.' })
    expect(res.status, res.text).toBe(200)
    const reply = (await historyOf(h2)).messages.find((m: { content: string }) => m.content === 'Refund sent today.')
    expect(reply).toMatchObject({ from_operator: true, author_name: 'Kim' })
    // by the owner, who has no display name: the team name
    const h3 = await handedOff(t, owner)
    expect((await owner.api.post(`/escalations/${h3.ticket.id}/resolve`, { resolution_text: 'All done.' })).status).toBe(200)
    const reply3 = (await historyOf(h3)).messages.find((m: { content: string }) => m.content === 'All done.')
    expect(reply3).toMatchObject({ from_operator: true, author_name: team })
  })
})
