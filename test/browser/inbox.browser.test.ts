import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Tenant } from '../helpers/factories.js'
import { handedOff, teamName } from '../helpers/live.js'
import { addMember } from '../helpers/team.js'
import {
  expectAccessible,
  expectFitsPhone,
  openScreen,
  screenshot,
  signedInTenant,
  startDashboardEnv,
  watchedPage,
  type DashboardEnv,
} from './dashboard-harness.js'
import { hasChromium } from './harness.js'

/**
 * The agent's inbox (#39): Settings › Saved replies, the composer's `/` picker filling a saved reply's variables
 * (sent, the visitor gets the filled text), at desktop and at phone width; "(N) waiting" in the tab title on
 * every page while a visitor waits for a person, gone once the conversation is taken.
 */
const suite = hasChromium ? describe : describe.skip
/** A loaded CI machine is slow: every wait is a poll with room to spare, never a fixed sleep. */
const LIVE = { timeout: 20_000 }

suite('the agent inbox in Chromium', { timeout: 300_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant

  beforeAll(async () => {
    // isolated: an agent's browser beside the owner's
    env = await startDashboardEnv({}, { isolated: true })
    tenant = await signedInTenant(env)
  }, 420_000)
  afterAll(async () => {
    await env?.close()
  })

  it('saved replies are managed in Settings, with the service refusing a taken shortcut at its field', async () => {
    const w = await watchedPage(env)
    const page = w.page
    page.on('dialog', (d) => void d.accept())
    await openScreen(page, env, '/settings/saved-replies', 'Saved replies')
    const form = page.getByRole('form', { name: 'New saved reply' })
    await form.getByLabel('Title').fill('Greeting')
    await form.getByLabel('Shortcut').fill('hello')
    await form.getByLabel('Text').fill('Hello {{visitor.name}}, this is {{agent.name}}.')
    await form.getByRole('button', { name: 'Add saved reply' }).click()
    const list = page.getByRole('list', { name: 'Saved replies' })
    await list.getByText('/hello').waitFor(LIVE)
    await expect.poll(() => form.getByLabel('Title').inputValue(), LIVE).toBe('')

    // the same shortcut again: the 409 is shown at the shortcut; a bad shortcut's 422 too; nothing added
    await form.getByLabel('Title').fill('Greeting again')
    await form.getByLabel('Shortcut').fill('hello')
    await form.getByLabel('Text').fill('Hi.')
    await form.getByRole('button', { name: 'Add saved reply' }).click()
    await form.getByText('Another saved reply has this shortcut.').waitFor(LIVE)
    // the screen turns 'Refund Time' into refund-time; nothing can be made of '!!!', so the service refuses it
    await form.getByLabel('Shortcut').fill('!!!')
    await form.getByRole('button', { name: 'Add saved reply' }).click()
    await form.locator('.field-error').first().waitFor(LIVE)
    expect(await form.getByLabel('Shortcut').getAttribute('aria-invalid')).toBe('true')
    expect((await tenant.api.get('/tenants/me/saved-replies')).body.items).toHaveLength(1)
    await expectAccessible(page, 'saved replies with a field error')
    await expectFitsPhone(page, 'saved replies')

    // edited, then deleted
    await list.getByRole('button', { name: 'Edit /hello' }).click()
    const edit = page.getByRole('form', { name: 'Edit /hello' })
    await edit.getByLabel('Title').fill('Greeting (short)')
    await edit.getByRole('button', { name: 'Save changes' }).click()
    await list.getByText('Greeting (short)').waitFor(LIVE)
    await list.getByRole('button', { name: 'Delete /hello' }).click()
    await page.getByText('No saved replies yet').waitFor(LIVE)
    expect(w.errors).toEqual([])
    await page.close()
  })

  it('an agent reads the saved replies under Settings without the controls to change them', async () => {
    const made = await tenant.api.post('/tenants/me/saved-replies', { title: 'Opening hours', shortcut: 'hours', content: 'We are open 9 to 5.' })
    expect(made.status, made.text).toBe(201)
    const agent = await addMember(env.t, tenant, 'agent')
    const context = await env.browser.newContext!()
    try {
      await context.addCookies([{ name: 'access_token', value: agent.token, url: env.t.url, httpOnly: true, sameSite: 'Lax' }])
      const w = await watchedPage(env, { width: 1280, height: 800 }, context)
      await openScreen(w.page, env, '/settings/saved-replies', 'Saved replies')
      const list = w.page.getByRole('list', { name: 'Saved replies' })
      await list.getByText('/hours').waitFor(LIVE)
      expect(await w.page.getByRole('form', { name: 'New saved reply' }).count()).toBe(0)
      expect(await list.getByRole('button').count()).toBe(0)
      await w.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Saved replies' }).waitFor(LIVE)
      expect(w.errors).toEqual([])
    } finally {
      await context.close()
      await tenant.api.delete(`/tenants/me/saved-replies/${made.body.id}`)
    }
  })

  it('"(N) waiting" is in the tab title on every page while a visitor waits, and goes once the conversation is taken', async () => {
    const before = (await tenant.api.get('/escalations?needs_person=true&limit=1')).body.total as number
    const w = await watchedPage(env)
    const page = w.page
    await openScreen(page, env, '/settings', 'Settings')
    const titled = (n: number) => (n > 0 ? `(${n}) waiting · Support dashboard` : 'Support dashboard')
    await expect.poll(() => page.title(), LIVE).toBe(titled(before))

    const { ticket } = await handedOff(env.t, tenant, { note: 'Is anyone there?' })
    await expect.poll(() => page.title(), LIVE).toBe(titled(before + 1))
    // another page of the dashboard: still there
    await page.getByRole('link', { name: 'Tickets', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: 'Tickets' }).waitFor(LIVE)
    await expect.poll(() => page.title(), LIVE).toBe(titled(before + 1))
    // the inbox's badge says the same count, in the default view's words
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'a person' }).first().textContent(), LIVE)
      .toMatch(before + 1 === 1 ? /1\s*ticket needs a person/ : new RegExp(`${before + 1}\\s*tickets need a person`))

    // a person takes it (their first message): no longer waiting
    const took = await tenant.api.post(`/escalations/${ticket.id}/messages`, { content: 'Hello, I am here.' })
    expect(took.status, took.text).toBe(201)
    await expect.poll(() => page.title(), LIVE).toBe(titled(before))
    expect(w.errors).toEqual([])
    await page.close()
  })

  it('opted in, a beep and a browser notification tell of a visitor waiting and of a visitor writing in my conversation; permission asked only on the click', async () => {
    const w = await watchedPage(env)
    const page = w.page
    // The browser's edges, recorded: Notification (granted once asked) and WebAudio; the tab in the background.
    await page.addInitScript(() => {
      const rec = { notes: [] as { title: string; body?: string }[], asked: 0, tones: 0 }
      Object.assign(window, { __alerts: rec })
      class FakeNotification {
        static permission: NotificationPermission = 'default'
        static async requestPermission() {
          rec.asked++
          FakeNotification.permission = 'granted'
          return 'granted'
        }
        onclick: (() => void) | null = null
        constructor(title: string, opts?: { body?: string }) {
          rec.notes.push({ title, body: opts?.body })
        }
        close() {}
      }
      class FakeAudio {
        state = 'running'
        currentTime = 0
        destination = {}
        resume() {
          return Promise.resolve()
        }
        createOscillator() {
          rec.tones++
          return { type: '', frequency: { value: 0 }, connect: (g: unknown) => g, start() {}, stop() {} }
        }
        createGain() {
          return { gain: { setValueAtTime() {}, exponentialRampToValueAtTime() {} }, connect: (d: unknown) => d }
        }
      }
      Object.assign(window, { Notification: FakeNotification, AudioContext: FakeAudio })
      document.hasFocus = () => false
    })
    const rec = () =>
      page.evaluate(() => (window as unknown as { __alerts: { notes: { title: string; body?: string }[]; asked: number; tones: number } }).__alerts)
    try {
      // personal settings live on Your profile (#52), not above the inbox
      await openScreen(page, env, '/me', 'Your profile')
      const prefs = page.getByRole('group', { name: 'Alerts on this browser' })
      await prefs.getByLabel('Play a sound').check()
      expect((await rec()).asked, 'no permission asked for the sound').toBe(0)
      await expect.poll(async () => (await rec()).tones, LIVE).toBeGreaterThan(0)
      await prefs.getByLabel('Show a browser notification').check()
      await expect.poll(async () => (await rec()).asked, LIVE).toBe(1)
      await expect.poll(() => prefs.getByLabel('Show a browser notification').isChecked(), LIVE).toBe(true)
      const tonesBefore = (await rec()).tones

      const { ticket, bot, sid } = await handedOff(env.t, tenant, { note: 'Anyone there?' })
      await expect.poll(async () => (await rec()).notes.map((n) => n.title), LIVE).toContain('A visitor is waiting')
      expect((await rec()).tones).toBeGreaterThan(tonesBefore)

      // taken by me; the visitor writes in it
      const took = await tenant.api.post(`/escalations/${ticket.id}/messages`, { content: 'I am on it.' })
      expect(took.status, took.text).toBe(201)
      const wrote = await fetch(`${env.t.url}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.78' },
        body: JSON.stringify({ message: 'Thanks, my order number is 1234.' }),
      })
      expect(wrote.status).toBe(200)
      await wrote.text()
      await expect
        .poll(async () => (await rec()).notes.find((n) => n.title === `${ticket.ticket_number}: the visitor wrote`)?.body, LIVE)
        .toContain('order number')
      await expectAccessible(page, 'tickets with the alerts switched on')
      expect(w.errors).toEqual([])
    } finally {
      await page.evaluate(() => localStorage.removeItem('dashboard.alerts')).catch(() => {})
      await page.close()
    }
  })

  for (const viewport of [
    { name: 'desktop', width: 1280, height: 800 },
    { name: 'phone', width: 390, height: 844 },
  ]) {
    it(`typing / in the composer inserts a saved reply with its variables filled in, and it is sent (${viewport.name})`, async () => {
      const shortcut = `refund-${viewport.name}`
      const made = await tenant.api.post('/tenants/me/saved-replies', {
        title: `Refund time (${viewport.name})`,
        shortcut,
        content: 'Hello{{visitor.name}}! {{agent.name}} here about {{ticket.number}}: refunds take 5 business days.',
      })
      expect(made.status, made.text).toBe(201)
      const other = await tenant.api.post('/tenants/me/saved-replies', { title: 'Thanks', shortcut: `thanks-${viewport.name}`, content: 'Thank you!' })
      expect(other.status, other.text).toBe(201)
      const { ticket, visitor, bot, sid } = await handedOff(env.t, tenant, { note: 'How long do refunds take?' })
      const expected = `Hello! ${await teamName(tenant)} here about ${ticket.ticket_number}: refunds take 5 business days.`

      const w = await watchedPage(env, { width: viewport.width, height: viewport.height })
      const op = w.page
      await openScreen(op, env, `/tickets/${ticket.id}`, `Ticket ${ticket.ticket_number}`)
      const chat = op.locator('section.live-chat')
      const field = chat.getByLabel('Reply to the visitor')
      await field.click()

      // "/" opens the list; Escape closes it; what follows the / narrows it
      await op.keyboard.type('/')
      const listbox = chat.getByRole('listbox', { name: 'Saved replies' })
      await listbox.waitFor(LIVE)
      await op.keyboard.press('Escape')
      await listbox.waitFor({ state: 'detached', ...LIVE })
      // closed for that /, until a new one is typed
      await op.keyboard.type('r')
      expect(await listbox.count()).toBe(0)
      await op.keyboard.press('Backspace')
      await op.keyboard.press('Backspace')
      await op.keyboard.type('/')
      await listbox.waitFor(LIVE)
      await op.keyboard.type(`refund-${viewport.name.slice(0, 2)}`)
      await listbox.waitFor(LIVE)
      await expect.poll(() => listbox.getByRole('option').count(), LIVE).toBe(1)
      const option = listbox.getByRole('option', { name: new RegExp(shortcut) })
      expect(await option.getAttribute('aria-selected')).toBe('true')
      expect(await field.getAttribute('aria-activedescendant')).toBe(await option.getAttribute('id'))
      await expectAccessible(op, `composer with the saved replies open (${viewport.name})`)
      await screenshot(env, op, `composer-saved-replies-${viewport.name}`)
      if (viewport.name === 'phone') await expectFitsPhone(op, 'composer with the saved replies open')

      // Enter inserts it, filled in: the visitor's unknown name empty, the team name, the ticket number
      await op.keyboard.press('Enter')
      await listbox.waitFor({ state: 'detached', ...LIVE })
      await expect.poll(() => field.inputValue(), LIVE).toBe(expected)

      // a second one by mouse after a space, with the arrow keys moving first
      await field.press('End')
      await op.keyboard.type(' /')
      await listbox.waitFor(LIVE)
      await op.keyboard.press('ArrowDown')
      await op.keyboard.press('ArrowUp')
      await listbox.getByRole('option', { name: new RegExp(`thanks-${viewport.name}`) }).click()
      await expect.poll(() => field.inputValue(), LIVE).toBe(`${expected} Thank you!`)

      await chat.getByRole('button', { name: 'Send', exact: true }).click()
      await chat.locator('.msg-operator', { hasText: 'Thank you!' }).waitFor(LIVE)
      // the visitor gets the filled text
      await expect
        .poll(async () => {
          const h = await visitor.get(`/widget/history?bot_id=${bot}&session_id=${sid}`)
          return h.body.messages?.at(-1)?.content
        }, LIVE)
        .toBe(`${expected} Thank you!`)
      expect(w.errors).toEqual([])
      await op.close()
    })
  }
})
