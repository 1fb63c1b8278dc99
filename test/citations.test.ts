import { afterAll, beforeAll, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, REFUNDS_MD, sseFrames, withDocs } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'

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

// An uploaded file that names its public address is cited like a crawled page (contract, "Later decisions").
it('cites an uploaded markdown file by the address its front matter names, in /chat and in the widget stream', async () => {
  const owner = await createTenant(t)
  const withUrl = `---\ntitle: Refunds\ncanonical: https://help.example.com/refunds\n---\n${REFUNDS_MD}`
  const docs = await withDocs(t, owner, { 'refunds.md': withUrl })
  const doc = await owner.api.get(`/documents/${docs['refunds.md']}`)
  expect(doc.body.source_url).toBe('https://help.example.com/refunds')

  const r = await chatApi(t, owner).post('/chat', { question: 'How long do refunds take?' })
  expect(r.status, r.text).toBe(200)
  expect(r.body.source_documents).toEqual([docs['refunds.md']])
  expect(r.body.sources).toEqual([{ title: expect.stringContaining('Refunds'), url: 'https://help.example.com/refunds' }])

  const s = await t.api().post(`/widget/chat?bot_id=${owner.bot.public_id}`, { message: 'How long do refunds take?' })
  const done = sseFrames(s.text).find((f) => f.type === 'done')
  expect(done.sources).toEqual([{ title: expect.stringContaining('Refunds'), url: 'https://help.example.com/refunds' }])
})

it('does not cite a file whose front matter names no usable address', async () => {
  const owner = await createTenant(t)
  const md = `---\ntitle: Refunds\npermalink: /refunds/\nurl: "javascript:alert(1)"\n---\n${REFUNDS_MD}`
  const docs = await withDocs(t, owner, { 'refunds.md': md })
  expect((await owner.api.get(`/documents/${docs['refunds.md']}`)).body.source_url).toBeNull()
  const r = await chatApi(t, owner).post('/chat', { question: 'How long do refunds take?' })
  expect(r.body.source_documents).toEqual([docs['refunds.md']])
  expect(r.body.sources).toEqual([])
})
