import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tokenFromMail } from '../fakes/smtp.js'
import { PASSWORD, uniqueEmail, type Tenant } from '../helpers/factories.js'
import { hasChromium } from './harness.js'
import { expectScreenHealthy, openScreen, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'

const suite = hasChromium ? describe : describe.skip

suite('dashboard: sign-up, verification, login, checklist and bots in Chromium', { timeout: 90_000 }, () => {
  let env: DashboardEnv

  beforeAll(async () => {
    env = await startDashboardEnv()
  }, 120_000)
  afterAll(async () => {
    await env?.close()
  })

  it('serves the app at / with a CSP that allows no inline script', async () => {
    const root = await fetch(`${env.t.url}/`, { redirect: 'manual' })
    expect(root.status).toBe(302)
    expect(root.headers.get('location')).toBe('/app/')
    const page = await fetch(`${env.t.url}/app/tickets/123`)
    expect(page.status).toBe(200)
    const csp = page.headers.get('content-security-policy') ?? ''
    expect(csp).toMatch(/script-src 'self'(;|$)/)
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/)
    const html = await page.text()
    expect(html).not.toMatch(/<script>(?!<\/script>)/)
    expect(html).toMatch(/<script type="module" src="\/app\/assets\/main-[A-Z0-9]+\.js"><\/script>/)
    const asset = await fetch(`${env.t.url}${/src="([^"]+)"/.exec(html)![1]}`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get('cache-control')).toContain('immutable')
    expect((await fetch(`${env.t.url}/app/assets/nope.js`)).status).toBe(404)
  })

  it('refuses a cookie-authenticated write from another origin (CSRF) and allows it from the app', async () => {
    const tenant = await signedInTenant(env)
    const cookie = `access_token=${tenant.token}`
    const foreign = await fetch(`${env.t.url}/bots`, {
      method: 'POST',
      headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    })
    expect(foreign.status).toBe(403)
    expect(JSON.stringify(await foreign.json())).toMatch(/Cross-site request refused/)
    const own = await fetch(`${env.t.url}/bots`, {
      method: 'POST',
      headers: { cookie, origin: env.t.url, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Mine' }),
    })
    expect(own.status).toBe(201)
    expect((await tenant.api.get('/bots')).body.items.map((b: { name: string }) => b.name)).toContain('Mine')
  })

  it('signs up, verifies from the mailed link, logs out and logs back in', async () => {
    await env.browser.context.clearCookies()
    const w = await watchedPage(env)
    const { page } = w
    const email = uniqueEmail('op')
    await page.goto(`${env.t.url}/`)
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await page.getByRole('link', { name: 'Create an account' }).click()
    await page.getByLabel('Work email').fill(email)
    await page.getByLabel('Password').fill('short')
    await page.getByRole('button', { name: 'Create account' }).click()
    // The service's own password rule, shown next to the field or as the form's error.
    await page
      .getByText(/at least 8 characters/i)
      .first()
      .waitFor()
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByRole('heading', { name: 'Check your email' }).waitFor()

    const mail = await env.t.smtp.waitFor((m) => m.to.includes(email) && /verify/i.test(m.subject))
    const link = /https?:\/\/\S+\/verify\?token=[\w.-]+/.exec(mail.text ?? '')?.[0]
    expect(link, 'verification mail links to /verify').toBeTruthy()
    await page.goto(`${env.t.url}/verify?token=${encodeURIComponent(tokenFromMail(mail))}`)
    await page.getByText('Your email is verified').waitFor()
    await page.getByRole('button', { name: 'Open the dashboard' }).click()
    await page.getByRole('heading', { level: 1, name: 'Get started' }).waitFor()
    await expectScreenHealthy(w, 'checklist')

    await page.getByRole('button', { name: 'Log out' }).click()
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill('Wrong-pass1!')
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.getByRole('alert').waitFor()
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.getByRole('heading', { level: 1, name: 'Get started' }).waitFor()
    expect(w.errors.filter((e) => !/401|Unauthorized/.test(e))).toEqual([])
    await page.close()
  })

  it('resets a forgotten password from the mailed link', async () => {
    const tenant: Tenant = await signedInTenant(env)
    await env.browser.context.clearCookies()
    const w = await watchedPage(env)
    const { page } = w
    await page.goto(`${env.t.url}/app/forgot`)
    await page.getByLabel('Email').fill(tenant.email)
    await page.getByRole('button', { name: 'Send reset link' }).click()
    await page.getByRole('status').filter({ hasText: /./ }).first().waitFor()
    const mail = await env.t.smtp.waitFor((m) => m.to.includes(tenant.email) && /reset/i.test(m.subject))
    await page.goto(`${env.t.url}/reset-password?token=${encodeURIComponent(tokenFromMail(mail))}`)
    await page.getByLabel('New password').fill('N3w-Password!')
    await page.getByRole('button', { name: 'Save password' }).click()
    await page.getByText(/log in with your new password/).waitFor()
    await page.goto(`${env.t.url}/app/login`)
    await page.getByLabel('Email').fill(tenant.email)
    await page.getByLabel('Password').fill('N3w-Password!')
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.getByRole('heading', { level: 1, name: 'Get started' }).waitFor()
    await page.close()
  })

  it('creates and edits a bot, shows its snippet and previews it with the real widget', async () => {
    await signedInTenant(env)
    const w = await watchedPage(env)
    const { page } = w
    await openScreen(page, env, '/bots', 'Bots')
    await page.getByRole('button', { name: 'New bot' }).click()
    await page.getByLabel('Name').fill('Helpdesk')
    await page.getByRole('button', { name: 'Create bot' }).click()
    await page.getByRole('heading', { level: 1, name: 'Helpdesk' }).waitFor()
    await expect.poll(() => page.locator('pre').first().textContent()).toMatch(/embed\.js" data-bot-id="ch_/)
    await page.getByLabel('Allowed sites').fill('not a host!')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.locator('.field-error, [role=alert]').first().waitFor()
    await page.getByLabel('Allowed sites').fill('example.com\nhelp.example.org')
    await page.getByLabel('Name').fill('Helpdesk EN')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Bot saved').waitFor()
    // The preview frame loads /embed.js from the service; the bot allows example.com only, yet its own
    // dashboard may always preview it.
    const frame = page.frameLocator('iframe.preview-frame')
    await frame.locator('[data-support-chat]').waitFor({ timeout: 15_000 })
    await expectScreenHealthy(w, 'bot detail')
    await openScreen(page, env, '/bots', 'Bots')
    await page.getByRole('link', { name: 'Helpdesk EN' }).waitFor()
    await expectScreenHealthy(w, 'bots list')
    await page.close()
  })

  it('works by keyboard alone: log in, skip to content, move between screens', async () => {
    const tenant = await signedInTenant(env)
    await env.browser.context.clearCookies()
    const w = await watchedPage(env)
    const { page } = w
    await page.goto(`${env.t.url}/app/login`)
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await page.keyboard.press('Tab')
    await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type)).toBe('email')
    await page.keyboard.type(tenant.email)
    await page.keyboard.press('Tab')
    await page.keyboard.type(tenant.password)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'Get started' }).waitFor()
    // The first Tab reaches the skip link, which moves focus to the screen's content.
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('main')
    // Navigation links are reachable and followable with the keyboard.
    await page.getByRole('link', { name: 'Bots' }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'Bots' }).waitFor()
    await page.close()
  })
})
