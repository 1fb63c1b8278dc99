import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChatRequestInfo } from '../fakes/fake-llm.js'
import { REFUNDS_MD, system, withDocs } from '../helpers/chat.js'
import type { Tenant } from '../helpers/factories.js'
import { handedOff } from '../helpers/live.js'
import { expectAccessible, expectFitsPhone, openScreen, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'
import { hasChromium } from './harness.js'

/**
 * Operator assist on the ticket page: "Suggest reply" shows the model's draft and its sources beside the composer,
 * "Insert" puts it in the composer to edit and send (sent with its suggestion_id); a draft the conversation moved
 * past is never inserted. At desktop and at phone width.
 */
const suite = hasChromium ? describe : describe.skip
const LIVE = { timeout: 20_000 }
const isSuggest = (r: ChatRequestInfo) => system(r).includes('You draft the next reply')
const isSummary = (r: ChatRequestInfo) => system(r).includes('You summarise a support conversation')

suite('operator assist in Chromium', { timeout: 300_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant

  beforeAll(async () => {
    env = await startDashboardEnv()
    tenant = await signedInTenant(env)
    await withDocs(env.t, tenant, { 'refunds.md': REFUNDS_MD })
  }, 420_000)
  afterAll(async () => {
    await env?.close()
  })

  const drafts = () =>
    env.t.ctx.db.selectFrom('assist_drafts').select(['kind', 'used_at', 'used_unedited', 'stale']).where('tenant_id', '=', tenant.tenantId).execute()

  async function visitorSays(bot: string, sid: string, message: string) {
    const res = await fetch(`${env.t.url}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.77' },
      body: JSON.stringify({ message }),
    })
    expect(res.status).toBe(200)
    await res.text()
  }

  for (const viewport of [
    { name: 'desktop', width: 1280, height: 800 },
    { name: 'phone', width: 390, height: 844 },
  ]) {
    it(`a suggestion is inserted, edited and sent; a stale one is refused (${viewport.name})`, async () => {
      const { ticket, bot, sid } = await handedOff(env.t, tenant, { note: 'How long do refunds take?' })
      env.fake.reset()
      env.fake.script((r) => (isSuggest(r) ? { text: 'Refunds are processed within 5 business days [1].' } : undefined))
      env.fake.script((r) => (isSummary(r) ? { text: 'Wants: to know when the refund comes.\nBot said: nothing yet.\nOpen: the refund date.' } : undefined))
      const w = await watchedPage(env, { width: viewport.width, height: viewport.height })
      const op = w.page
      await openScreen(op, env, `/tickets/${ticket.id}`, `Ticket ${ticket.ticket_number}`)
      const chat = op.locator('section.live-chat')

      // the summary at the top of the live chat
      await chat.getByRole('button', { name: 'Summarize' }).click()
      await chat.getByText('Wants: to know when the refund comes.', { exact: false }).waitFor(LIVE)

      // the suggestion and its source beside the composer; nothing sent yet
      await chat.getByRole('button', { name: 'Suggest reply' }).click()
      const suggestion = chat.getByTestId('suggestion')
      await suggestion.getByText('Refunds are processed within 5 business days [1].').waitFor(LIVE)
      await suggestion
        .getByRole('list', { name: 'Sources of the suggestion' })
        .getByText(/Refunds/)
        .waitFor(LIVE)
      expect(await chat.locator('.msg-operator').count()).toBe(0)
      await expectAccessible(op, `ticket with a suggested reply (${viewport.name})`)
      if (viewport.name === 'phone') await expectFitsPhone(op, 'ticket with a suggested reply')

      // one click inserts it into the composer; edited and sent
      await suggestion.getByRole('button', { name: 'Insert into reply' }).click()
      const field = chat.getByLabel('Reply to the visitor')
      expect(await field.inputValue()).toBe('Refunds are processed within 5 business days [1].')
      await field.fill(`${await field.inputValue()} Anything else I can do?`)
      await chat.getByRole('button', { name: 'Send', exact: true }).click()
      await chat.locator('.msg-operator', { hasText: 'Anything else I can do?' }).waitFor(LIVE)
      await expect.poll(async () => (await drafts()).filter((d) => d.kind === 'suggestion' && d.used_at).length, LIVE).toBeGreaterThanOrEqual(1)
      const used = (await drafts()).filter((d) => d.kind === 'suggestion' && d.used_at)
      expect(used.at(-1)!.used_unedited).toBe(false)

      // the visitor writes while the next suggestion is being written: it is never inserted
      env.fake.reset()
      env.fake.script((r) => (isSuggest(r) ? { text: 'A draft for an older conversation.', delayMs: 2500 } : undefined))
      await chat.getByLabel('Instruction (optional)').fill('shorter')
      await chat.getByRole('button', { name: 'Suggest reply' }).click()
      await env.fake.waitFor(() => env.fake.chatCalls().some(isSuggest), 15_000)
      await visitorSays(bot, sid, 'Hello? Are you still there?')
      await chat.getByRole('alert').filter({ hasText: 'The conversation moved on — suggest again.' }).waitFor(LIVE)
      expect(await chat.getByRole('button', { name: 'Insert into reply' }).count()).toBe(0)
      expect(await field.inputValue()).toBe('')
      expect(w.errors).toEqual([])
      await op.close()
    })
  }
})
