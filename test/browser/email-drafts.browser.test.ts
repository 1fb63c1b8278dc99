import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isAnswer, REFUNDS_MD, withDocs } from '../helpers/chat.js'
import { rawMail } from '../helpers/email.js'
import { uniqueEmail, type Tenant } from '../helpers/factories.js'
import { until } from '../helpers/wait.js'
import { expectScreenHealthy, openScreen, screenshot, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'
import { hasChromium } from './harness.js'

/**
 * Issue 52, items 4 and 8, in Chromium at desktop and phone width: an e-mail bot in draft mode leaves its answer in
 * the suggestion panel ("draft, not sent", Insert into reply), never in the thread; the ticket says "E-mail in draft
 * mode"; a visitor's hand-off note is shown at the thread's divider; a shortcut "Refund Time" becomes refund-time.
 */
const suite = hasChromium ? describe : describe.skip
const LIVE = { timeout: 60_000 }
const DRAFT = 'Refunds are processed within 5 business days after we receive the returned item. [1]'
const NOTE = 'I need help with my invoice, it shows the wrong company name'

suite('drafts, notes and shortcuts in the dashboard', { timeout: 300_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant
  let draftTicket = ''
  let noteTicket = ''

  beforeAll(async () => {
    env = await startDashboardEnv({ env: { INBOUND_EMAIL_DOMAIN: 'inbound.test' } })
    tenant = await signedInTenant(env)
    await withDocs(env.t, tenant, { 'refunds.md': REFUNDS_MD })
    env.fake.script((req) => (isAnswer(req as never) ? { text: DRAFT } : undefined))
    const ch = await tenant.api.put(`/bots/${tenant.bot.id}/email`, { enabled: true, mode: 'draft' })
    expect(ch.status, ch.text).toBe(200)
    const from = uniqueEmail('jane')
    const r = await fetch(env.t.url + new URL(ch.body.inbound_url).pathname, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: rawMail({ to: ch.body.inbound_address, from, subject: 'Refund question', body: 'How long do refunds take after you receive the returned item?' }),
    })
    expect(r.status).toBe(202)
    draftTicket = (
      await until(
        'the draft ticket',
        async () => ((await tenant.api.get('/escalations')).body.tickets as { id: string; user_email: string }[]).find((x) => x.user_email === from) ?? null,
        120_000,
      )
    ).id
    // a widget visitor who says why they want a person
    const visitor = env.t.api()
    const bot = tenant.bot.public_id
    const sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id as string
    expect((await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: NOTE })).status).toBe(200)
    noteTicket = ((await tenant.api.get('/escalations')).body.tickets as { id: string; session_id: string }[]).find((x) => x.session_id === sid)!.id
  }, 420_000)
  afterAll(async () => {
    await env?.close()
  })

  for (const viewport of [
    { name: 'desktop', width: 1280, height: 800 },
    { name: 'phone', width: 390, height: 844 },
  ]) {
    it(`the bot's draft waits in the suggestion panel, not in the thread; the note at the divider (${viewport.name})`, async () => {
      const w = await watchedPage(env, { width: viewport.width, height: viewport.height })
      const page = w.page
      await openScreen(page, env, `/tickets/${draftTicket}`, 'Refund question')
      await page.getByText('E-mail in draft mode').filter({ visible: true }).first().waitFor(LIVE)
      const panel = page.getByTestId('bot-draft')
      await panel.getByText('draft, not sent').waitFor(LIVE)
      expect(await panel.textContent()).toContain('5 business days')
      // the thread holds the customer's mail only: no bot message with the draft, no "handed over" notice
      const thread = (await page.locator('section.live-chat ol.thread').textContent()) ?? ''
      expect(thread).toContain('How long do refunds take')
      expect(thread).not.toContain('5 business days')
      expect(thread).not.toMatch(/handed over/i)
      await panel.getByRole('button', { name: 'Insert into reply' }).click()
      expect(await page.locator('.composer textarea').first().inputValue()).toContain('5 business days')
      await screenshot(env, page, `email-draft-${viewport.name}`)
      await expectScreenHealthy(w, `e-mail draft (${viewport.name})`)

      await openScreen(page, env, `/tickets/${noteTicket}`, /.+/)
      await page.locator('.handoff-divider .handoff-note', { hasText: NOTE }).waitFor(LIVE)
      await w.page.close()
    })
  }

  it('a shortcut typed "Refund Time" becomes refund-time and is saved', async () => {
    const w = await watchedPage(env)
    const page = w.page
    await openScreen(page, env, '/settings/saved-replies', 'Saved replies')
    const form = page.getByRole('form', { name: 'New saved reply' })
    await form.getByLabel('Title').fill('Refund time')
    await form.getByLabel('Shortcut').fill('Refund Time')
    await form.getByLabel('Text').fill('Hi {{visitor.name}}, this is {{agent.name}}')
    await form.getByLabel('Title').click()
    expect(await form.getByLabel('Shortcut').inputValue()).toBe('refund-time')
    await form.getByRole('button', { name: 'Add saved reply' }).click()
    await page.getByText('/refund-time').first().waitFor(LIVE)
    await w.page.close()
  })
})
