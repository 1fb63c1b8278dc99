import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { tokenFromMail } from './fakes/smtp.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi } from './helpers/chat.js'
import { createTenant, PASSWORD, uniqueEmail, type Tenant } from './helpers/factories.js'
import { addMember, invitationMail } from './helpers/team.js'

let t: TestApp
let fake: FakeLlm

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

async function invite(owner: Tenant, email: string, role = 'agent', extra: Record<string, unknown> = {}) {
  const after = t.smtp.mails.length
  const res = await owner.api.post('/tenants/me/invitations', { email, role, ...extra })
  expect(res.status, res.text).toBe(201)
  return { invitation: res.body, token: tokenFromMail(await invitationMail(t, email, after)) }
}

/** A visitor's conversation on the bot, handed to a person: its ticket id and number. */
async function openTicket(owner: Tenant, bot = owner.bot) {
  const chat = await chatApi(t, owner).post('/chat', { question: 'Where is my parcel?', bot_public_id: bot.public_id })
  expect(chat.status, chat.text).toBe(200)
  const esc = await chatApi(t, owner).post(`/chat/${chat.body.session_id}/escalate`, { trigger: 'user_request' })
  expect(esc.status, esc.text).toBe(200)
  const list = await owner.api.get('/escalations')
  return list.body.tickets.find((x: { ticket_number: string }) => x.ticket_number === esc.body.ticket_number) as { id: string; ticket_number: string }
}

describe('invitations', () => {
  it('mails a link to the dashboard page; the invitee sets a password and joins with the role and bots', async () => {
    const owner = await createTenant(t)
    const email = uniqueEmail('agent')
    const after = t.smtp.mails.length
    const res = await owner.api.post('/tenants/me/invitations', { email, role: 'agent', bot_ids: [owner.bot.id] })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ email, role: 'agent', bot_ids: [owner.bot.id], status: 'pending' })
    const mail = await invitationMail(t, email, after)
    expect(mail.text).toContain('http://app.test/accept-invitation?token=')
    const token = tokenFromMail(mail)
    // stored hashed: the token itself is nowhere in the table
    expect(await t.ctx.db.selectFrom('invitations').select('id').where('token_hash', '=', token).execute()).toEqual([])

    const api = t.api()
    const weak = await api.post('/auth/accept-invitation', { token, password: 'weak' })
    expect(weak.status).toBe(422)
    const noPassword = await api.post('/auth/accept-invitation', { token })
    expect(noPassword.status).toBe(422)
    const ok = await api.post('/auth/accept-invitation', { token, password: PASSWORD })
    expect(ok.status, ok.text).toBe(200)
    expect(ok.body.user).toMatchObject({ email, tenant_id: owner.tenantId, role: 'agent', bot_ids: [owner.bot.id], is_verified: true })
    expect(ok.headers.get('set-cookie')).toContain('access_token=')
    // single use
    const again = await t.api().post('/auth/accept-invitation', { token, password: PASSWORD })
    expect(again.status).toBe(400)
    expect(again.body.detail).toBe('This invitation has already been used')
    // the new member signs in like anyone, and is listed
    expect((await t.api().post('/auth/login', { email, password: PASSWORD })).status).toBe(200)
    const members = await owner.api.get('/tenants/me/members')
    expect(members.body.items.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [owner.email, 'owner'],
      [email, 'agent'],
    ])
    expect((await owner.api.get('/tenants/me/invitations')).body.items[0]).toMatchObject({ email, status: 'accepted' })
  })

  it('only the invited address accepts: a session of another account is refused', async () => {
    const owner = await createTenant(t)
    const stranger = await createTenant(t)
    const { token } = await invite(owner, uniqueEmail('invitee'))
    const res = await stranger.api.post('/auth/accept-invitation', { token })
    expect(res.status).toBe(403)
    expect(res.body.detail).toMatch(/for another address/)
    // an address that already has a workspace cannot be invited (one workspace per user)
    const taken = await owner.api.post('/tenants/me/invitations', { email: stranger.email, role: 'agent' })
    expect(taken.status).toBe(409)
    expect(taken.body.detail).toMatch(/already belongs to a workspace/)
  })

  it('an existing account without a workspace accepts with its password (or its session)', async () => {
    const owner = await createTenant(t)
    const email = uniqueEmail('registered')
    expect((await t.api().post('/auth/register', { email, password: PASSWORD })).status).toBe(200)
    const { token } = await invite(owner, email, 'editor')
    const anonymous = await t.api().post('/auth/accept-invitation', { token })
    expect(anonymous.status).toBe(401)
    expect((await t.api().post('/auth/accept-invitation', { token, password: 'Wr0ng-password!' })).status).toBe(401)
    const ok = await t.api().post('/auth/accept-invitation', { token, password: PASSWORD })
    expect(ok.status, ok.text).toBe(200)
    expect(ok.body.user).toMatchObject({ email, role: 'editor', tenant_id: owner.tenantId, is_verified: true })
  })

  it('a revoked invitation is refused; a resent one replaces the earlier link', async () => {
    const owner = await createTenant(t)
    const revoked = await invite(owner, uniqueEmail('revoked'))
    expect((await owner.api.delete(`/tenants/me/invitations/${revoked.invitation.id}`)).status).toBe(204)
    const r = await t.api().post('/auth/accept-invitation', { token: revoked.token, password: PASSWORD })
    expect(r.status).toBe(400)
    expect(r.body.detail).toMatch(/revoked/)

    const email = uniqueEmail('resent')
    const first = await invite(owner, email)
    const after = t.smtp.mails.length
    const resent = await owner.api.post(`/tenants/me/invitations/${first.invitation.id}/resend`)
    expect(resent.status, resent.text).toBe(200)
    const second = tokenFromMail(await invitationMail(t, email, after))
    expect(second).not.toBe(first.token)
    expect((await t.api().post('/auth/accept-invitation', { token: first.token, password: PASSWORD })).status).toBe(400)
    expect((await t.api().post('/auth/accept-invitation', { token: second, password: PASSWORD })).status).toBe(200)
    expect((await owner.api.post(`/tenants/me/invitations/${first.invitation.id}/resend`)).status).toBe(409)
  })

  it('expires after 7 days by the app clock; resending makes a new 7-day link', async () => {
    const owner = await createTenant(t)
    const email = uniqueEmail('late')
    const { invitation, token } = await invite(owner, email)
    t.clock.advance(7 * 86_400_000 + 60_000)
    const late = await t.api().post('/auth/accept-invitation', { token, password: PASSWORD })
    expect(late.status).toBe(400)
    expect(late.body.detail).toMatch(/expired/)
    // the owner's session is older than a day now: sign in again
    const login = await t.api().post('/auth/login', { email: owner.email, password: PASSWORD })
    owner.api.withToken(login.body.token)
    expect((await owner.api.get('/tenants/me/invitations')).body.items[0]).toMatchObject({ id: invitation.id, status: 'expired' })
    const after = t.smtp.mails.length
    expect((await owner.api.post(`/tenants/me/invitations/${invitation.id}/resend`)).status).toBe(200)
    const fresh = tokenFromMail(await invitationMail(t, email, after))
    expect((await t.api().post('/auth/accept-invitation', { token: fresh, password: PASSWORD })).status).toBe(200)
  })
})

