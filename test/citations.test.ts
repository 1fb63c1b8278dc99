import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { publicAddress } from '../src/modules/documents/parsers/public-address.fns.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, sseFrames, withDocs } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'

/**
 * Issue 14 item 2 / contract "Later decisions": an uploaded file that names its public address is cited in
 * the widget's done.sources like a crawled page, and the chat logs show which documents an answer cited.
 */
let fake: FakeLlm
let t: TestApp

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})
afterEach(() => fake.reset())

const REFUNDS_WITH_URL = `---
title: Refund policy
canonical: https://help.example.com/refunds
---
# Refunds

Refunds are processed within 5 business days after we receive the returned item.
`

const SHIPPING_NO_URL = `# Shipping

Standard shipping to Germany takes 3 to 4 working days and costs 4.90 euros.
`

async function widgetTurn(publicId: string, message: string) {
  const res = await fetch(`${t.url}/widget/chat?bot_id=${publicId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` },
    body: JSON.stringify({ message }),
  })
  expect(res.status).toBe(200)
  return sseFrames(await res.text())
}

describe('citations of uploaded files', () => {
  it('reads the public address from front matter or a canonical link, absolute http(s) only', () => {
    expect(publicAddress('---\nurl: https://docs.example.com/a\n---\n# A')).toBe('https://docs.example.com/a')
    expect(publicAddress('---\npermalink: https://docs.example.com/p/\n---\nx')).toBe('https://docs.example.com/p/')
    expect(publicAddress('+++\ncanonical = "https://docs.example.com/t"\n+++\nx')).toBe('https://docs.example.com/t')
    expect(publicAddress('<link rel="canonical" href="https://docs.example.com/h">\n# H')).toBe('https://docs.example.com/h')
    expect(publicAddress('---\npermalink: /docs/relative/\n---\nx')).toBeNull()
    expect(publicAddress('---\nurl: javascript:alert(1)\n---\nx')).toBeNull()
    expect(publicAddress('# No address\n\nurl: https://not-front-matter.example.com')).toBeNull()
  })

  it('an uploaded file with a canonical address is cited in done.sources; one without is not; the logs name both by title', async () => {
    const owner = await createTenant(t)
    const ids = await withDocs(t, owner, { 'refunds.md': REFUNDS_WITH_URL, 'shipping.md': SHIPPING_NO_URL })

    const doc = await owner.api.get(`/documents/${ids['refunds.md']}`)
    expect(doc.body.source_url).toBe('https://help.example.com/refunds')
    expect((await owner.api.get(`/documents/${ids['shipping.md']}`)).body.source_url).toBeNull()

    const frames = await widgetTurn(owner.bot.public_id, 'How long do refunds take?')
    const done = frames.find((f) => f.type === 'done')
    expect(done.text).toMatch(/5 business days/)
    expect(done.sources).toEqual([{ title: 'Refund policy', url: 'https://help.example.com/refunds' }])

    const shipping = (await widgetTurn(owner.bot.public_id, 'How long does standard shipping to Germany take?')).find((f) => f.type === 'done')
    expect(shipping.text).toMatch(/3 to 4 working days/)
    expect(shipping.sources).toEqual([])

    // the same over the server-to-server API: the cited document ids, then their titles in the log
    const r = await chatApi(t, owner).post('/chat', { question: 'How long do refunds take?' })
    expect(r.status).toBe(200)
    expect(r.body.source_documents).toEqual([ids['refunds.md']])
    const log = await owner.api.get(`/chat/logs/session/${r.body.session_id}`)
    const answer = log.body.messages.find((m: any) => m.role === 'assistant')
    expect(answer.cited_documents).toEqual([{ id: ids['refunds.md'], title: 'Refund policy', url: 'https://help.example.com/refunds' }])

    const widgetLog = await owner.api.get(`/chat/logs/session/${shipping.session_id}`)
    const cited = widgetLog.body.messages.filter((m: any) => m.role === 'assistant').flatMap((m: any) => m.cited_documents)
    expect(cited).toEqual([{ id: ids['shipping.md'], title: 'Shipping', url: null }])
  })
})
