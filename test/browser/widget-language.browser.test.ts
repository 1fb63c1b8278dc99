import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { de } from '../../src/modules/shared/messages/de.js'
import { en } from '../../src/modules/shared/messages/en.js'
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm.js'
import { startApp, type TestApp } from '../helpers/app.js'
import { withDocs } from '../helpers/chat.js'
import { createTenant, type Tenant } from '../helpers/factories.js'
import { CHROMIUM, CHROMIUM_ARGS, hasChromium, hostPageHtml, resultsDir, serveHostPage, type HostPage } from './harness.js'

/**
 * Issue 52, item 9: the widget keeps the conversation's language. A visitor on an English page with an English
 * browser asks in German: the widget switches to German, and after a reload (even with the language the widget
 * stored wiped, so the service's history says it) the greeting and the widget's texts are German at once. A German
 * browser on an English page is greeted in German before anything is said. At 390 px the German "talk to a person"
 * button leaves the bot's name in the header.
 */
const suite = hasChromium ? describe : describe.skip
const W = '[data-support-chat]'
const QUESTION = 'Wie kann ich mein Benutzerkonto deaktivieren?'
const ANSWER = 'Öffnen Sie Einstellungen > Konto und wählen Sie Deaktivieren [1].'
const ACCOUNT_MD = `---
url: https://help.example.com/account/deactivate
---
# Deactivating your account

To deactivate your account, open Settings > Account and choose Deactivate.
`

suite('the widget keeps the conversation language after a reload', { timeout: 120_000 }, () => {
  let t: TestApp
  let fake: FakeLlm
  let tenant: Tenant
  let site: HostPage
  let browser: Browser

  beforeAll(async () => {
    fake = await startFakeLlm()
    fake.script((req) => (req.stream && !req.json ? { text: ANSWER, chunkDelayMs: 5 } : undefined))
    fake.translateAs((text) => (text === QUESTION ? 'How do I deactivate my account?' : undefined))
    t = await startApp({ env: { LLM_BASE_URL: fake.url } })
    tenant = await createTenant(t)
    const bot = await tenant.api.patch(`/bots/${tenant.bot.id}`, { name: 'Acme Hilfe-Assistent' })
    expect(bot.status, bot.text).toBe(200)
    await withDocs(t, tenant, { 'account.md': ACCOUNT_MD })
    site = await serveHostPage(() => hostPageHtml({ embedSrc: `${t.url}/embed.js`, botId: tenant.bot.public_id, lang: 'en' }))
    const { chromium } = await import('playwright-core')
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await site?.close()
    await t?.close()
    await fake?.close()
  })

  const greeting = (page: Page, text: string) => page.locator(`${W} >> .msg.assistant .bubble`, { hasText: text }).first()
  const open = async (page: Page) => {
    await page.goto(site.url)
    await page.locator(`${W} >> .launcher`).click()
  }

  for (const viewport of [
    { name: 'desktop', width: 1280, height: 800 },
    { name: 'phone', width: 390, height: 844 },
  ]) {
    it(`a German conversation stays German after a reload; the header keeps the bot's name (${viewport.name})`, async () => {
      const context = await browser.newContext({ locale: 'en-US', viewport: { width: viewport.width, height: viewport.height } })
      const page = await context.newPage()
      try {
        await open(page)
        await greeting(page, en['widget.greeting']).waitFor({ timeout: 15_000 })
        const input = page.locator(`${W} >> form textarea`)
        await input.fill(QUESTION)
        await input.press('Enter')
        await page.locator(`${W} >> .msg.assistant .bubble`, { hasText: 'Deaktivieren' }).waitFor({ timeout: 30_000 })
        // the session's language is known: the widget follows it
        await expect.poll(() => input.getAttribute('placeholder'), { timeout: 15_000 }).toBe(de['widget.placeholder'])

        await page.reload()
        await page.locator(`${W} >> .launcher`).click()
        await greeting(page, de['widget.greeting']).waitFor({ timeout: 15_000 })
        expect(await page.locator(`${W} >> form textarea`).getAttribute('placeholder')).toBe(de['widget.placeholder'])
        expect(await page.locator(`${W} >> .msg.assistant .bubble`, { hasText: en['widget.greeting'] }).count()).toBe(0)
        await page.locator(`${W} >> .msg.user .bubble`, { hasText: QUESTION }).waitFor()

        // the stored language wiped: the service's history still says German
        await page.evaluate((bot) => {
          const key = `scb:session:${bot}`
          const s = JSON.parse(localStorage.getItem(key) ?? '{}')
          delete s.lang
          localStorage.setItem(key, JSON.stringify(s))
        }, tenant.bot.public_id)
        await page.reload()
        await page.locator(`${W} >> .launcher`).click()
        await greeting(page, de['widget.greeting']).waitFor({ timeout: 15_000 })
        await expect.poll(() => page.locator(`${W} >> form textarea`).getAttribute('placeholder'), { timeout: 15_000 }).toBe(de['widget.placeholder'])
        expect(await page.locator(`${W} >> .msg.assistant .bubble`, { hasText: en['widget.greeting'] }).count()).toBe(0)

        // the header: the bot's name readable beside the German "talk to a person" button, nothing outside the panel
        const box = await page.evaluate(() => {
          const root = document.querySelector('[data-support-chat]')!.shadowRoot!
          const r = (sel: string) => root.querySelector(sel)!.getBoundingClientRect()
          const header = r('header')
          const title = r('header h2')
          const human = r('button.human')
          return {
            header: { left: header.left, right: header.right },
            title: title.width,
            human: { left: human.left, right: human.right },
            name: root.querySelector('header h2')!.textContent,
            label: root.querySelector('button.human')!.textContent,
            scroll: document.documentElement.scrollWidth,
          }
        })
        expect(box.name).toBe('Acme Hilfe-Assistent')
        expect(box.label).toBe(de['widget.talk_to_human'])
        expect(box.title, 'the bot name keeps room in the header').toBeGreaterThanOrEqual(90)
        expect(box.human.right).toBeLessThanOrEqual(box.header.right)
        expect(box.scroll).toBeLessThanOrEqual(viewport.width)
        await page.screenshot({ path: join(resultsDir(), `widget-language-reload-${viewport.name}.png`) })
      } finally {
        await context.close()
      }
    })
  }

  it('a German browser on an English page is greeted in German before anything is said', async () => {
    const context = await browser.newContext({ locale: 'de-DE', viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    try {
      await open(page)
      await greeting(page, de['widget.greeting']).waitFor({ timeout: 15_000 })
      expect(await page.locator(`${W} >> form textarea`).getAttribute('placeholder')).toBe(de['widget.placeholder'])
      await page.screenshot({ path: join(resultsDir(), 'widget-language-german-browser.png') })
    } finally {
      await context.close()
    }
  })
})
