import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePng } from '../helpers/attachments.js'
import { isAnswer, REFUNDS_MD, withDocs } from '../helpers/chat.js'
import type { Tenant } from '../helpers/factories.js'
import { until } from '../helpers/wait.js'
import { expectAccessible, openScreen, screenshot, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'
import { hasChromium, hostPageHtml, serveHostPage, type HostPage } from './harness.js'

/**
 * A screenshot from the widget to the model and the team (issue 54), in Chromium at desktop and phone width: the
 * visitor attaches one file with the keyboard (the paper clip is a named button: focused, Enter presses it) and
 * pastes a screenshot into the message box; both are sent with the question; the fake model receives both as image
 * parts; the visitor asks for a person, and the agent sees the thumbnails in the ticket's thread and opens one.
 */
const suite = hasChromium ? describe : describe.skip
const LIVE = { timeout: 60_000 }
const W = '[data-support-chat]'

suite('attachments: widget to model to ticket thread in Chromium', { timeout: 300_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant
  let site: HostPage

  beforeAll(async () => {
    env = await startDashboardEnv()
    tenant = await signedInTenant(env)
    await withDocs(env.t, tenant, { 'refunds.md': REFUNDS_MD })
    env.fake.script((req) =>
      isAnswer(req as never) ? { text: 'Refunds are processed within 5 business days after we receive the returned item. [1]' } : undefined,
    )
    site = await serveHostPage(() => hostPageHtml({ embedSrc: `${env.t.url}/embed.js`, botId: tenant.bot.public_id }))
  }, 180_000)
  afterAll(async () => {
    await site?.close()
    await env?.close()
  })

  for (const viewport of [
    { name: 'desktop', width: 1280, height: 800 },
    { name: 'phone', width: 390, height: 844 },
  ]) {
    it(`a pasted screenshot and a picked file reach the model and the agent's thread (${viewport.name})`, async () => {
      const visitor = await env.browser.context.newPage()
      await visitor.setViewportSize({ width: viewport.width, height: viewport.height })
      visitor.on('pageerror', (e) => console.warn('widget page error:', e.message))
      await visitor.goto(site.url)
      // a visitor of their own: the other viewport's conversation (handed to a person) is not continued
      await visitor.evaluate(() => {
        localStorage.clear()
        sessionStorage.clear()
      })
      await visitor.reload()
      await visitor.locator(`${W} >> .launcher`).click()
      const input = visitor.locator(`${W} >> form textarea`)
      await input.waitFor(LIVE)

      // the keyboard: from the message box, Shift+Tab reaches the paper clip (a named button), Enter opens the picker
      const attach = visitor.locator(`${W} >> button.attach`)
      expect(await attach.getAttribute('aria-label')).toBeTruthy()
      await attach.focus()
      expect(await attach.evaluate((el) => (el.getRootNode() as Document | ShadowRoot).activeElement === el)).toBe(true)
      await attach.evaluate((el) => {
        ;(window as unknown as { clipClicked: boolean }).clipClicked = false
        el.addEventListener('click', () => {
          ;(window as unknown as { clipClicked: boolean }).clipClicked = true
        })
      })
      await visitor.keyboard.press('Enter')
      await expect.poll(() => visitor.evaluate(() => (window as unknown as { clipClicked: boolean }).clipClicked), LIVE).toBe(true)
      // the picker it opens (headless Chromium shows no chooser for it): the file set on the picker itself
      await visitor
        .locator(`${W} >> input[type=file]`)
        .setInputFiles({ name: `steps-${viewport.name}.png`, mimeType: 'image/png', buffer: makePng({ width: 40, height: 30 }) })

      // a screenshot pasted into the message box (as the clipboard hands it over: a File named image.png)
      const shot = [...makePng({ width: 120, height: 80 })]
      await input.evaluate((el, bytes) => {
        const data = new DataTransfer()
        data.items.add(new File([new Uint8Array(bytes)], 'image.png', { type: 'image/png' }))
        el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
      }, shot)
      const tray = visitor.locator(`${W} >> .tray li`)
      await expect.poll(() => tray.count(), LIVE).toBe(2)
      await expect.poll(() => visitor.locator(`${W} >> .tray li.busy`).count(), LIVE).toBe(0)
      await screenshot(env, visitor, `attachments-widget-tray-${viewport.name}`)
      await expectAccessible(visitor, `widget with two files in the tray (${viewport.name})`)

      const before = env.fake.chatCalls().length
      // a question of its own per viewport (an answer may be reused for the same words)
      await input.fill(`My refund fails with this error on the ${viewport.name}. How long do refunds take?`)
      await input.press('Enter')
      await visitor.locator(`${W} >> .msg.assistant`, { hasText: '5 business days' }).waitFor(LIVE)
      const answer = env.fake
        .chatCalls()
        .slice(before)
        .find((c) => isAnswer(c as never))!
      expect(answer, 'the answer call').toBeDefined()
      const user = answer.messages.at(-1)!
      expect(user.images).toHaveLength(2)
      expect(user.content).toContain(`[image: steps-${viewport.name}.png]`)
      // the visitor's message lists its files
      await visitor.locator(`${W} >> .msg.user .files li`, { hasText: `steps-${viewport.name}.png` }).waitFor(LIVE)
      // and shows its images small, loaded from the service (a drawn paperclip, not a character the fonts may lack)
      const shown = visitor.locator(`${W} >> .msg.user .files li`, { hasText: `steps-${viewport.name}.png` }).locator('img.thumb')
      await expect.poll(() => shown.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), LIVE).toBe(true)
      expect(await visitor.locator(`${W} >> .msg.user .files li svg`).count()).toBeGreaterThan(0)
      await screenshot(env, visitor, `attachments-widget-sent-${viewport.name}`)

      // a person, please: the ticket
      await visitor.locator(`${W} >> button.human`).click()
      await visitor.locator(`${W} >> .escalate .btn:not(.ghost)`).click()
      const number = (await visitor
        // one line names the hand-off's ticket: the bot's words or, failing them, the widget's (issue 52, item 12)
        .locator(`${W} >> .msg.assistant`)
        .or(visitor.locator(`${W} >> .system`))
        .filter({ hasText: /ESC-\d{4}/ })
        .first()
        .textContent(LIVE))!.match(/ESC-\d{4}/)![0]
      const ticket = await until(
        'the ticket',
        async () =>
          (((await tenant.api.get('/escalations')).body.tickets ?? []) as { id: string; ticket_number: string }[]).find((x) => x.ticket_number === number) ??
          null,
        60_000,
      )

      // the agent: both thumbnails under the visitor's message in the thread; one opens as a download
      const w = await watchedPage(env, { width: viewport.width, height: viewport.height })
      const op = w.page
      await openScreen(op, env, `/tickets/${ticket.id}`, `Ticket ${number}`)
      const files = op.locator('section.live-chat ol.thread .msg-user .msg-files li')
      await expect.poll(() => files.count(), LIVE).toBe(2)
      const thumb = files.first().locator('img')
      await thumb.waitFor(LIVE)
      await expect.poll(() => thumb.evaluate((img) => (img as HTMLImageElement).naturalWidth), LIVE).toBe(40)
      // a row of thumbnails, not a bulleted list
      expect(await files.first().evaluate((li) => getComputedStyle(li).listStyleType)).toBe('none')
      await files.first().scrollIntoViewIfNeeded()
      await screenshot(env, op, `attachments-thread-${viewport.name}`)
      const [download] = await Promise.all([op.waitForEvent('download', LIVE), files.first().locator('a').click()])
      expect(download.suggestedFilename()).toBe(`steps-${viewport.name}.png`)

      // the agent answers with a picture of their own: it reaches the visitor's open widget, shown small
      await op.getByLabel('Reply to the visitor').fill('Click the button marked here.')
      await op
        .locator('.reply-files input[type=file]')
        .setInputFiles({ name: `where-${viewport.name}.png`, mimeType: 'image/png', buffer: makePng({ width: 48, height: 36 }) })
      await op
        .locator('.reply-files li', { hasText: `where-${viewport.name}.png` })
        .filter({ hasText: 'KB' })
        .waitFor(LIVE)
      await op.getByRole('button', { name: 'Send', exact: true }).click()
      const sent = visitor.locator(`${W} >> .msg.operator`, { hasText: 'Click the button marked here.' })
      await sent.waitFor(LIVE)
      const picture = sent.locator('.files li', { hasText: `where-${viewport.name}.png` }).locator('img.thumb')
      await expect.poll(() => picture.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), LIVE).toBe(48)
      expect(w.errors, 'console errors on the ticket').toEqual([])
      await op.close()
      await visitor.close()
    })
  }
})
