import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FakeZendesk } from '../fakes/help-centres.js'
import { FakeWebsite, html, links, prose } from '../fakes/website.js'
import type { Tenant } from '../helpers/factories.js'
import { hasChromium } from './harness.js'
import { expectScreenHealthy, openScreen, screenshot, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'

const suite = hasChromium ? describe : describe.skip

const GUIDE_MD = `# Returns guide

Returned parcels are inspected within two working days after they reach our warehouse in Leipzig.

## Labels

Print the prepaid label from your account page and attach it to the outside of the parcel.
`
const NOTES_TXT = 'Opening hours of the support desk: Monday to Friday, 8:00 to 18:00 Central European Time. The desk is closed on public holidays.'

suite('dashboard: knowledge screens in Chromium', { timeout: 180_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant
  let site: FakeWebsite
  let zendesk: FakeZendesk

  beforeAll(async () => {
    env = await startDashboardEnv()
    tenant = await signedInTenant(env)
    site = await new FakeWebsite({
      '/': { body: html('Help center', prose('Help center') + links(['/billing', '/shipping'])) },
      '/billing': { body: html('Billing questions', prose('Billing invoices')) },
      '/shipping': { body: html('Shipping times', prose('Shipping parcels')) },
      '/robots.txt': { body: 'User-agent: *\nAllow: /\n', contentType: 'text/plain' },
    }).start()
    zendesk = await new FakeZendesk()
      .put({ id: 101, title: 'Reset your password', body: '<p>Open <b>Settings</b>, then <i>Security</i>, and choose Reset password.</p>' })
      .put({ id: 102, title: 'Change your plan', body: '<p>Plans are changed under Billing; the new price applies from the next invoice.</p>' })
      .put({ id: 103, title: 'Unreleased feature notes', body: '<p>Internal draft.</p>', draft: true })
      .start()
  }, 120_000)
  afterAll(async () => {
    await zendesk?.stop()
    await site?.stop()
    await env?.close()
  })

  it('uploads several files at once with a result per file, shows a document and deletes it', async () => {
    const w = await watchedPage(env)
    const { page } = w
    await openScreen(page, env, '/knowledge', 'Knowledge')
    await page.getByText('No documents yet').waitFor()
    await page.getByText('No websites yet').waitFor()
    await expectScreenHealthy(w, 'knowledge (empty)')

    await page.locator('input[type=file]').setInputFiles([
      { name: 'returns-guide.md', mimeType: 'text/markdown', buffer: Buffer.from(GUIDE_MD) },
      { name: 'hours.txt', mimeType: 'text/plain', buffer: Buffer.from(NOTES_TXT) },
      { name: 'setup.exe', mimeType: 'application/octet-stream', buffer: Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04]) },
    ])
    const uploads = page.getByRole('list', { name: 'Uploads' })
    const row = (name: string) => uploads.getByRole('listitem').filter({ hasText: name })
    await row('returns-guide.md').getByText('Ready', { exact: true }).waitFor({ timeout: 60_000 })
    await row('hours.txt').getByText('Ready', { exact: true }).waitFor({ timeout: 60_000 })
    // The service's own words for the refused file, next to it.
    await row('setup.exe').locator('.upload-error').waitFor()
    const refused = await row('setup.exe').locator('.upload-error').textContent()
    expect(refused).toMatch(/\w{4,}/)
    expect(refused).not.toMatch(/The service answered/)

    // Both documents are listed as ready, the refused one is not.
    const docs = page.getByRole('table').first()
    await expect.poll(() => docs.getByText('Ready', { exact: true }).count(), { timeout: 20_000 }).toBe(2)
    expect(await docs.getByText('setup.exe').count()).toBe(0)
    await expectScreenHealthy(w, 'knowledge (uploaded)')
    await screenshot(env, page, 'knowledge-uploads')

    await docs.getByRole('link', { name: 'Returns guide' }).click()
    await page.getByRole('heading', { level: 1, name: 'Returns guide' }).waitFor()
    await expect.poll(() => page.locator('pre.parsed-text').textContent()).toContain('inspected within two working days')
    await page.getByRole('button', { name: 'Run check' }).click()
    await page.getByText('Health check done').waitFor()
    await page
      .getByText(/Score \d+ of 100|No score|No warnings/)
      .first()
      .waitFor()
    await expectScreenHealthy(w, 'document detail')

    page.once('dialog', (d) => void d.accept())
    await page.getByRole('button', { name: 'Delete document' }).click()
    await page.getByRole('heading', { level: 1, name: 'Knowledge' }).waitFor()
    await page.getByText('Document deleted').waitFor()
    await expect.poll(() => page.getByRole('link', { name: 'Returns guide' }).count()).toBe(0)
    expect((await tenant.api.get('/documents/sources')).body.documents.map((d: { filename: string }) => d.filename)).toEqual(['hours.txt'])

    // Files dropped on the drop zone upload the same way.
    const drop = await page.evaluateHandle(() => {
      const dt = new DataTransfer()
      dt.items.add(new File(['# Warranty\n\nEvery device has a two year warranty from the day of delivery.\n'], 'warranty.md', { type: 'text/markdown' }))
      return dt
    })
    await page.locator('.dropzone').dispatchEvent('drop', { dataTransfer: drop })
    await row('warranty.md').getByText('Ready', { exact: true }).waitFor({ timeout: 60_000 })
    await page.close()
  })

  it('adds a website, shows field errors, follows the crawl and opens the source', async () => {
    const w = await watchedPage(env)
    const { page } = w
    await openScreen(page, env, '/knowledge', 'Knowledge')
    await page.getByLabel('Website address').fill('not a url')
    await page.getByRole('button', { name: 'Add website' }).click()
    await page.locator('.field-error, [role=alert]').first().waitFor()

    await page.getByLabel('Website address').fill(`${site.url}/`)
    await page.getByLabel('Name (optional)', { exact: true }).fill('Help center')
    await page.getByLabel('Read it again').selectOption('manual')
    await page.getByLabel('Leave out (optional)').fill('/careers\n/jobs/*')
    await page.getByRole('button', { name: 'Add website' }).click()
    const link = page.getByRole('link', { name: 'Help center' })
    await link.waitFor()
    const srcRow = page.getByRole('row').filter({ has: link })
    await expect.poll(() => srcRow.textContent(), { timeout: 60_000 }).toMatch(/3 of 3 pages indexed/)
    await srcRow.getByText('Ready', { exact: true }).waitFor({ timeout: 60_000 })
    await expectScreenHealthy(w, 'knowledge (website)')

    await link.click()
    await page.getByRole('heading', { level: 1, name: 'Help center' }).waitFor()
    await expect.poll(() => page.getByRole('heading', { name: /Pages \(\d+\)/ }).textContent(), { timeout: 20_000 }).toBe('Pages (3)')
    await page.getByRole('link', { name: 'Billing questions' }).waitFor()
    await expect.poll(() => page.getByLabel('Leave out', { exact: true }).inputValue()).toBe('/careers\n/jobs/*')
    await page.getByRole('heading', { name: 'Recent reads' }).waitFor()
    await expectScreenHealthy(w, 'source detail')
    await screenshot(env, page, 'source-detail')

    // Remove one page: it goes away and is excluded from future reads.
    page.once('dialog', (d) => void d.accept())
    await page.getByRole('button', { name: 'Remove page Billing questions' }).click()
    await page.getByText('Page removed and left out from now on').waitFor()
    await expect.poll(() => page.getByRole('link', { name: 'Billing questions' }).count()).toBe(0)

    // Pause and resume through PATCH.
    await page.getByRole('button', { name: 'Pause' }).click()
    await page.getByText('Website paused').waitFor()
    await page.getByRole('button', { name: 'Resume' }).click()
    await page.getByText('Website resumed').waitFor()
    await page.getByRole('button', { name: 'Refresh now' }).click()
    await page.getByText('Reading the website again…').waitFor()
    expect(w.errors).toEqual([])
    await page.close()
  })

  it('connects a Zendesk help centre: a refused token in words, the test lists articles with drafts marked, the sync counts them', async () => {
    const w = await watchedPage(env)
    const { page } = w
    await openScreen(page, env, '/knowledge', 'Knowledge')
    const form = page.getByRole('form', { name: 'Connect a help centre' })
    await form.getByLabel('Help centre', { exact: true }).selectOption('zendesk')
    await form.getByLabel('Help centre address').fill(zendesk.url)
    await form.getByLabel('Agent e-mail').fill(zendesk.email)
    await form.getByLabel('API token').fill('not-the-token')
    await form.getByRole('button', { name: 'Test connection' }).click()
    // The upstream's 401 in the service's words, never the token.
    const failed = form.getByText(/The connection failed: .*token was refused/)
    await failed.waitFor({ timeout: 30_000 })
    expect(await form.textContent()).not.toContain('not-the-token')

    await form.getByLabel('API token').fill(zendesk.token)
    await form.getByRole('button', { name: 'Test connection' }).click()
    const found = form.getByRole('list', { name: 'Articles found' })
    await found.getByText('Reset your password').waitFor({ timeout: 30_000 })
    await found.getByRole('listitem').filter({ hasText: 'Unreleased feature notes' }).getByText('Draft: not used').waitFor()
    await expectScreenHealthy(w, 'knowledge (connector tested)')
    await screenshot(env, page, 'knowledge-connect-test')

    await form.getByLabel('Display name (optional)').fill('Acme help centre')
    await form.getByLabel('Sync').selectOption('manual')
    await form.getByRole('button', { name: 'Connect', exact: true }).click()
    const link = page.getByRole('link', { name: 'Acme help centre' })
    await link.waitFor({ timeout: 30_000 })
    const row = page.getByRole('row').filter({ has: link })
    // Two published articles added; the draft never counted as added.
    await expect.poll(() => row.textContent(), { timeout: 60_000 }).toMatch(/Last sync: 2 added, 0 updated, 0 deleted/)
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('2 of 2 articles indexed')
    expect(await row.textContent()).toContain('Only when I refresh')
    expect(await row.textContent()).not.toContain(zendesk.token)
    await expectScreenHealthy(w, 'knowledge (connector synced)')
    await screenshot(env, page, 'knowledge-connect-synced')
    expect(w.errors).toEqual([])
    await page.close()
  })
})
