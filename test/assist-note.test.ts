import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { ChatRequestInfo, FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { REFUNDS_MD, system, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'

/**
 * Issue 52, item 8: the suggested reply is given why the visitor asked for a person (their hand-off note), and a
 * saved reply's shortcut the service refuses is refused in words, not with a regular expression.
 */
let fake: FakeLlm
let t: TestApp
appWithFakeLlm({}, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())

const isSuggest = (r: ChatRequestInfo) => system(r).includes('You draft the next reply')

let owner: Tenant
beforeAll(async () => {
  owner = await createTenant(t)
  await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
})

describe('the suggested reply and the hand-off note', () => {
  it("gives the model the visitor's note (why they asked for a person) and searches with it", async () => {
    const visitor = t.api()
    const bot = owner.bot.public_id
    const sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id as string
    const chat = await fetch(`${visitor.base}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor.ip },
      body: JSON.stringify({ message: 'How long do refunds take?' }),
    })
    await chat.text()
    const note = 'I need help with my invoice, it shows the wrong company name'
    expect((await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: note })).status).toBe(200)
    const ticket = (await owner.api.get('/escalations')).body.tickets.find((x: { session_id: string }) => x.session_id === sid)
    expect(ticket.user_note).toBe(note)
    fake.script((r) => (isSuggest(r) ? { text: 'I will correct the company name on your invoice.' } : undefined))
    const r = await owner.api.post(`/escalations/${ticket.id}/suggest`, {})
    expect(r.status, r.text).toBe(200)
    const call = fake.chatCalls().filter(isSuggest).at(-1)!
    expect(call.messages.at(-1)!.content).toContain(`Why the visitor asked for a person: ${note}`)
    expect(system(call)).toContain('answer that, not again what the bot already answered')
    // the retrieval looked for the note's words (the embedding request holds them)
    expect(JSON.stringify(fake.embeddingCalls())).toContain('wrong company name')
  })
})

describe('saved replies: the shortcut in words', () => {
  it('refuses "Refund Time" with a message a person reads (no regular expression)', async () => {
    const r = await owner.api.post('/tenants/me/saved-replies', { title: 'Refund time', content: 'Five days.', shortcut: 'Refund Time' })
    expect(r.status).toBe(422)
    const item = r.body.detail.find((d: { loc: string[] }) => d.loc.includes('shortcut'))
    expect(item.msg).toContain('lower-case letters, digits and hyphens')
    expect(item.msg).toContain('refund-time')
    expect(item.msg).not.toContain('^[a-z0-9-]')
    // what the dashboard sends after normalising is taken
    const ok = await owner.api.post('/tenants/me/saved-replies', { title: 'Refund time', content: 'Five days.', shortcut: 'refund-time' })
    expect(ok.status, ok.text).toBe(201)
  })
})
