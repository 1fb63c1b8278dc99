import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { expect } from 'vitest'
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm.js'
import { startApp, type StartOptions, type TestApp } from '../helpers/app.js'
import { createTenant, type Tenant } from '../helpers/factories.js'
import { launchBrowser, launchIsolatedBrowser, resultsDir } from './harness.js'

/**
 * Plumbing for the dashboard's browser tests: the real app with a fake model, Debian's Chromium, a page
 * whose console errors are collected, axe-core run inside the page, and a check that a screen fits 390 px.
 */
export interface DashboardEnv {
  t: TestApp
  fake: FakeLlm
  /** `newContext` only with `{ isolated: true }`: a second person's browser, sharing no cookies with the first. */
  browser: { context: BrowserContext; newContext?: () => Promise<BrowserContext>; close(): Promise<void> }
  shots: string
  close(): Promise<void>
}

export async function startDashboardEnv(opts: StartOptions = {}, browserOpts: { isolated?: boolean } = {}): Promise<DashboardEnv> {
  const fake = await startFakeLlm()
  const t = await startApp({ ...opts, env: { LLM_BASE_URL: fake.url, CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', CRAWLER_DELAY_MS: '0', ...opts.env } })
  const browser = browserOpts.isolated ? await launchIsolatedBrowser() : await launchBrowser()
  return {
    t,
    fake,
    browser,
    shots: resultsDir(),
    async close() {
      await browser.close()
      await t.close()
      await fake.close()
    },
  }
}

export interface WatchedPage {
  page: Page
  /** Console errors and uncaught exceptions seen so far. */
  errors: string[]
}

/** A new page that records console errors and page errors (a screen must produce none). */
export async function watchedPage(env: DashboardEnv, viewport = { width: 1280, height: 800 }, context = env.browser.context): Promise<WatchedPage> {
  const page = await context.newPage()
  await page.setViewportSize(viewport)
  const errors: string[] = []
  page.on('console', (m) => {
    // Chromium logs every 4xx answer as a console error; the screens handle those (a 401 before login, a
    // 422 shown beside its field), so only the app's own errors and 5xx answers count.
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) errors.push(m.text())
  })
  page.on('pageerror', (e) => errors.push(e.message))
  return { page, errors }
}

/** A signed-in operator: a tenant made through the API, its session cookie put in the browser. */
export async function signedInTenant(env: DashboardEnv): Promise<Tenant> {
  const tenant = await createTenant(env.t)
  await env.browser.context.addCookies([{ name: 'access_token', value: tenant.token, url: env.t.url, httpOnly: true, sameSite: 'Lax' }])
  return tenant
}

const AXE_SOURCE = readFileSync(join(createRequire(import.meta.url).resolve('axe-core'), '..', 'axe.min.js'), 'utf8')

/**
 * Runs axe-core in the page (through the DevTools protocol, so the page's CSP stays as served) and fails on
 * any serious or critical violation, naming the rule and the elements.
 */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  // A string is evaluated by the DevTools protocol itself, which the page's CSP (no eval) does not govern.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE)
  const violations = await page.evaluate(async () => {
    const w = window as unknown as {
      axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> }
    }
    const r = await w.axe.run(document, { resultTypes: ['violations'] })
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${v.id} (${v.impact}): ${v.help} at ${v.nodes
            .map((n) => n.target.join(' '))
            .slice(0, 3)
            .join(', ')}`,
      )
  })
  expect(violations, `axe on ${label}`).toEqual([])
}

/** The screen fits a 390 px wide phone: nothing scrolls sideways. */
export async function expectFitsPhone(page: Page, label: string): Promise<void> {
  const before = page.viewportSize()
  await page.setViewportSize({ width: 390, height: 844 })
  await page.waitForTimeout(100)
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  expect(width, `${label} at 390 px`).toBeLessThanOrEqual(390)
  if (before) await page.setViewportSize(before)
}

/** Opens a dashboard path and waits for its heading. */
export async function openScreen(page: Page, env: DashboardEnv, path: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${env.t.url}/app${path}`)
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 15_000 })
}

/** The standard checks every screen passes: no console errors, axe clean, fits a phone. */
export async function expectScreenHealthy(w: WatchedPage, label: string): Promise<void> {
  await expectAccessible(w.page, label)
  await expectFitsPhone(w.page, label)
  expect(w.errors, `console errors on ${label}`).toEqual([])
}

/**
 * Saves the page as `dashboard-<name>.png` under test-results; a picture the README shows (`docs`) goes to
 * DASHBOARD_SCREENSHOTS instead when that is set (`npm run docs:screenshots`).
 */
export async function screenshot(env: DashboardEnv, page: Page, name: string, opts: { docs?: boolean } = {}): Promise<void> {
  const dir = (opts.docs && process.env.DASHBOARD_SCREENSHOTS) || env.shots
  mkdirSync(dir, { recursive: true })
  await page.screenshot({ path: join(dir, `dashboard-${name}.png`), fullPage: false })
}