describe('invitation rate limit', () => {
  it('sending and resending count together, 20 an hour per workspace, then the contract 429 with Retry-After; another workspace is unaffected', async () => {
    const owner = await createTenant(t)
    // an admin of the same workspace, on another IP, shares the allowance (this invitation counts: 1)
    const admin = await addMember(t, owner, 'admin')
    const first = await owner.api.post('/tenants/me/invitations', { email: uniqueEmail('burst'), role: 'agent' })
    expect(first.status, first.text).toBe(201)
    const statuses: number[] = []
    for (let i = 0; i < 9; i++) statuses.push((await owner.api.post(`/tenants/me/invitations/${first.body.id}/resend`)).status)
    for (let i = 0; i < 9; i++) statuses.push((await admin.api.post('/tenants/me/invitations', { email: uniqueEmail('burst'), role: 'analyst' })).status)
    expect(statuses).toEqual([...Array(9).fill(200), ...Array(9).fill(201)])
    for (const limited of [
      await owner.api.post('/tenants/me/invitations', { email: uniqueEmail('burst'), role: 'agent' }),
      await admin.api.post(`/tenants/me/invitations/${first.body.id}/resend`),
    ]) {
      expect(limited.status).toBe(429)
      expect(limited.body).toEqual({ error: 'Rate limit exceeded: 20 per 1 hour' })
      const after = Number(limited.headers.get('retry-after'))
      expect(after).toBeGreaterThan(60)
      expect(after).toBeLessThanOrEqual(3600)
    }
    // nothing was sent past the limit
    expect((await owner.api.get('/tenants/me/invitations')).body.items).toHaveLength(11)
    const other = await createTenant(t)
    expect((await other.api.post('/tenants/me/invitations', { email: uniqueEmail('other'), role: 'agent' })).status).toBe(201)
  })
})

