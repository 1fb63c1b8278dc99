import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm.js'
import { startApp, type TestApp } from '../helpers/app.js'
import { createTenant, type Tenant } from '../helpers/factories.js'
import { CHROMIUM, hasChromium, hostPageHtml, launchBrowser, resultsDir, serveHostPage, type HostPage } from './harness.js'

/**
 * The widget in a real browser: a tenant's page on one 127.0.0.1 port embeds the loader from the service
 * on another port. The knowledge is a page of that same site, crawled as a URL source, so answers come
 * with a source link; it mentions a community forum on another host, which the link-safety dialog guards.
 */
if (!hasChromium) {
  console.warn(`\n  NOTICE: browser tests of the widget SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium)\n`)
}

const DOCS_PAGE = `<!doctype html><html><head><title>Resetting your password</title></head><body><main>
<h1>Resetting your password</h1>
<p>To reset your password, open Settings, choose Security and press the Reset password button.
We then send a reset link to your e-mail address; the link stays valid for one hour.</p>
<p>If the reset password e-mail does not arrive, ask in our community forum at https://community.example.org/t/reset-password for help.</p>
<h2>Two-factor authentication</h2>
<p>Two-factor authentication adds a one-time code from an authenticator app to every sign-in.</p>
</main></body></html>`

const QUESTION = 'How do I reset my password?'
const FORUM = 'https://community.example.org/t/reset-password'

const suite = hasChromium ? describe : describe.skip

