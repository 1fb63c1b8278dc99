import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import type { Tenant } from '../helpers/factories.js'
import { expectAccessible, openScreen, screenshot, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'
import { hasChromium } from './harness.js'

/**
 * The agent inbox in three panes (issue 52, item 10), in Chromium: at 1280 px the queue, the open conversation and
 * the customer/ticket details side by side with no sideways scroll; j/k and the arrows move from ticket to ticket
 * without leaving the inbox, r puts the cursor in the reply (where j is a letter), e resolves, ? shows the keys;
 * viewing leaves a ticket open; the visitor who asked for a person is above the automatic hand-off; "Translate
 * into …" only on a non-English ticket; returning to the bot offers resolving. At 390 px: the list, then the
 * ticket with a way back.
 */
const suite = hasChromium ? describe : describe.skip
const LIVE = { timeout: 20_000 }

type Row = { id: string; session_id: string; ticket_number: string; trigger: string; status: string; language: string | null }

suite('inbox: three panes and keyboard in Chromium', { timeout: 300_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant
  let auto: string
  const asked: Record<'en' | 'de', Row> = {} as never

  async function handOff(locale: 'en' | 'de', note: string): Promise<Row> {
    const visitor = env.t.api()
    const bot = tenant.bot.public_id
    const sid = (await visitor.post('/widget/session/init', { bot_id: bot, locale })).body.session_id as string
    const esc = await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: note, trigger: 'user_request' })
    expect(esc.status, esc.text).toBe(200)
    const list = await tenant.api.get('/escalations')
    return list.body.tickets.find((x: { session_id: string }) => x.session_id === sid)
  }
  const ticket = async (id: string) => (await tenant.api.get(`/escalations/${id}`)).body as Row

  beforeAll(async () => {
    env = await startDashboardEnv()
    tenant = await signedInTenant(env)
    // an automatic hand-off first (no knowledge yet), then two visitors who asked for a person
    const r = await env.t
      .api()
      .withApiKey(tenant.apiKey)
      .post('/chat', { question: 'How do I export my invoices to a spreadsheet?', bot_public_id: tenant.bot.public_id })
    expect(r.status, r.text).toBe(200)
    auto = r.body.ticket_number
    asked.en = await handOff('en', 'My parcel never arrived in Lisbon')
    asked.de = await handOff('de', 'Meine Rechnung zeigt den falschen Firmennamen')
    // the German visitor's conversation is German (as detection sets it from a first message)
    await env.t.ctx.db.updateTable('chat_sessions').set({ language: 'de', language_source: 'detected' }).where('id', '=', asked.de.session_id).execute()
    expect((await ticket(asked.de.id)).language).toBe('de')
  }, 300_000)
  afterAll(async () => {
    await env?.close()
  })

  const panes = (page: Page) =>
    page.evaluate(() =>
      ['.inbox-list', '.inbox-conversation', '.inbox-details'].map((sel) => {
        const el = document.querySelector(sel)
        const r = el?.getBoundingClientRect()
        return r && r.width > 0 && r.height > 0 ? { x: Math.round(r.x), right: Math.round(r.right), top: Math.round(r.top) } : null
      }),
    )
  const scrollWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth)

  it('at 1280 px: three panes side by side, keys move through the queue, reply and resolve; viewing changes nothing', async () => {
    const w = await watchedPage(env, { width: 1280, height: 800 })
    const page = w.page
    await openScreen(page, env, '/tickets', 'Tickets')
    const items = page.locator('.queue-item')
    await expect.poll(() => items.count(), LIVE).toBe(3)
    // the visitors who asked for a person first, the automatic hand-off after them
    const order = await items.locator('.queue-number').allTextContents()
    expect(order.slice(0, 2).sort()).toEqual([asked.en.ticket_number, asked.de.ticket_number].sort())
    expect(order[2]).toBe(auto)
    // a row shows the note, its trigger and how long it waited
    const en = items.filter({ hasText: asked.en.ticket_number })
    expect(await en.textContent()).toMatch(/Note: My parcel never arrived in Lisbon/)
    expect(await en.textContent()).toMatch(/Visitor asked for a human/)
    expect(await en.locator('.queue-wait').textContent()).toMatch(/just now|\d+ min/)
    expect(await scrollWidth(page)).toBeLessThanOrEqual(1280)
    await expectAccessible(page, 'inbox list')

    // j opens the first ticket beside the list; the keys help is there
    await page.keyboard.press('j')
    const first = order[0]!
    await page.getByRole('heading', { level: 1, name: `Ticket ${first}` }).waitFor(LIVE)
    await page.locator('.live-chat').waitFor(LIVE)
    const [list, convo, details] = await panes(page)
    expect(list && convo && details, 'three panes shown').toBeTruthy()
    expect(list!.right).toBeLessThanOrEqual(convo!.x)
    expect(convo!.right).toBeLessThanOrEqual(details!.x)
    expect(details!.right).toBeLessThanOrEqual(1280)
    expect(Math.abs(list!.top - details!.top)).toBeLessThan(80)
    expect(await scrollWidth(page)).toBeLessThanOrEqual(1280)
    await page.locator('.inbox-details').getByRole('heading', { name: 'Visitor', exact: true }).waitFor()
    await page.locator('.inbox-details').getByRole('heading', { name: 'Assignee' }).waitFor()
    // viewing changed nothing: the ticket is still open, nobody on it
    const viewed = order[0] === asked.en.ticket_number ? asked.en : asked.de
    expect(await ticket(viewed.id)).toMatchObject({ status: 'open', assignee_user_id: null })
    await page.locator('.queue-current', { hasText: first }).waitFor()
    await screenshot(env, page, 'inbox-three-panes')

    // next and previous, the list staying where it is
    await page.keyboard.press('j')
    await page.getByRole('heading', { level: 1, name: `Ticket ${order[1]}` }).waitFor(LIVE)
    await page.keyboard.press('ArrowDown')
    await page.getByRole('heading', { level: 1, name: `Ticket ${auto}` }).waitFor(LIVE)
    await page.keyboard.press('k')
    await page.getByRole('heading', { level: 1, name: `Ticket ${order[1]}` }).waitFor(LIVE)
    await page.keyboard.press('ArrowUp')
    await page.getByRole('heading', { level: 1, name: `Ticket ${first}` }).waitFor(LIVE)
    expect(await items.count()).toBe(3)

    // ? shows the keys
    await page.keyboard.press('?')
    await page.locator('.key-help[open]').getByText('Next ticket').waitFor()
    await page.keyboard.press('?')

    // on the German ticket: translate into German; return to the bot offers resolving
    await page.locator('.queue-link', { hasText: asked.de.ticket_number }).click()
    await page.getByRole('heading', { level: 1, name: `Ticket ${asked.de.ticket_number}` }).waitFor(LIVE)
    await page.getByLabel('Translate into German').waitFor(LIVE)
    await page.getByRole('button', { name: 'Return to bot' }).click()
    await page.locator('.resolve-offer').getByText('Is the request done?').waitFor(LIVE)
    await screenshot(env, page, 'inbox-return-to-bot')

    // on the English ticket: no "Translate into English"; r, a reply with j and k in it, Escape, e resolves
    await page.locator('.queue-link', { hasText: asked.en.ticket_number }).click()
    await page.getByRole('heading', { level: 1, name: `Ticket ${asked.en.ticket_number}` }).waitFor(LIVE)
    await page.getByLabel('Reply to the visitor').waitFor(LIVE)
    expect(await page.getByLabel(/Translate into/).count()).toBe(0)
    await page.locator('main').focus()
    await page.keyboard.press('r')
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('TEXTAREA')
    const reply = 'Just checked: your parcel is in Lisbon, jk'
    await page.keyboard.type(reply)
    expect(await page.getByLabel('Reply to the visitor').inputValue()).toBe(reply)
    await page.getByRole('heading', { level: 1, name: `Ticket ${asked.en.ticket_number}` }).waitFor()
    await page.keyboard.press('Escape')
    await page.keyboard.press('e')
    await page.locator('.toasts').getByText(`${asked.en.ticket_number} resolved`).waitFor(LIVE)
    await expect.poll(async () => (await ticket(asked.en.id)).status, LIVE).toBe('resolved')
    expect(await scrollWidth(page)).toBeLessThanOrEqual(1280)
    await expectAccessible(page, 'inbox with a ticket open')
    expect(w.errors).toEqual([])
    await page.close()
  })

  it('at 390 px: the list, then the ticket with a way back, nothing wider than the phone', async () => {
    const w = await watchedPage(env, { width: 390, height: 844 })
    const page = w.page
    await openScreen(page, env, '/tickets', 'Tickets')
    const items = page.locator('.queue-item')
    await expect.poll(() => items.count(), LIVE).toBeGreaterThan(0)
    // the first ticket is near the top: no personal settings above the list any more
    const top = await items.first().evaluate((el) => el.getBoundingClientRect().top)
    expect(top).toBeLessThan(700)
    expect(await page.getByText('Your name shown to visitors').count()).toBe(0)
    expect(await scrollWidth(page)).toBeLessThanOrEqual(390)
    await screenshot(env, page, 'inbox-phone-list')
    const number = (await items.first().locator('.queue-number').textContent())!
    await items.first().locator('.queue-link').click()
    await page.getByRole('heading', { level: 1, name: `Ticket ${number}` }).waitFor(LIVE)
    expect(await page.locator('.inbox-list').isVisible()).toBe(false)
    expect(await scrollWidth(page)).toBeLessThanOrEqual(390)
    await screenshot(env, page, 'inbox-phone-ticket')
    await expectAccessible(page, 'inbox ticket on a phone')
    await page.getByRole('link', { name: '← Tickets' }).click()
    await page.getByRole('heading', { level: 1, name: 'Tickets' }).waitFor(LIVE)
    expect(await page.locator('.inbox-list').isVisible()).toBe(true)
    // personal settings are on Your profile
    await openScreen(page, env, '/me', 'Your profile')
    await page.getByLabel('Your name shown to visitors').waitFor()
    await page.getByLabel('Play a sound').waitFor()
    expect(await scrollWidth(page)).toBeLessThanOrEqual(390)
    expect(w.errors).toEqual([])
    await page.close()
  })
})
