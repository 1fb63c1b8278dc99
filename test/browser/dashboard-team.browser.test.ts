import type { BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail, type Tenant } from '../helpers/factories.js'
import { hasChromium } from './harness.js'
import { expectScreenHealthy, openScreen, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'

const suite = hasChromium ? describe : describe.skip

/** A visitor of this bot asks for a human; the ticket's number. */
async function handOff(env: DashboardEnv, botPublicId: string, note: string): Promise<string> {
  const visitor = env.t.api()
  const init = await visitor.post('/widget/session/init', { bot_id: botPublicId })
  expect(init.status, init.text).toBe(200)
  const esc = await visitor.post(`/widget/escalate?bot_id=${botPublicId}&session_id=${init.body.session_id}`, { user_note: note, trigger: 'user_request' })
  expect(esc.status, esc.text).toBe(200)
  return esc.body.ticket_number as string
}

suite('dashboard: team workspace in Chromium (members, invitation, roles, assignment, audit log)', { timeout: 120_000 }, () => {
  let env: DashboardEnv
  let owner: Tenant
  let agentContext: BrowserContext
  const agentEmail = uniqueEmail('agent')
  const botName = 'Shop bot'

  beforeAll(async () => {
    env = await startDashboardEnv({}, { isolated: true })
    owner = await signedInTenant(env)
    agentContext = await env.browser.newContext!()
  }, 120_000)
  afterAll(async () => {
    await env?.close()
  })

  it('owner invites an agent limited to one bot; the agent joins from the mail, sees only tickets and conversations of that bot, takes one and replies; the owner reads both in the audit log', async () => {
    // Two bots, a ticket in each: the agent will be limited to the first.
    const renamed = await owner.api.patch(`/bots/${owner.bot.id}`, { name: botName })
    expect(renamed.status, renamed.text).toBe(200)
    const other = await owner.api.post('/bots', { name: 'Other bot' })
    expect(other.status, other.text).toBe(201)
    const mine = await handOff(env, owner.bot.public_id, 'My parcel never arrived')
    const foreign = await handOff(env, other.body.public_id, 'Question for the other bot')

    // The owner invites.
    const o = await watchedPage(env)
    o.page.on('dialog', (d) => void d.accept())
    await openScreen(o.page, env, '/members', 'Members')
    await o.page.getByRole('cell', { name: `${owner.email} (you)` }).waitFor()
    await expectScreenHealthy(o, 'members')
    await o.page.getByLabel('E-mail').fill(agentEmail)
    await o.page.getByLabel('Role').selectOption('agent')
    await o.page.getByLabel('All bots, also future ones').uncheck()
    await o.page.getByLabel(botName).check()
    await o.page.getByRole('button', { name: 'Send invitation' }).click()
    const invRow = o.page.locator('tr', { hasText: agentEmail })
    await expect.poll(() => invRow.textContent()).toMatch(/Pending/)
    await expect.poll(() => invRow.textContent()).toContain(botName)
    await expectScreenHealthy(o, 'members (invitation pending)')

    // Inviting the owner's own address (it has a workspace) is refused in words.
    await o.page.getByLabel('E-mail').fill(owner.email)
    await o.page.getByRole('button', { name: 'Send invitation' }).click()
    await o.page.locator('.field-error').first().waitFor()

    // The agent opens the mailed link in a browser of their own.
    const mail = await env.t.smtp.waitFor((m) => m.to.includes(agentEmail))
    const link = /https?:\/\/\S+\/accept-invitation\?token=[\w%.-]+/.exec(mail.text)?.[0]
    expect(link, 'the invitation mail links to /accept-invitation').toBeTruthy()
    const a = await watchedPage(env, undefined, agentContext)
    await a.page.goto(`${env.t.url}${new URL(link!).pathname}${new URL(link!).search}`)
    await a.page.getByRole('heading', { level: 1, name: 'Join your team' }).waitFor()
    await expectScreenHealthy(a, 'accept invitation')
    await a.page.getByLabel('Password').fill(PASSWORD)
    await a.page.getByRole('button', { name: 'Join the workspace' }).click()

    // Signed in, the agent starts at the tickets and the menu holds only what an agent may do.
    await a.page.getByRole('heading', { level: 1, name: 'Tickets' }).waitFor({ timeout: 15_000 })
    const menu = a.page.getByRole('navigation', { name: 'Main' }).getByRole('link')
    expect(await menu.allTextContents()).toEqual(['Conversations', 'Tickets', 'Your profile', 'Saved replies'])
    await a.page.getByRole('link', { name: mine }).waitFor({ timeout: 15_000 })
    expect(await a.page.getByRole('link', { name: foreign }).count(), 'the other bot’s ticket is out of scope').toBe(0)
    await expectScreenHealthy(a, 'tickets (agent)')

    // Takes the ticket and replies.
    await a.page.getByRole('link', { name: mine }).click()
    await a.page.getByRole('heading', { level: 1, name: `Ticket ${mine}` }).waitFor()
    await a.page.getByRole('button', { name: 'Take' }).click()
    await a.page
      .locator('.card', { has: a.page.getByRole('heading', { name: 'Assignee' }) })
      .getByText('You', { exact: true })
      .waitFor()
    // focus moves in the frame after the refetched ticket shows "You": polled, not read once
    await expect.poll(() => a.page.evaluate(() => document.activeElement?.id)).toBe('assignee-heading')
    await expectScreenHealthy(a, 'ticket detail (agent, taken)')
    await a.page.getByLabel('Reply to the visitor').fill('Your parcel is on its way again; sorry for the wait.')
    await a.page.getByRole('button', { name: 'Send reply and resolve' }).click()
    await a.page.getByRole('heading', { name: 'Resolution' }).waitFor()

    // "Mine" in the inbox holds it.
    await openScreen(a.page, env, '/tickets', 'Tickets')
    await a.page.getByLabel('Status').selectOption('all')
    await a.page.getByLabel('Assignee').selectOption('me')
    await a.page.getByRole('link', { name: mine }).waitFor()
    // listed under Assignee: me is what "Mine" means (the queue pane's lines name the assignee further down)

    await openScreen(a.page, env, '/conversations', 'Conversations')
    await expectScreenHealthy(a, 'conversations (agent)')

    // A screen the role may not use says so.
    await openScreen(a.page, env, '/members', 'Not available for your role')
    await a.page.getByText('Your role (agent) may not manage members.').waitFor()
    await expectScreenHealthy(a, 'members (agent: not allowed)')
    await a.page.close()

    // The owner sees the new member, the assignment in the inbox, and the agent's actions in the audit log.
    await openScreen(o.page, env, '/members', 'Members')
    await expect.poll(() => o.page.locator('tr', { hasText: agentEmail }).first().textContent()).toMatch(/Agent/)
    await openScreen(o.page, env, '/tickets', 'Tickets')
    await o.page.getByLabel('Status').selectOption('all')
    // the agent's ticket is listed for the owner too (its assignment was checked from the agent's side: Assignee: me)
    await o.page.getByRole('link', { name: mine }).waitFor()
    await o.page.getByLabel('Assignee').selectOption('unassigned')
    await o.page.getByRole('link', { name: foreign }).waitFor()
    expect(await o.page.getByRole('link', { name: mine }).count()).toBe(0)
    await expectScreenHealthy(o, 'tickets (owner, unassigned)')

    await openScreen(o.page, env, '/audit-log', 'Audit log')
    await o.page.getByLabel('Member').selectOption({ label: agentEmail })
    const rows = o.page.locator('tbody tr', { hasText: agentEmail })
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(2)
    const text = (await rows.allTextContents()).join('\n')
    expect(text).toContain('Assigned a ticket')
    expect(text).toContain('Resolved a ticket')
    await expectScreenHealthy(o, 'audit log (agent filter)')
    await o.page.close()
  })

  it('the last owner cannot step down (409 in words); the owner changes a role and transfers ownership to an admin, after which the settings keys are owner-only', async () => {
    const o = await watchedPage(env)
    o.page.on('dialog', (d) => void d.accept())
    await openScreen(o.page, env, '/members', 'Members')
    // The only owner cannot step down: the service's 409 is shown in its words.
    await o.page.getByRole('button', { name: `Edit ${owner.email}` }).click()
    await o.page
      .getByRole('region', { name: `Edit ${owner.email}` })
      .getByLabel('Role')
      .selectOption('admin')
    await o.page.getByRole('button', { name: 'Save changes' }).click()
    await o.page.getByRole('alert').filter({ hasText: /owner/i }).waitFor()
    expect(await o.page.getByRole('button', { name: `Remove ${owner.email}` }).count(), 'no removing oneself').toBe(0)
    await o.page.getByRole('button', { name: 'Cancel' }).click()
    // The agent becomes an admin.
    await o.page.getByRole('button', { name: `Edit ${agentEmail}` }).click()
    await o.page.getByRole('heading', { name: `Edit ${agentEmail}` }).waitFor()
    await expect.poll(() => o.page.evaluate(() => document.activeElement?.id)).toBe('member-editor-heading')
    await o.page
      .getByRole('region', { name: `Edit ${agentEmail}` })
      .getByLabel('Role')
      .selectOption('admin')
    await o.page.getByRole('button', { name: 'Save changes' }).click()
    await expect.poll(() => o.page.locator('tr', { hasText: agentEmail }).first().textContent()).toMatch(/Admin/)
    await expect.poll(() => o.page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(`Edit ${agentEmail}`)
    await expectScreenHealthy(o, 'members (role changed)')

    // Ownership goes to the admin; the old owner is an admin now, and the menus follow.
    await o.page.getByLabel('New owner').selectOption({ label: agentEmail })
    await o.page.getByRole('button', { name: 'Transfer ownership' }).click()
    await expect.poll(() => o.page.locator('tr', { hasText: agentEmail }).first().textContent()).toMatch(/Owner/)
    await expect.poll(() => o.page.locator('tr', { hasText: owner.email }).first().textContent()).toMatch(/Admin/)
    await expect.poll(() => o.page.getByRole('heading', { name: 'Transfer ownership' }).count()).toBe(0)

    // An admin may not edit an owner: the last owner cannot be removed from here.
    expect(await o.page.getByRole('button', { name: `Edit ${agentEmail}` }).count()).toBe(0)
    await openScreen(o.page, env, '/settings', 'Settings')
    await o.page.getByText('Only the workspace owner creates, rotates and revokes API keys.', { exact: false }).waitFor()
    // the signing secret's status is an admin's to see (is identity verification on?), creating or rotating it is not
    await o.page.getByText('Identified chats (7 days)').waitFor()
    await o.page.getByText('Only the workspace owner creates and rotates the signing secret.', { exact: false }).waitFor()
    expect(await o.page.getByRole('button', { name: /signing secret/ }).count()).toBe(0)
    await expectScreenHealthy(o, 'settings (admin)')
    await o.page.close()
  })
  it('resends and revokes an invitation, assigns a ticket from the picker, and pages and filters the audit log', async () => {
    // After the transfer above the first account is an admin: it still manages members and assigns tickets.
    const o = await watchedPage(env)
    o.page.on('dialog', (d) => void d.accept())
    const invitee = uniqueEmail('editor')
    await openScreen(o.page, env, '/members', 'Members')
    await o.page.getByLabel('E-mail').fill(invitee)
    await o.page.getByLabel('Role').first().selectOption('editor')
    await o.page.getByRole('button', { name: 'Send invitation' }).click()
    await o.page.getByRole('button', { name: `Resend the invitation to ${invitee}` }).click()
    await o.page.getByText(`Invitation sent again to ${invitee}`).waitFor()
    await expect.poll(() => env.t.smtp.mails.filter((m) => m.to.includes(invitee)).length).toBe(2)
    await o.page.getByRole('button', { name: `Revoke the invitation to ${invitee}` }).click()
    await expect.poll(() => o.page.evaluate(() => document.activeElement?.id)).toBe('invitations-heading')
    await expect.poll(() => o.page.locator('tr', { hasText: invitee }).count()).toBe(0)
    await o.page.getByLabel('Show accepted and revoked invitations too').check()
    await expect.poll(() => o.page.locator('tr', { hasText: invitee }).textContent()).toMatch(/Revoked/)
    await expectScreenHealthy(o, 'members (invitation revoked)')

    // A new hand-off, given to the other member with the picker.
    const number = await handOff(env, owner.bot.public_id, 'Where is my refund?')
    await openScreen(o.page, env, '/tickets', 'Tickets')
    await o.page.getByRole('link', { name: number }).click()
    await o.page.getByRole('heading', { level: 1, name: `Ticket ${number}` }).waitFor()
    await o.page.getByLabel('Assign to').selectOption({ label: agentEmail })
    await o.page.getByRole('button', { name: 'Assign', exact: true }).click()
    await o.page
      .locator('.card', { has: o.page.getByRole('heading', { name: 'Assignee' }) })
      .getByText(agentEmail)
      .first()
      .waitFor()
    await expectScreenHealthy(o, 'ticket detail (admin, assigned)')

    // Enough entries for a second page: 60 bot edits.
    for (let i = 0; i < 60; i++) {
      const r = await owner.api.patch(`/bots/${owner.bot.id}`, { name: `${botName} ${i}` })
      expect(r.status, r.text).toBe(200)
    }
    await openScreen(o.page, env, '/audit-log', 'Audit log')
    const rows = o.page.locator('tbody tr')
    await expect.poll(() => rows.count()).toBe(50)
    await o.page.getByRole('button', { name: 'Load more' }).click()
    await expect.poll(() => rows.count()).toBeGreaterThan(50)
    await expect.poll(() => o.page.evaluate(() => document.activeElement?.id)).toBe('audit-row-50')
    await o.page.getByLabel('Action').selectOption('invitation_revoked')
    await expect.poll(() => rows.count()).toBe(1)
    await expect.poll(() => rows.first().textContent()).toContain(invitee)
    const tomorrow = new Date(Date.now() + 86_400_000)
    const day = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}`
    await o.page.getByLabel('From').fill(day)
    await o.page.getByText('No entries match these filters').waitFor()
    await expectScreenHealthy(o, 'audit log (filtered, empty)')
    await o.page.close()
  })
})
