import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REFUNDS_MD, withDocs } from '../helpers/chat.js'
import type { Tenant } from '../helpers/factories.js'
import {
  expectAccessible,
  expectScreenHealthy,
  openScreen,
  screenshot,
  signedInTenant,
  startDashboardEnv,
  watchedPage,
  type DashboardEnv,
} from './dashboard-harness.js'
import { hasChromium } from './harness.js'

/**
 * The inbox an agent lives in (#39), in Chromium: the ticket page is one thread (the chat with the bot, the
 * "Handed to the team" divider, the live messages and the internal notes in time order), also at phone width;
 * the queue row shows the visitor's note; Conversations searches; Settings has the routing switches; Insights
 * shows the queue and the per-agent figures.
 */
const suite = hasChromium ? describe : describe.skip
const LIVE = { timeout: 20_000 }

suite('inbox: one thread, queue rows, search, routing and queue figures in Chromium', { timeout: 300_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant
  let ticket: { id: string; ticket_number: string }
  let sid: string

  async function visitorSays(bot: string, session: string, message: string) {
    const res = await fetch(`${env.t.url}/widget/chat?bot_id=${bot}&session_id=${session}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.78' },
      body: JSON.stringify({ message }),
    })
    expect(res.status).toBe(200)
    await res.text()
  }

  beforeAll(async () => {
    env = await startDashboardEnv()
    tenant = await signedInTenant(env)
    await withDocs(env.t, tenant, { 'refunds.md': REFUNDS_MD })
    // a conversation with the bot, a hand-off with a note, then the team and the visitor live
    const bot = tenant.bot.public_id
    const visitor = env.t.api()
    sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id
    await visitorSays(bot, sid, 'How long do refunds take?')
    const history = await visitor.get(`/widget/history?bot_id=${bot}&session_id=${sid}`)
    expect(history.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])
    const esc = await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: 'Still no refund after two weeks' })
    expect(esc.status, esc.text).toBe(200)
    const list = await tenant.api.get('/escalations')
    ticket = list.body.tickets.find((x: { session_id: string }) => x.session_id === sid)
    expect((await tenant.api.patch(`/escalations/${ticket.id}`, { assignee_user_id: tenant.userId })).status).toBe(200)
    expect((await tenant.api.post(`/escalations/${ticket.id}/messages`, { content: 'Checking your refund now.' })).status).toBe(201)
    expect((await tenant.api.post(`/escalations/${ticket.id}/messages`, { content: 'Bank transfer stuck since Monday', internal: true })).status).toBe(201)
    await visitorSays(bot, sid, 'Thank you, I will wait here.')
  }, 420_000)
  afterAll(async () => {
    await env?.close()
  })

  for (const viewport of [
    { name: 'desktop', width: 1280, height: 800 },
    { name: 'phone', width: 390, height: 844 },
  ]) {
    it(`the ticket page is one thread: bot messages, the divider, live messages and a note in time order (${viewport.name})`, async () => {
      const w = await watchedPage(env, { width: viewport.width, height: viewport.height })
      const page = w.page
      await openScreen(page, env, `/tickets/${ticket.id}`, `Ticket ${ticket.ticket_number}`)
      const thread = page.locator('section.live-chat ol.thread')
      await thread.locator('.msg-user', { hasText: 'I will wait here' }).waitFor(LIVE)
      await screenshot(env, page, `ticket-thread-${viewport.name}`)
      const items = await thread
        .locator(':scope > li')
        .evaluateAll((lis) => lis.map((li) => ({ cls: li.className, kind: li.getAttribute('data-kind'), text: li.textContent ?? '' })))
      const at = (pred: (x: (typeof items)[number]) => boolean, what: string) => {
        const i = items.findIndex(pred)
        expect(i, `${what} in ${JSON.stringify(items.map((x) => x.text.slice(0, 40)))}`).toBeGreaterThanOrEqual(0)
        return i
      }
      const question = at((x) => x.kind === 'user' && x.text.includes('How long do refunds take?'), 'the question to the bot')
      const answer = at((x) => x.kind === 'assistant', 'the bot answer')
      const divider = at((x) => x.cls.includes('handoff-divider'), 'the hand-off divider')
      const reply = at((x) => x.kind === 'operator' && x.text.includes('Checking your refund now.'), 'the operator reply')
      const note = at((x) => x.kind === 'note' && x.text.includes('Bank transfer stuck'), 'the internal note')
      const thanks = at((x) => x.kind === 'user' && x.text.includes('I will wait here'), 'the visitor after the hand-off')
      expect([question, answer, divider, reply, note, thanks]).toEqual([...[question, answer, divider, reply, note, thanks]].sort((a, b) => a - b))
      expect(items[divider]!.text).toMatch(/Handed to the team/)
      // the note says it is internal, and only one divider
      expect(items[note]!.text).toMatch(/Internal note/)
      expect(items.filter((x) => x.cls.includes('handoff-divider'))).toHaveLength(1)
      // the thread comes first: on a phone above the visitor card; at 1280 px the visitor card is beside it (#52, three panes)
      const threadBox = await thread.evaluate((el) => el.getBoundingClientRect().toJSON() as DOMRect)
      const visitorBox = await page.getByRole('heading', { name: 'Visitor', exact: true }).evaluate((el) => el.getBoundingClientRect().toJSON() as DOMRect)
      if (viewport.name === 'phone') expect(threadBox.top).toBeLessThan(visitorBox.top)
      else expect(visitorBox.left).toBeGreaterThanOrEqual(threadBox.right)
      // the old transcript at the bottom is gone: the visitor's question appears once in the conversation
      expect(await page.locator('ol.transcript').count()).toBe(1)
      if (viewport.name === 'phone') {
        const width = await page.evaluate(() => document.documentElement.scrollWidth)
        expect(width, 'the ticket page at 390 px').toBeLessThanOrEqual(390)
        await expectAccessible(page, 'ticket thread (phone)')
        expect(w.errors).toEqual([])
      } else await expectScreenHealthy(w, 'ticket thread')
      await page.close()
    })
  }

  it("the queue row shows the visitor's note; a gone visitor is marked on the row and the ticket", async () => {
    await env.t.ctx.db.updateTable('escalation_tickets').set({ visitor_gone: true }).where('id', '=', ticket.id).execute()
    await env.t.ctx.db.updateTable('chat_sessions').set({ visitor_gone: true }).where('id', '=', sid).execute()
    const w = await watchedPage(env)
    const page = w.page
    await openScreen(page, env, '/tickets', 'Tickets')
    await page.getByRole('combobox', { name: 'Status' }).selectOption('all')
    const row = page.locator('.queue-item', { has: page.getByRole('link', { name: ticket.ticket_number }) })
    await expect.poll(() => row.textContent(), LIVE).toMatch(/Note: Still no refund after two weeks/)
    expect(await row.textContent()).not.toMatch(/How long do refunds take/)
    expect(await row.textContent()).toMatch(/Visitor left/)
    await expectScreenHealthy(w, 'tickets with a note')
    await page.getByRole('link', { name: ticket.ticket_number }).click()
    await page.locator('.ticket-badges', { hasText: 'Visitor left' }).waitFor(LIVE)
    await page.close()
  })

  it('Conversations finds a conversation by its words and says when nothing matches', async () => {
    const w = await watchedPage(env)
    const page = w.page
    await openScreen(page, env, '/conversations', 'Conversations')
    const box = page.getByLabel('Search conversations')
    await box.fill('stuck transfer nowhere')
    await page.getByText('No conversation matches').waitFor(LIVE)
    await box.fill('wait here')
    await page.getByRole('status').filter({ hasText: '1 conversation found' }).waitFor(LIVE)
    await page.locator('tr', { hasText: 'Visitor left' }).waitFor(LIVE)
    await expectScreenHealthy(w, 'conversations search')
    await page.close()
  })

  it('Settings turns auto-assignment on with a capacity; a capacity out of range cannot be saved', async () => {
    const w = await watchedPage(env)
    const page = w.page
    await openScreen(page, env, '/settings', 'Settings')
    const routing = page.getByRole('region', { name: 'Routing' })
    await routing.getByLabel('Assign waiting conversations automatically').check()
    const cap = routing.getByLabel('Conversations per agent at most')
    await cap.fill('0')
    expect(await routing.getByRole('button', { name: 'Save routing' }).isDisabled()).toBe(true)
    await cap.fill('5')
    await routing.getByRole('button', { name: 'Save routing' }).click()
    await page.getByText('Auto-assignment on: up to 5 conversations per agent').waitFor(LIVE)
    const saved = await tenant.api.get('/tenants/me/support-settings')
    expect(saved.body).toMatchObject({ auto_assign: true, agent_capacity: 5 })
    await expectScreenHealthy(w, 'settings routing')
    await page.close()
  })

  it('Insights shows the queue wait, abandoned and the per-agent table', async () => {
    const w = await watchedPage(env)
    const page = w.page
    await openScreen(page, env, '/insights', 'Insights')
    const queue = page.locator('section', { has: page.getByRole('heading', { name: 'Queue and agents' }) })
    await queue.getByText('Queue wait (median)').waitFor(LIVE)
    await queue.getByText('Abandoned in the queue').waitFor(LIVE)
    const table = queue.getByRole('region', { name: 'Per agent' })
    await table.locator('tr', { hasText: tenant.email }).waitFor(LIVE)
    const cells = await table.locator('tr', { hasText: tenant.email }).locator('td, th').allTextContents()
    // agent, conversations, resolved, first reply p50 ...
    expect(cells.slice(0, 3)).toEqual([tenant.email, '1', '0'])
    await expectScreenHealthy(w, 'insights queue')
    await page.close()
  })
})
