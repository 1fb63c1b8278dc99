import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebhookReceiver } from '../fakes/webhook-receiver.js'
import type { Tenant } from '../helpers/factories.js'
import { until } from '../helpers/wait.js'
import { hasChromium } from './harness.js'
import { expectScreenHealthy, openScreen, screenshot, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'

const suite = hasChromium ? describe : describe.skip

suite('dashboard: integrations (webhooks) in Chromium', { timeout: 90_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant
  let receiver: WebhookReceiver

  beforeAll(async () => {
    env = await startDashboardEnv()
    tenant = await signedInTenant(env)
    receiver = await new WebhookReceiver().start()
  }, 120_000)
  afterAll(async () => {
    await receiver?.close()
    await env?.close()
  })

  it('creates an endpoint with its secret shown once, sends a test event, shows the log, disables on 410 and resends', async () => {
    const w = await watchedPage(env)
    const { page } = w
    page.on('dialog', (d) => void d.accept())
    await openScreen(page, env, '/integrations', 'Integrations')
    await page.getByText('No endpoints yet').waitFor()
    await expectScreenHealthy(w, 'integrations (empty)')

    await page.getByRole('button', { name: 'New endpoint' }).click()
    await page.getByLabel('URL').fill('ftp://nowhere.example/x')
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    await page.locator('.field-error').first().waitFor()
    await page.getByLabel('URL').fill(receiver.url)
    await page.getByLabel('Description').fill('Our CRM')
    await page.getByLabel('A ticket is resolved (ticket.resolved)').check()
    await expectScreenHealthy(w, 'integrations (new endpoint form)')
    await page.getByRole('button', { name: 'Create endpoint' }).click()

    const secretBox = page.locator('.secret', { hasText: 'Signing secret.' })
    await secretBox.waitFor()
    const secret = (await secretBox.locator('code').textContent())!
    expect(secret).toMatch(/^whsec_/)
    receiver.secrets.push(secret)
    await page.getByRole('heading', { name: receiver.url }).waitFor()
    await expectScreenHealthy(w, 'integrations (secret shown)')
    await screenshot(env, page, 'integrations-secret')
    await page.getByRole('button', { name: 'I saved it' }).click()
    await page.reload()
    await page.getByRole('heading', { name: receiver.url }).waitFor()
    expect(await page.content()).not.toContain(secret)
    const listed = (await tenant.api.get('/webhooks/endpoints')).body.items
    expect(listed[0].events.sort()).toEqual(['ticket.created', 'ticket.resolved'])

    // The test button: the receiver verifies the signature with the reference package; the log shows it.
    await page.getByRole('button', { name: 'Send test event' }).click()
    await until('test event', async () => receiver.received.length === 1)
    expect(receiver.received[0]!.verifiedWith).toEqual([0])
    const log = page.getByRole('region', { name: `Deliveries to ${receiver.url}` })
    await log.getByText('delivered').waitFor({ timeout: 15_000 })
    await log.getByRole('button', { name: 'Attempts' }).click()
    await page
      .getByRole('region', { name: 'Attempts of the delivery' })
      .getByText(/HTTP 204/)
      .waitFor()
    await expectScreenHealthy(w, 'integrations (delivery log)')

    // A 410 disables the endpoint; enabled again, the failed delivery is resent.
    receiver.mode = 'gone'
    await page.getByRole('button', { name: 'Send test event' }).click()
    await page.getByText('The endpoint answered 410 Gone').waitFor({ timeout: 15_000 })
    await page.getByText('Disabled', { exact: true }).waitFor()
    receiver.mode = 'ok'
    await page.getByRole('button', { name: 'Enable' }).click()
    await page.getByText('Enabled', { exact: true }).waitFor()
    await log.getByRole('button', { name: 'Resend webhook.test delivery' }).first().waitFor()
    await page.getByRole('button', { name: 'Resend failed (30 days)' }).click()
    await page.getByText('1 failed deliveries queued again').waitFor()
    await until('resent', async () => receiver.received.length === 3)
    await expect.poll(async () => log.getByText('failed', { exact: true }).count(), { timeout: 15_000 }).toBe(0)

    // Rotation shows the new secret once, with the 24 h overlap explained.
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    await page.locator('.secret', { hasText: 'New signing secret.' }).getByText('24 hours', { exact: false }).waitFor()
    await expectScreenHealthy(w, 'integrations (rotated)')
  })
})