describe('members', () => {
  it('a role change applies on the next request; a removed member is signed out at once', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    expect((await agent.api.get('/escalations')).status).toBe(200)
    const patched = await owner.api.patch(`/tenants/me/members/${agent.userId}`, { role: 'analyst' })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({ user_id: agent.userId, role: 'analyst' })
    const denied = await agent.api.get('/escalations')
    expect(denied.status).toBe(403)
    expect(denied.body.detail).toBe('Your role (analyst) may not work on tickets and conversations')

    expect((await owner.api.delete(`/tenants/me/members/${agent.userId}`)).status).toBe(204)
    expect((await agent.api.get('/auth/me')).status).toBe(401)
    expect((await agent.api.get('/bots')).status).toBe(401)
    expect((await owner.api.get('/tenants/me/members')).body.items).toHaveLength(1)
  })

  it('the last owner stays; nobody removes themselves; admins do not touch owners', async () => {
    const owner = await createTenant(t)
    const admin = await addMember(t, owner, 'admin')
    const admin2 = await addMember(t, owner, 'admin')
    expect((await admin.api.delete(`/tenants/me/members/${owner.userId}`)).status).toBe(409)
    const self = await owner.api.patch(`/tenants/me/members/${owner.userId}`, { role: 'admin' })
    expect(self.status).toBe(409)
    expect(self.body.detail).toMatch(/at least one owner/)
    expect((await owner.api.delete(`/tenants/me/members/${owner.userId}`)).status).toBe(403)
    expect((await admin.api.delete(`/tenants/me/members/${admin.userId}`)).status).toBe(403)
    expect((await admin.api.patch(`/tenants/me/members/${admin.userId}`, { role: 'owner' })).status).toBe(403)
    // with a second owner, an admin still does not remove or demote one
    expect((await owner.api.patch(`/tenants/me/members/${admin2.userId}`, { role: 'owner' })).status).toBe(200)
    expect((await admin.api.delete(`/tenants/me/members/${owner.userId}`)).status).toBe(403)
    expect((await admin.api.patch(`/tenants/me/members/${owner.userId}`, { role: 'agent' })).status).toBe(403)
    // an owner steps down when another owner stays
    expect((await owner.api.patch(`/tenants/me/members/${owner.userId}`, { role: 'admin' })).status).toBe(200)
    const unknownBot = await owner.api.patch(`/tenants/me/members/${admin.userId}`, { role: 'agent', bot_ids: ['00000000-0000-4000-8000-000000000000'] })
    expect(unknownBot.status).toBe(422)
  })

  it('two owners demoting each other at the same moment leave one owner (409 for the second)', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await createTenant(t)
      const b = await addMember(t, a, 'owner')
      const [x, y] = await Promise.all([
        a.api.patch(`/tenants/me/members/${b.userId}`, { role: 'admin' }),
        b.api.patch(`/tenants/me/members/${a.userId}`, { role: 'admin' }),
      ])
      expect([x.status, y.status].sort(), `${x.text} ${y.text}`).toEqual([200, 409])
      const owners = (await t.ctx.db.selectFrom('users').select('id').where('tenant_id', '=', a.tenantId).where('role', '=', 'owner').execute()).length
      expect(owners).toBe(1)
    }
  })

  it('two owners removing each other at the same moment leave one owner', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await createTenant(t)
      const b = await addMember(t, a, 'owner')
      const [x, y] = await Promise.all([a.api.delete(`/tenants/me/members/${b.userId}`), b.api.delete(`/tenants/me/members/${a.userId}`)])
      const statuses = [x.status, y.status].sort()
      expect(statuses[0], `${x.text} ${y.text}`).toBe(204)
      expect([401, 409]).toContain(statuses[1])
      const owners = (await t.ctx.db.selectFrom('users').select('id').where('tenant_id', '=', a.tenantId).where('role', '=', 'owner').execute()).length
      expect(owners).toBe(1)
    }
  })

  it('ownership goes to an admin; the old owner becomes admin', async () => {
    const owner = await createTenant(t)
    const admin = await addMember(t, owner, 'admin')
    const agent = await addMember(t, owner, 'agent')
    expect((await owner.api.post('/tenants/me/transfer-ownership', { user_id: agent.userId })).status).toBe(400)
    expect((await admin.api.post('/tenants/me/transfer-ownership', { user_id: admin.userId })).status).toBe(403)
    const res = await owner.api.post('/tenants/me/transfer-ownership', { user_id: admin.userId })
    expect(res.status, res.text).toBe(200)
    expect(res.body.owner).toMatchObject({ user_id: admin.userId, role: 'owner' })
    expect(res.body.previous_owner).toMatchObject({ user_id: owner.userId, role: 'admin' })
    expect((await owner.api.get('/auth/me')).body.role).toBe('admin')
    expect((await admin.api.get('/auth/me')).body.role).toBe('owner')
    expect((await owner.api.get('/tenants/me/api-keys')).status).toBe(403)
    expect((await admin.api.get('/tenants/me/api-keys')).status).toBe(200)
  })
})

