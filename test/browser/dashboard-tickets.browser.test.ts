import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Tenant } from '../helpers/factories.js'
import { hasChromium } from './harness.js'
import { expectScreenHealthy, openScreen, screenshot, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'

const suite = hasChromium ? describe : describe.skip

suite('dashboard: tickets inbox and ticket detail in Chromium', { timeout: 90_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant

  beforeAll(async () => {
    env = await startDashboardEnv()
    tenant = await signedInTenant(env)
  }, 120_000)
  afterAll(async () => {
    await env?.close()
  })

  it('shows a visitor hand-off in the open inbox without a reload, resolves it, and the reply reaches the chat', async () => {
    const w = await watchedPage(env)
    const { page } = w
    await openScreen(page, env, '/tickets', 'Tickets')
    // the default view: every ticket that needs a person (#39)
    await page.getByText('No ticket needs a person').waitFor()
    // the badge counts the default view, in its words (#39)
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'a person' }).first().textContent()).toMatch(/0\s*tickets need a person/)
    await expectScreenHealthy(w, 'tickets (empty)')

    // A visitor in the widget asks for a human; the inbox, already open, picks it up by itself.
    const bot = tenant.bot.public_id
    const visitor = env.t.api()
    const init = await visitor.post('/widget/session/init', { bot_id: bot })
    expect(init.status, init.text).toBe(200)
    const sid = init.body.session_id as string
    const note = 'Please help with invoice <b>42</b> <img src=x onerror="window.__xss=1">'
    const esc = await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: note, trigger: 'user_request' })
    expect(esc.status, esc.text).toBe(200)
    const number = esc.body.ticket_number as string
    expect(number).toMatch(/^ESC-\d{4}$/)

    const link = page.getByRole('link', { name: number })
    await link.waitFor({ timeout: 15_000 })
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'a person' }).first().textContent()).toMatch(/1\s*ticket needs a person/)
    const row = page.locator('.queue-item', { has: link })
    await expect.poll(() => row.textContent()).toMatch(/Visitor asked for a human/)
    await expect.poll(() => row.textContent()).toMatch(/Open/)
    await expectScreenHealthy(w, 'tickets (one open)')

    await link.click()
    await page.getByRole('heading', { level: 1, name: `Ticket ${number}` }).waitFor()
    // Visitor text is plain text, never HTML.
    await page.getByText('invoice <b>42</b>', { exact: false }).first().waitFor()
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined()
    expect(await page.locator('.content img').count()).toBe(0)
    await page.getByRole('heading', { name: 'Retrieval evidence' }).waitFor()
    await page.getByRole('heading', { name: 'Visitor', exact: true }).waitFor()
    await expectScreenHealthy(w, 'ticket detail (open)')
    // a ticket becomes an evaluation case in one click
    await page.getByRole('button', { name: /Make a test from this conversation/ }).click()
    await page.getByRole('status').filter({ hasText: 'Test created.' }).waitFor()
    const cases = await tenant.api.get('/evals/cases')
    expect(cases.body.items.map((c: { question: string }) => c.question).join(' ')).toContain('invoice')

    // An empty reply is refused by the service, shown next to the field.
    await page.getByRole('button', { name: 'Send reply and resolve' }).click()
    await page.locator('.field-error').first().waitFor()
    const reply = 'Hello! Invoice 42 is corrected; the new one is in your account.'
    await page.getByLabel('Reply to the visitor').fill(reply)
    await page.getByRole('button', { name: 'Send reply and resolve' }).click()
    await page.getByRole('heading', { name: 'Resolution' }).waitFor()
    await page.locator('.resolution', { hasText: reply }).waitFor()
    await page.locator('.ticket-badges', { hasText: 'Resolved' }).waitFor()
    await expectScreenHealthy(w, 'ticket detail (resolved)')

    const api = await tenant.api.get('/escalations?status=resolved')
    expect(api.body.tickets.map((t: { ticket_number: string }) => t.ticket_number)).toContain(number)
    const history = await visitor.get(`/widget/history?bot_id=${bot}&session_id=${sid}`)
    expect(history.status, history.text).toBe(200)
    const last = history.body.messages.at(-1)
    expect(last).toMatchObject({ content: reply, from_operator: true })

    // Back in the inbox: no open ticket, the resolved one under "Resolved".
    await openScreen(page, env, '/tickets', 'Tickets')
    await page.getByText('No ticket needs a person').waitFor()
    await page.getByLabel('Status').selectOption('resolved')
    await page.getByRole('link', { name: number }).waitFor()
    await page.getByLabel('Priority').selectOption('critical')
    await page.getByText('No tickets with this priority').waitFor()
    await expectScreenHealthy(w, 'tickets (resolved filter)')

    // The visitor asks for a person again the same day: the ticket reopens, marked so, its earlier reply shown.
    const again = await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: 'Still wrong, sorry', trigger: 'user_request' })
    expect(again.status, again.text).toBe(200)
    await page.getByLabel('Priority').selectOption('all')
    await page.getByLabel('Status').selectOption('open')
    const reopenedRow = page.locator('.queue-item', { has: page.getByRole('link', { name: number }) })
    await expect.poll(() => reopenedRow.textContent(), { timeout: 15_000 }).toMatch(/Reopened/)
    await screenshot(env, page, 'tickets-reopened')
    await page.getByRole('link', { name: number }).click()
    await page.locator('.ticket-badges', { hasText: 'Reopened' }).waitFor()
    await page.getByText('The visitor asked for help again after this earlier resolution').waitFor()
    await expectScreenHealthy(w, 'ticket detail (reopened)')
    await screenshot(env, page, 'ticket-reopened')
    await page.close()
  })

  it('shows the unredacted question only on request, and deletes it for good', async () => {
    const r = await env.t
      .api()
      .withApiKey(tenant.apiKey)
      .post('/chat', { question: 'How do I change my delivery address? Call me on +49 170 1234567', bot_public_id: tenant.bot.public_id })
    expect(r.status, r.text).toBe(200)
    const number = r.body.ticket_number as string
    expect(number).toMatch(/^ESC-\d{4}$/)
    const w = await watchedPage(env)
    const { page } = w
    page.on('dialog', (d) => void d.accept())
    await openScreen(page, env, '/tickets', 'Tickets')
    await page.getByRole('link', { name: number }).click()
    await page.getByRole('heading', { level: 1, name: `Ticket ${number}` }).waitFor()
    await page.getByText('Call me on [PHONE]').first().waitFor()
    expect(await page.locator('.content').textContent()).not.toContain('1234567')
    await page.getByLabel('Show original').check()
    await page.getByText('Call me on +49 170 1234567').waitFor()
    await expectScreenHealthy(w, 'ticket detail (original shown)')
    await page.getByRole('button', { name: 'Delete original text' }).click()
    await page.getByText(/Original text deleted/).waitFor()
    await expect.poll(() => page.getByLabel('Show original').count()).toBe(0)
    expect(await page.locator('.content').textContent()).not.toContain('1234567')
    const after = await tenant.api.get(`/escalations/${page.url().split('/').pop()}?include_original=true`)
    expect(after.body).toMatchObject({ primary_question_original: null, primary_question_original_available: false })
    await page.close()
  })

  it('shows a not-found ticket in words', async () => {
    const w = await watchedPage(env)
    await w.page.goto(`${env.t.url}/app/tickets/00000000-0000-4000-8000-000000000000`)
    await w.page
      .getByRole('alert')
      .filter({ hasText: /not found|no ticket|does not exist/i })
      .waitFor({ timeout: 15_000 })
    await w.page.close()
  })
})
