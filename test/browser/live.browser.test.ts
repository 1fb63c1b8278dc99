import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Tenant } from '../helpers/factories.js'
import { expectAccessible, openScreen, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'
import { hasChromium, hostPageHtml, serveHostPage, type HostPage } from './harness.js'

/**
 * The live conversation end to end, with both sides open at once: a visitor in the widget on a tenant's
 * page asks for a person; an operator answers from the ticket page of the dashboard. Nothing is reloaded:
 * every message and every change of owner travels over the two event streams.
 */
const suite = hasChromium ? describe : describe.skip

/** A loaded CI machine is slow: every wait is a poll with room to spare, never a fixed sleep. */
const LIVE = { timeout: 20_000 }

suite('live conversation: widget and dashboard in Chromium', { timeout: 180_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant
  let site: HostPage
  const W = '[data-support-chat]'

  beforeAll(async () => {
    env = await startDashboardEnv()
    tenant = await signedInTenant(env)
    site = await serveHostPage(() => hostPageHtml({ embedSrc: `${env.t.url}/embed.js`, botId: tenant.bot.public_id }))
  }, 120_000)
  afterAll(async () => {
    await site?.close()
    await env?.close()
  })

  const widgetLog = (visitor: Page) => visitor.locator(`${W} >> .log`)

  it('an operator takes over from the ticket page and the visitor sees every step live', async () => {
    // The visitor asks for a person from the widget.
    const visitor = await env.browser.context.newPage()
    visitor.on('pageerror', (e) => console.warn('widget page error:', e.message))
    await visitor.goto(site.url)
    await visitor.locator(`${W} >> .launcher`).click()
    await visitor.locator(`${W} >> button.human`).click()
    await visitor.locator(`${W} >> .escalate textarea`).fill('My order never arrived')
    await visitor.locator(`${W} >> .escalate .btn:not(.ghost)`).click()
    await visitor.locator(`${W} >> .system`, { hasText: /ESC-\d{4}/ }).waitFor(LIVE)
    await visitor.locator(`${W} >> .system`, { hasText: 'Waiting for a person' }).first().waitFor(LIVE)

    const list = await tenant.api.get('/escalations')
    expect(list.status, list.text).toBe(200)
    const ticket = list.body.tickets[0] as { id: string; ticket_number: string; owner: string }
    expect(ticket.owner).toBe('queue')

    // The operator opens the ticket: the conversation waits for a person.
    const w = await watchedPage(env)
    const op = w.page
    await openScreen(op, env, `/tickets/${ticket.id}`, `Ticket ${ticket.ticket_number}`)
    const chat = op.locator('section.live-chat')
    await chat.getByText('Waiting', { exact: true }).waitFor(LIVE)
    await expectAccessible(op, 'ticket live chat')

    // Operator typing shows in the widget; the message arrives without a reload, signed with the name.
    const field = chat.getByLabel('Message to the visitor')
    await field.fill('Hello, I am looking into your order now.')
    await expect.poll(() => visitor.locator(`${W} >> .typing`).isVisible(), LIVE).toBe(true)
    await chat.getByRole('button', { name: 'Send', exact: true }).click()
    const fromOperator = visitor.locator(`${W} >> .msg.operator`, { hasText: 'looking into your order' })
    await fromOperator.waitFor(LIVE)
    expect(await fromOperator.locator('.who').textContent()).toMatch(/\(support\)$/)
    await visitor.locator(`${W} >> .system`, { hasText: 'joined the conversation' }).waitFor(LIVE)
    await expect.poll(() => visitor.locator(`${W} >> .typing`).isVisible(), LIVE).toBe(false)
    await chat.getByText(/^With /).waitFor(LIVE)

    // The visitor types (the team sees it) and replies: delivered, no bot answer, on the ticket page live.
    const input = visitor.locator(`${W} >> form textarea`)
    await input.fill('Thanks! It is order 1234.')
    await chat.getByText('The visitor is typing…').waitFor(LIVE)
    await input.press('Enter')
    await visitor.locator(`${W} >> .msg.user.sent`, { hasText: 'order 1234' }).waitFor(LIVE)
    await chat.locator('.msg-user', { hasText: 'It is order 1234.' }).waitFor(LIVE)
    expect(await visitor.locator(`${W} >> .msg.assistant .stage`).count()).toBe(0)

    // An internal note stays with the team.
    await chat.getByLabel('Internal note').check()
    await chat.getByLabel('Note for your team').fill('Customer sounds upset: check the courier')
    await chat.getByRole('button', { name: 'Add note' }).click()
    const note = chat.locator('.msg-note', { hasText: 'check the courier' })
    await note.waitFor(LIVE)
    expect(await note.textContent()).toMatch(/only your team sees this/i)

    // Back to the bot: the widget says so; the note never reached it (the stream is in order).
    await chat.getByRole('button', { name: 'Return to bot' }).click()
    await visitor.locator(`${W} >> .system`, { hasText: 'You are back with the assistant' }).waitFor(LIVE)
    await chat.getByText('Bot', { exact: true }).waitFor(LIVE)
    expect(await widgetLog(visitor).textContent()).not.toContain('courier')
    expect(w.errors, 'console errors on the ticket page').toEqual([])
    await visitor.close()
    await op.close()
  })
})