describe('ticket assignment', () => {
  it('agents take tickets, admins assign anyone with ticket work; the inbox filters Mine / Unassigned / one member', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    const other = await addMember(t, owner, 'agent')
    const analyst = await addMember(t, owner, 'analyst')
    const ticket = await openTicket(owner)
    const second = await openTicket(owner)

    const take = await agent.api.patch(`/escalations/${ticket.id}`, { assignee_user_id: agent.userId })
    expect(take.status, take.text).toBe(200)
    expect(take.body).toMatchObject({ assignee_user_id: agent.userId, first_response_at: null })
    // another agent may not take it away, nor give it to someone else
    expect((await other.api.patch(`/escalations/${ticket.id}`, { assignee_user_id: other.userId })).status).toBe(403)
    expect((await agent.api.patch(`/escalations/${second.id}`, { assignee_user_id: other.userId })).status).toBe(403)
    // an analyst does not work on tickets
    expect((await owner.api.patch(`/escalations/${ticket.id}`, { assignee_user_id: analyst.userId })).status).toBe(422)

    const ids = async (api: typeof owner.api, q: string) => (await api.get(`/escalations?${q}`)).body.tickets.map((x: { id: string }) => x.id).sort()
    expect(await ids(agent.api, 'assignee=me')).toEqual([ticket.id])
    expect(await ids(agent.api, 'assignee=unassigned')).toEqual([second.id])
    expect(await ids(owner.api, `assignee=${agent.userId}`)).toEqual([ticket.id])
    expect(await ids(owner.api, 'assignee=me')).toEqual([])
    expect((await ids(owner.api, '')).length).toBe(2)

    // assigned by someone else: a mail to the assignee
    const after = t.smtp.mails.length
    const given = await owner.api.patch(`/escalations/${second.id}`, { assignee_user_id: other.userId })
    expect(given.status, given.text).toBe(200)
    const mail = await t.smtp.waitFor((m) => m.to.includes(other.email) && t.smtp.mails.indexOf(m) >= after)
    expect(mail.subject).toBe(`Ticket ${second.ticket_number} was assigned to you`)
    expect(mail.text).toContain(owner.email)

    // first response time: the first reply or resolution
    const resolved = await other.api.post(`/escalations/${second.id}/resolve`, { resolution_text: 'It ships tomorrow.' })
    expect(resolved.status, resolved.text).toBe(200)
    expect(resolved.body.first_response_at).toEqual(expect.any(String))
    // an agent gives back its own ticket
    const back = await agent.api.patch(`/escalations/${ticket.id}`, { assignee_user_id: null })
    expect(back.body.assignee_user_id).toBeNull()
  })

  it('an agent limited to one bot sees only its tickets, takes one and replies; the owner sees both in the audit log', async () => {
    const owner = await createTenant(t)
    const other = await owner.api.post('/bots', { name: 'Other bot' })
    expect(other.status).toBe(201)
    const mine = await openTicket(owner)
    await openTicket(owner, other.body)
    const agent = await addMember(t, owner, 'agent', { botIds: [owner.bot.id] })
    const inbox = await agent.api.get('/escalations?assignee=unassigned')
    expect(inbox.body.tickets.map((x: { id: string }) => x.id)).toEqual([mine.id])
    expect((await agent.api.patch(`/escalations/${mine.id}`, { assignee_user_id: agent.userId })).status).toBe(200)
    expect((await agent.api.post(`/escalations/${mine.id}/resolve`, { resolution_text: 'On its way.' })).status).toBe(200)
    const log = await owner.api.get(`/tenants/me/audit-log?member=${agent.userId}`)
    expect(log.body.items.map((e: { action: string; item_id: string }) => [e.action, e.item_id])).toEqual([
      ['resolved', mine.id],
      ['assigned', mine.id],
      ['joined', agent.userId],
    ])
  })

  it('no mail when the assignee turned the preference off', async () => {
    const owner = await createTenant(t)
    const quiet = await addMember(t, owner, 'agent')
    const loud = await addMember(t, owner, 'agent')
    const pref = await quiet.api.patch('/auth/me', { notify_on_assignment: false })
    expect(pref.status, pref.text).toBe(200)
    expect(pref.body.notify_on_assignment).toBe(false)
    const one = await openTicket(owner)
    const two = await openTicket(owner)
    expect((await owner.api.patch(`/escalations/${one.id}`, { assignee_user_id: quiet.userId })).status).toBe(200)
    expect((await owner.api.patch(`/escalations/${two.id}`, { assignee_user_id: loud.userId })).status).toBe(200)
    // mails go out in order: once the second is in, the first would have been too
    await t.smtp.waitFor((m) => m.to.includes(loud.email) && m.subject.includes(two.ticket_number))
    await new Promise((r) => setTimeout(r, 300))
    expect(t.smtp.mails.filter((m) => m.to.includes(quiet.email) && /assigned/.test(m.subject))).toEqual([])
  })
})

