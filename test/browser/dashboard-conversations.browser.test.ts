import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chatApi, REFUNDS_MD, withDocs } from '../helpers/chat.js'
import type { Tenant } from '../helpers/factories.js'
import { hasChromium } from './harness.js'
import { expectScreenHealthy, openScreen, screenshot, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'

const suite = hasChromium ? describe : describe.skip

suite('dashboard: conversations, transcript and bad answers in Chromium', { timeout: 90_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant

  beforeAll(async () => {
    env = await startDashboardEnv()
    tenant = await signedInTenant(env)
  }, 120_000)
  afterAll(async () => {
    await env?.close()
  })

  it('lists a conversation, shows its transcript with the cited source and keeps an ideal answer in Bad answers', async () => {
    const w = await watchedPage(env)
    const { page } = w
    await openScreen(page, env, '/conversations', 'Conversations')
    await page.getByText('No conversations yet').waitFor()
    await expectScreenHealthy(w, 'conversations (empty)')
    await openScreen(page, env, '/conversations/bad-answers', 'Bad answers')
    await page.getByText('No bad answers').waitFor()
    await expectScreenHealthy(w, 'bad answers (empty)')

    // Two turns through the API (the fake model answers from the uploaded document); the second one holds
    // an email address (redacted, original kept) and markup that must stay text.
    await withDocs(env.t, tenant, { 'refunds.md': REFUNDS_MD })
    const chat = chatApi(env.t, tenant)
    const first = await chat.post('/chat', { question: 'How long do refunds take?' })
    expect(first.status, first.text).toBe(200)
    expect(first.body.source_documents.length).toBe(1)
    const sid = first.body.session_id as string
    const second = await chat.post('/chat', {
      question: 'I am jane.doe@example.com <img src=x onerror="window.__xss=1"> can digital products be refunded?',
      session_id: sid,
    })
    expect(second.status, second.text).toBe(200)

    await openScreen(page, env, '/conversations', 'Conversations')
    const link = page.getByRole('link', { name: /can digital products be refunded/ })
    await link.waitFor()
    const row = page.getByRole('row').filter({ has: link })
    expect(await row.textContent()).toMatch(/4/) // four messages
    await expectScreenHealthy(w, 'conversations')

    await link.click()
    await page.getByRole('heading', { level: 1, name: 'Conversation' }).waitFor()
    const messages = page.getByRole('list', { name: 'Messages' }).locator(':scope > li')
    await expect.poll(() => messages.count()).toBe(4)
    const answer = messages.nth(1)
    expect(await answer.textContent()).toContain('Refunds are processed within 5 business days')
    // The cited document, by its title, linking to the document.
    await answer.getByRole('link', { name: 'Refunds' }).waitFor()
    // Visitor text is plain text: the markup is shown, never run.
    const visitor = messages.nth(2)
    expect(await visitor.textContent()).toContain('<img src=x')
    expect(await visitor.locator('img').count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined()
    expect(await visitor.textContent()).not.toContain('jane.doe@example.com')
    await expectScreenHealthy(w, 'transcript')

    // The original text, then deleting it.
    await page.getByRole('button', { name: 'Show original' }).click()
    await visitor.getByText(/jane\.doe@example\.com/).waitFor()
    page.once('dialog', (d) => void d.accept())
    await page.getByRole('button', { name: 'Delete original text' }).click()
    await page.getByText(/Original text deleted from \d+ message/).waitFor()
    await expect.poll(() => page.getByRole('button', { name: 'Show original' }).count()).toBe(0)

    // Mark the first answer bad with an ideal answer.
    await answer.getByRole('button', { name: 'Write ideal answer' }).click()
    await answer.getByLabel('Ideal answer').fill('Refunds take 5 business days once the item is back; digital goods within 14 days.')
    await answer.getByRole('button', { name: 'Save ideal answer' }).click()
    await page.getByText('Ideal answer saved').waitFor()
    await answer.getByText('Marked as a bad answer').waitFor()
    await answer.getByText(/digital goods within 14 days/).waitFor()
    await expectScreenHealthy(w, 'transcript (ideal answer)')
    await screenshot(env, page, 'transcript')

    await page.getByRole('link', { name: '← Conversations' }).click()
    await page.getByRole('heading', { level: 1, name: 'Conversations' }).waitFor()
    await page.getByRole('link', { name: 'Bad answers' }).click()
    await page.getByRole('heading', { level: 1, name: 'Bad answers' }).waitFor()
    const item = page.locator('.bad-list > li').filter({ hasText: 'How long do refunds take?' })
    await item.waitFor()
    expect(await item.textContent()).toContain('Refunds are processed within 5 business days')
    await item.getByText(/digital goods within 14 days/).waitFor()
    // Edit it from here too.
    await item.getByRole('button', { name: 'Edit ideal answer' }).click()
    await item.getByLabel('Ideal answer').fill('Five business days after the return arrives.')
    await item.getByRole('button', { name: 'Save ideal answer' }).click()
    await item.getByText('Five business days after the return arrives.').waitFor()
    const bad = await tenant.api.get('/chat/bad-answers?limit=20&offset=0')
    expect(bad.body.items.map((b: { ideal_answer: string }) => b.ideal_answer)).toEqual(['Five business days after the return arrives.'])
    await expectScreenHealthy(w, 'bad answers')
    await item.getByRole('link', { name: 'Open conversation' }).click()
    await page.getByRole('heading', { level: 1, name: 'Conversation' }).waitFor()
    await page.close()
  })

  it('says why a turn handed off: the pages the answer model read, or that no page speaks of the question', async () => {
    const w = await watchedPage(env)
    const { page } = w
    const chat = chatApi(env.t, tenant)
    // the refunds page shares "refund" with the question, so the answer model reads it and finds no answer
    const read = await chat.post('/chat', { question: 'Can I get my refund paid out in bitcoin?' })
    expect(read.status, read.text).toBe(200)
    expect(read.body.ticket_number, JSON.stringify(read.body)).toBeTruthy()
    // nothing in the knowledge speaks of shipping abroad: the relevance floor hands it off before any model call
    const none = await chat.post('/chat', { question: 'Do you ship parcels to Canada?' })
    expect(none.status, none.text).toBe(200)
    expect(none.body.ticket_number, JSON.stringify(none.body)).toBeTruthy()

    await openScreen(page, env, `/conversations/${read.body.session_id}`, 'Conversation')
    const messages = page.getByRole('list', { name: 'Messages' }).locator(':scope > li')
    await expect.poll(() => messages.count()).toBe(2)
    const why = messages.nth(1).locator('.handoff-why')
    await why.getByText('The bot read these pages and found no answer to the question in them:').waitFor()
    await why.getByRole('link', { name: 'Refunds' }).waitFor()
    await screenshot(env, page, 'transcript-handoff')
    await openScreen(page, env, `/conversations/${none.body.session_id}`, 'Conversation')
    await expect.poll(() => messages.count()).toBe(2)
    await messages.nth(1).locator('.handoff-why').getByText('No page of the knowledge speaks of what the question asks.').waitFor()
    await expectScreenHealthy(w, 'transcript (hand-off)')
    await page.close()
  })
})