suite('widget in Chromium', { timeout: 60_000 }, () => {
  let t: TestApp
  let fake: FakeLlm
  let tenant: Tenant
  let bot: { id: string; public_id: string }
  let site: HostPage
  let refused: HostPage
  let browser: { context: BrowserContext; close(): Promise<void> }
  let page: Page
  const shots = resultsDir()
  const W = '[data-support-chat]'

  beforeAll(async () => {
    fake = await startFakeLlm()
    // The answer streams word by word, slowly enough to be watched; it cites the page [1] and repeats the
    // forum address written in it (the pipeline keeps only links found in the sources).
    fake.script((req) =>
      req.stream && !req.json
        ? {
            text: `To reset your password, open **Settings**, choose *Security* and press the Reset password button. The reset link stays valid for one hour; if it does not arrive, ask at ${FORUM} [1]`,
            chunkDelayMs: 40,
            delayMs: 300,
          }
        : undefined,
    )
    t = await startApp({ env: { LLM_BASE_URL: fake.url, CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', CRAWLER_DELAY_MS: '0' } })
    tenant = await createTenant(t)
    bot = (await tenant.api.post('/bots', { name: 'Acme Assistant', link_safety_enabled: true, allowed_domains: ['127.0.0.1'] })).body

    site = await serveHostPage((path) =>
      path.startsWith('/docs/')
        ? DOCS_PAGE
        : path.startsWith('/inline')
          ? hostPageHtml({
              embedSrc: `${t.url}/embed.js`,
              botId: bot.public_id,
              lang: 'de',
              // the site's explicit language: without it the widget starts in the visitor's browser language (#52)
              attrs: { 'data-mode': 'inline', 'data-target': '#help', 'data-locale': 'de' },
              body: '<h1>Hilfe</h1><div id="help" style="height:520px;max-width:420px"></div>',
            })
          : hostPageHtml({ embedSrc: `${t.url}/embed.js`, botId: bot.public_id, attrs: { 'data-color': '#0f766e' } }),
    )
    // The same embed on a host the bot does not allow (127.0.0.2 is loopback too).
    refused = await serveHostPage(() => hostPageHtml({ embedSrc: `${t.url}/embed.js`, botId: bot.public_id }), '127.0.0.2')

    const src = await tenant.api.post('/documents/sources/url', { url: `${site.origin}/docs/reset-password`, schedule: 'manual' })
    expect(src.status).toBe(201)
    const deadline = Date.now() + 30_000
    for (;;) {
      const s = await tenant.api.get(`/documents/sources/${src.body.id}`)
      if (s.body.status === 'ready' && s.body.chunks_created > 0) break
      if (s.body.status === 'error' || Date.now() > deadline) throw new Error(`crawl did not finish: ${JSON.stringify(s.body)}`)
      await new Promise((r) => setTimeout(r, 200))
    }

    browser = await launchBrowser()
    page = await browser.context.newPage()
    page.on('pageerror', (e) => console.warn('page error:', e.message))
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await site?.close()
    await refused?.close()
    await t?.close()
    await fake?.close()
  })

  /** Records every text the newest assistant bubble shows, to prove the answer appeared piece by piece. */
  async function watchBubbles(p: Page) {
    await p.evaluate(() => {
      const root = document.querySelector('[data-support-chat]')!.shadowRoot!
      const seen: string[] = []
      ;(window as unknown as { __seen: string[] }).__seen = seen
      new MutationObserver(() => {
        const bubbles = root.querySelectorAll('.msg.assistant .bubble')
        const text = bubbles[bubbles.length - 1]?.textContent ?? ''
        if (text && seen[seen.length - 1] !== text) seen.push(text)
      }).observe(root, { subtree: true, childList: true, characterData: true })
    })
  }

  it('opens from the bubble, streams the answer in with stages and shows its source', async () => {
    await page.goto(site.url)
    const launcher = page.locator(`${W} >> .launcher`)
    await launcher.waitFor()
    await page.screenshot({ path: join(shots, 'widget-desktop-closed.png') })
    await launcher.click()
    const input = page.locator(`${W} >> form textarea`)
    await expect.poll(() => input.evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement)).toBe(true)

    await watchBubbles(page)
    await input.fill(QUESTION)
    await input.press('Enter')
    // The stage indicator shows while the model has not answered yet.
    await expect.poll(() => page.locator(`${W} >> .stage`).first().textContent(), { timeout: 5000 }).toMatch(/Thinking|Searching|Writing/)
    await page.locator(`${W} >> .sources a`).waitFor({ timeout: 20_000 })

    const seen = await page.evaluate(() => (window as unknown as { __seen: string[] }).__seen)
    const final = seen[seen.length - 1]!
    expect(final).toContain('reset')
    // Several intermediate texts, each a prefix-growing piece of the answer: it streamed, not one block.
    expect(seen.length).toBeGreaterThanOrEqual(4)
    expect(seen[0]!.length).toBeLessThan(final.length)

    const source = page.locator(`${W} >> .sources a`).first()
    expect(await source.getAttribute('href')).toBe(`${site.origin}/docs/reset-password`)
    expect(await source.textContent()).toContain('Resetting your password')
    await page.screenshot({ path: join(shots, 'widget-desktop.png') })
  })

  it('marks the shown answer as read on the service', async () => {
    const shownId = await page.locator(`${W} >> .msg.assistant[data-id]`).last().getAttribute('data-id')
    expect(shownId).toMatch(/^[0-9a-f-]{36}$/)
    await expect
      .poll(async () =>
        (await t.ctx.db.selectFrom('chat_sessions').select('read_message_id').where('tenant_id', '=', tenant.tenantId).execute()).map((r) => r.read_message_id),
      )
      .toContain(shownId)
  })

  it('asks before opening a link outside the allowed domains', async () => {
    const link = page.locator(`${W} >> .msg.assistant .bubble a[href^="${FORUM}"]`)
    await link.waitFor()
    const pagesBefore = browser.context.pages().length
    await link.click()
    const dialog = page.locator(`${W} >> .dialog`)
    await dialog.waitFor()
    expect(await dialog.textContent()).toContain('community.example.org')
    expect(await dialog.getAttribute('role')).toBe('alertdialog')
    await page.screenshot({ path: join(shots, 'widget-link-dialog.png') })
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    expect(browser.context.pages().length).toBe(pagesBefore)

    // A link on an allowed host (the source page) opens directly, without the dialog.
    const popup = page.waitForEvent('popup')
    await page.locator(`${W} >> .sources a`).first().click()
    const opened = await popup
    expect(opened.url()).toBe(`${site.origin}/docs/reset-password`)
    expect(await dialog.isVisible()).toBe(false)
    await opened.close()
  })

  it('hands over to a human and shows the ticket number', async () => {
    await page.locator(`${W} >> button.human`).click()
    // the panel closed and opened again with the hand-off box open: the history refresh that follows the opening
    // keeps the message box hidden under the box (it showed both; seen when the refresh came late under load)
    await page.locator(`${W} >> .hbtn.x`).click()
    await page.locator(`${W} >> .panel`).waitFor({ state: 'hidden' })
    const refreshed = page.waitForResponse((r) => r.url().includes('/widget/history'))
    await page.locator(`${W} >> .launcher`).click()
    await refreshed
    await page.evaluate(() => new Promise((r) => setTimeout(r, 100)))
    expect(await page.locator(`${W} >> .escalate`).isVisible()).toBe(true)
    expect(await page.locator(`${W} >> form.composer`).isVisible()).toBe(false)
    await page.locator(`${W} >> .escalate textarea`).fill('Please call me back')
    await page.locator(`${W} >> .escalate .btn:not(.ghost)`).click()
    // The chat goes on with a person (the live conversation): the visitor may keep writing.
    await page.locator(`${W} >> .system`, { hasText: 'Waiting for a person' }).waitFor({ timeout: 10_000 })
    // one line says the hand-off and its number, not two saying the same (issue 52, item 12)
    const saying = page
      .locator(`${W} >> .msg.assistant`)
      .or(page.locator(`${W} >> .system`))
      .filter({ hasText: /ESC-\d{4}/ })
    await saying.first().waitFor({ timeout: 10_000 })
    expect(await saying.count()).toBe(1)
    expect(await saying.first().textContent()).toMatch(/ESC-\d{4}/)
    const tickets = await tenant.api.get('/escalations')
    if (tickets.status === 200) expect(JSON.stringify(tickets.body)).toContain('Please call me back')
    expect(await page.locator(`${W} >> form textarea`).isVisible()).toBe(true)
  })

  it('restores the conversation after a reload', async () => {
    await page.reload()
    await page.locator(`${W} >> .launcher`).click()
    const log = page.locator(`${W} >> .log`)
    await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain(QUESTION)
    const text = (await log.textContent())!
    expect(text).toMatch(/reset/i)
    expect(text).toMatch(/ESC-\d{4}/)
    expect(await page.locator(`${W} >> .sources a`).count()).toBeGreaterThan(0)
  })

  it('closes with Escape and gives focus back to the launcher', async () => {
    // The chat waits for a person after the hand-off: the keyboard user is in the message field.
    const field = page.locator(`${W} >> form textarea`)
    await field.focus()
    await field.press('Escape')
    await page.locator(`${W} >> .panel`).waitFor({ state: 'hidden' })
    expect(await page.locator(`${W} >> .launcher`).evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement)).toBe(true)
    expect(await page.locator(`${W} >> .launcher`).getAttribute('aria-expanded')).toBe('false')
  })

  it('goes full screen on a phone', async () => {
    const phone = await browser.context.newPage()
    await phone.setViewportSize({ width: 390, height: 844 })
    await phone.goto(site.url)
    await phone.locator(`${W} >> .launcher`).click()
    const box = await phone.locator(`${W} >> .panel`).boundingBox()
    expect(box).toEqual({ x: 0, y: 0, width: 390, height: 844 })
    await phone.locator(`${W} >> .log`).getByText(QUESTION).waitFor({ timeout: 10_000 })
    await phone.screenshot({ path: join(shots, 'widget-phone.png') })
    await phone.close()
  })

  it("renders inline into data-target, in the site's data-locale, through the JS API", async () => {
    const inline = await browser.context.newPage()
    await inline.goto(`${site.origin}/inline`)
    // a new visitor: the English conversation of the tests above (same site, same bot) would rightly keep English (#52)
    await inline.evaluate(() => localStorage.clear())
    await inline.reload()
    const panel = inline.locator(`#help ${W} >> .panel`)
    await panel.waitFor()
    expect(await inline.locator(`${W} >> .launcher`).count()).toBe(0)
    expect(await inline.locator(`${W} >> button.human`).textContent()).toBe('Mit einem Menschen sprechen')
    expect(await inline.locator(`${W} >> form textarea`).getAttribute('placeholder')).toBe('Ihre Frage…')
    await inline.screenshot({ path: join(shots, 'widget-inline-de.png') })
    // destroy() removes the widget and its global.
    await inline.evaluate(() => (window as unknown as { SupportChat: { destroy(): void } }).SupportChat.destroy())
    expect(await inline.locator(W).count()).toBe(0)
    expect(await inline.evaluate(() => 'SupportChat' in window)).toBe(false)
    await inline.close()
  })

  it('never runs markup from an answer', async () => {
    const hostile = await browser.context.newPage()
    await hostile.goto(site.url)
    // The escalated chat waits for a person: this visitor starts afresh, with a session of its own.
    await hostile.evaluate(() => localStorage.clear())
    await hostile.reload()
    await hostile.locator(`${W} >> .launcher`).click()
    expect(await hostile.locator(`${W} >> .log`).textContent()).not.toContain(QUESTION)
    fake.script((req) =>
      req.stream && !req.json && req.messages.some((m) => m.content.includes('hostile test'))
        ? { chunks: ['Look: <img src=x onerror="window.__pwned=1">', ' and [click](javascript:window.__pwned=2)', ' <script>window.__pwned=3</script>'] }
        : undefined,
    )
    await hostile.locator(`${W} >> form textarea`).fill('hostile test: how do I reset my password?')
    await hostile.locator(`${W} >> form textarea`).press('Enter')
    await expect.poll(() => hostile.locator(`${W} >> .msg.assistant .bubble`).last().textContent(), { timeout: 20_000 }).toMatch(/\S/)
    await hostile.waitForTimeout(300)
    expect(await hostile.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
    const html = await hostile.locator(`${W} >> .log`).innerHTML()
    expect(html).not.toMatch(/<img|<script|javascript:/i)
    await hostile.close()
  })

  it('is refused on a page of a host the bot does not allow', async () => {
    const other = await browser.context.newPage()
    const configCalls: string[] = []
    other.on('requestfailed', (r) => {
      if (r.url().includes('/widget/config')) configCalls.push('failed')
    })
    other.on('response', (r) => {
      if (r.url().includes('/widget/config')) configCalls.push(String(r.status()))
    })
    await other.goto(refused.url)
    // The widget asked for its configuration and got nothing it may read (403 without CORS headers).
    await expect.poll(() => configCalls.length, { timeout: 10_000 }).toBeGreaterThan(0)
    expect(configCalls[0]).toMatch(/^(failed|403)$/)
    await other.waitForTimeout(300)
    expect(await other.locator(`${W} >> .launcher`).isVisible()).toBe(false)
    // A script on that page cannot read the API either.
    const direct = await other.evaluate(async (url) => {
      try {
        const r = await fetch(url)
        return `read ${r.status}`
      } catch {
        return 'blocked'
      }
    }, `${t.url}/widget/config?bot_id=${bot.public_id}`)
    expect(direct).toBe('blocked')
    await other.close()
  })
})