describe('audit log', () => {
  it('records who did what from where; filters by member, action and date; pages by cursor', async () => {
    const owner = await createTenant(t)
    expect((await t.api().post('/auth/login', { email: owner.email, password: PASSWORD })).status).toBe(200)
    const agent = await addMember(t, owner, 'agent')
    expect((await owner.api.patch(`/tenants/me/members/${agent.userId}`, { role: 'editor' })).status).toBe(200)
    expect((await owner.api.post('/tenants/me/api-keys/rotate')).status).toBe(201)
    expect((await owner.api.post('/bots', { name: 'Audited bot' })).status).toBe(201)
    const form = new FormData()
    form.append('file', new Blob(['# Returns\n\nThirty days.'], { type: 'text/markdown' }), 'returns.md')
    const upload = await owner.api.post('/documents', form)
    expect(upload.status, upload.text).toBe(201)

    const all = await owner.api.get('/tenants/me/audit-log')
    expect(all.status, all.text).toBe(200)
    const actions = all.body.items.map((e: { action: string }) => e.action)
    for (const a of ['signed_in', 'invited', 'joined', 'role_changed', 'rotated_key', 'created']) expect(actions).toContain(a)
    const change = all.body.items.find((e: { action: string }) => e.action === 'role_changed')
    expect(change).toMatchObject({
      actor_user_id: owner.userId,
      actor_email: owner.email,
      item_type: 'member',
      item_id: agent.userId,
      detail: { from: 'agent', to: 'editor' },
    })
    expect(change.ip).toEqual(expect.any(String))
    expect(all.body.items.find((e: { item_type: string }) => e.item_type === 'document')).toMatchObject({
      action: 'created',
      item_id: upload.body.id,
      detail: { filename: 'returns.md' },
    })

    const joined = await owner.api.get(`/tenants/me/audit-log?member=${agent.userId}`)
    expect(joined.body.items.map((e: { action: string }) => e.action)).toEqual(['joined'])
    const rotated = await owner.api.get('/tenants/me/audit-log?action=rotated_key')
    expect(rotated.body.items).toHaveLength(1)
    const future = new Date(t.clock.now().getTime() + 60_000).toISOString()
    expect((await owner.api.get(`/tenants/me/audit-log?from=${encodeURIComponent(future)}`)).body.items).toEqual([])

    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: { body: { items: { id: string }[]; next_cursor: string | null } } = await owner.api.get(
        `/tenants/me/audit-log?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      expect(page.body.items.length).toBeLessThanOrEqual(2)
      seen.push(...page.body.items.map((e) => e.id))
      cursor = page.body.next_cursor
    } while (cursor)
    expect(seen).toEqual(all.body.items.map((e: { id: string }) => e.id))
    expect((await owner.api.get('/tenants/me/audit-log?cursor=nonsense')).status).toBe(400)
    // editors (and agents, analysts) do not read it
    expect((await agent.api.get('/tenants/me/audit-log')).status).toBe(403)
    // append-only
    await expect(t.ctx.db.updateTable('audit_log').set({ action: 'x' }).where('tenant_id', '=', owner.tenantId).execute()).rejects.toThrow()
  })
})

describe('audit retention', () => {
  it('the daily sweep deletes entries older than the retention setting', async () => {
    const owner = await createTenant(t)
    expect((await owner.api.post('/bots', { name: 'Old news' })).status).toBe(201)
    expect((await owner.api.delete('/tenants/privacy/pii-events/retention?retention_days=1')).status).toBe(200)
    t.clock.advance(2 * 86_400_000)
    const login = await t.api().post('/auth/login', { email: owner.email, password: PASSWORD })
    owner.api.withToken(login.body.token)
    await t.ctx.queue.enqueue('audit.retention', {})
    await expect
      .poll(async () => (await owner.api.get('/tenants/me/audit-log')).body.items.map((e: { action: string }) => e.action), { timeout: 10_000 })
      .toEqual(['signed_in'])
  })
})
