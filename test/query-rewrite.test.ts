import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type ChatCall, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, isAnswer, REFUNDS_MD, SHIPPING_MD, sseFrames, system, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { until } from './helpers/wait.js'

/**
 * Issue #29, RETRIEVAL_QUERY_REWRITE (chat/stages/05-search-rewrite.ts): a question in other words than the
 * knowledge ("kill my profile" where the page says "deactivate your account") is rewritten by the chat model
 * into the knowledge's words and searched again, the two retrievals fused. The fake model answers the rewrite
 * request with a scripted query (fake.searchQueryAs), as a model that knows help centres would.
 */
let fake: FakeLlm
let off: TestApp
let weak: TestApp
let ownerOff: Tenant
let ownerWeak: Tenant
let accountOff: string
let accountWeak: string

const ACCOUNT_MD = `# Deactivating your account

To deactivate your account, open Settings > Account and choose Deactivate. Everything you stored is removed 30 days later.
`
const PASSAGE = 'open Settings > Account and choose Deactivate'
const QUESTION = 'How can I kill my profile?'
const REWRITE = 'deactivate account'
const docs = { 'account.md': ACCOUNT_MD, 'refunds.md': REFUNDS_MD, 'shipping.md': SHIPPING_MD }

const isSearchRewrite = (c: ChatCall) => !c.json && system(c).includes('help-centre search query')
const promptHasPassage = (calls: ChatCall[]) => calls.filter(isAnswer).some((c) => c.messages.some((m) => m.content.includes(PASSAGE)))

beforeAll(async () => {
  fake = await startFakeLlm()
  ;[off, weak] = await Promise.all([
    startApp({ env: { LLM_BASE_URL: fake.url } }),
    startApp({ env: { LLM_BASE_URL: fake.url, RETRIEVAL_QUERY_REWRITE: 'weak' } }),
  ])
  ownerOff = await createTenant(off)
  ownerWeak = await createTenant(weak)
  accountOff = (await withDocs(off, ownerOff, docs))['account.md']!
  accountWeak = (await withDocs(weak, ownerWeak, docs))['account.md']!
  fake.searchQueryAs((q) => (q.includes('kill my profile') ? REWRITE : undefined))
})
afterAll(async () => {
  await Promise.all([off?.close(), weak?.close()])
  await fake?.close()
})

async function ask(t: TestApp, owner: Tenant, question: string) {
  const before = fake.chatCalls().length
  const r = await chatApi(t, owner).post('/chat', { question })
  expect(r.status, r.text).toBe(200)
  const log = await owner.api.get(`/chat/logs/session/${r.body.session_id}`)
  expect(log.status, log.text).toBe(200)
  const debug = log.body.messages.find((m: { debug: unknown }) => m.debug)?.debug
  return { body: r.body, calls: fake.chatCalls().slice(before), debug }
}

describe('search query rewrite', () => {
  it('off (the default): no rewrite call, and the answer passage in other words never reaches the generation prompt', async () => {
    const { body, calls, debug } = await ask(off, ownerOff, QUESTION)
    expect(body.text.length).toBeGreaterThan(0)
    expect(calls.filter(isSearchRewrite)).toHaveLength(0)
    expect(promptHasPassage(calls)).toBe(false)
    expect(debug.search_rewrite).toBeUndefined()
  })

  it('weak: a question whose words the knowledge lacks is rewritten once, and the passage is in the generation prompt', async () => {
    const { calls, debug } = await ask(weak, ownerWeak, QUESTION)
    const rewrites = calls.filter(isSearchRewrite)
    expect(rewrites).toHaveLength(1)
    expect(rewrites[0]!.body.model).toBe('gpt-4o-mini')
    expect(rewrites[0]!.body.max_tokens ?? rewrites[0]!.body.max_completion_tokens).toBeLessThanOrEqual(48)
    expect(promptHasPassage(calls)).toBe(true)
    expect(debug.search_rewrite).toMatchObject({ mode: 'weak', weak: true, used: true, query: REWRITE })
    expect(debug.search_rewrite.tokens).toBeGreaterThan(0)
    expect(debug.search_rewrite.ms).toBeGreaterThanOrEqual(0)
    expect(debug.timings.query_rewrite).toBeGreaterThanOrEqual(0)
  })

  it('weak: a question with strong lexical evidence costs no rewrite call', async () => {
    const { body, calls, debug } = await ask(weak, ownerWeak, 'How long do refunds take?')
    expect(body.text).toMatch(/5 business days/)
    expect(calls.filter(isSearchRewrite)).toHaveLength(0)
    expect(debug.search_rewrite).toMatchObject({ mode: 'weak', weak: false })
    expect(debug.search_rewrite.tokens).toBeUndefined()
  })

  it('a failing or slow rewrite call falls back to the original query and the turn still answers', async () => {
    fake.script((c) => (system(c).includes('help-centre search query') && c.messages.some((m) => m.content.includes('failing')) ? { status: 500 } : undefined))
    fake.script((c) =>
      system(c).includes('help-centre search query') && c.messages.some((m) => m.content.includes('slow')) ? { delayMs: 8000, text: REWRITE } : undefined,
    )
    for (const question of ['How can I kill my profile, failing?', 'How can I kill my profile, slow?']) {
      const { body, calls, debug } = await ask(weak, ownerWeak, question)
      expect(body.text.length).toBeGreaterThan(0)
      expect(calls.filter(isSearchRewrite).length).toBeGreaterThanOrEqual(1)
      expect(promptHasPassage(calls)).toBe(false)
      expect(debug.search_rewrite).toMatchObject({ mode: 'weak', weak: true, used: false })
      expect(typeof debug.search_rewrite.error).toBe('string')
    }
  }, 60_000)

  it("an evaluation's dry run goes through the same rewrite: the account page reaches the answer model's prompt only with the switch on", async () => {
    const dryRun = async (owner: Tenant, account: string) => {
      const before = fake.chatCalls().length
      const c = await owner.api.post('/evals/cases', { question: QUESTION, expect: { outcome: 'handed_off', sources_any: [account] } })
      expect(c.status, c.text).toBe(201)
      const started = await owner.api.post('/evals/runs', {})
      expect(started.status, started.text).toBe(202)
      const run = await until(
        'the evaluation run',
        async () => {
          const r = await owner.api.get(`/evals/runs/${started.body.id}`)
          return r.body.status === 'done' || r.body.status === 'failed' ? r.body : null
        },
        60_000,
      )
      expect(run.status, JSON.stringify(run)).toBe('done')
      expect(run.results.find((r: { case_id: string }) => r.case_id === c.body.id)).toBeTruthy()
      const calls = fake.chatCalls().slice(before)
      return { rewrites: calls.filter(isSearchRewrite).length > 0, passage: promptHasPassage(calls) }
    }
    // one after the other: the fake's calls tell the two apart by time
    expect(await dryRun(ownerOff, accountOff)).toEqual({ rewrites: false, passage: false })
    expect(await dryRun(ownerWeak, accountWeak)).toEqual({ rewrites: true, passage: true })
  }, 90_000)

  it("the rewritten query never appears in the visitor's transcript", async () => {
    const res = await fetch(`${weak.url}/widget/chat?bot_id=${ownerWeak.bot.public_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.29.1.1' },
      body: JSON.stringify({ message: QUESTION }),
    })
    expect(res.status).toBe(200)
    const stream = await res.text()
    const done = sseFrames(stream).find((f) => f.type === 'done')
    expect(done.session_id).toBeTruthy()
    const history = await weak.api().get(`/widget/history?bot_id=${ownerWeak.bot.public_id}&session_id=${done.session_id}`)
    expect(history.status, history.text).toBe(200)
    expect(history.body.messages.map((m: { content?: string; text?: string }) => m.content ?? m.text)).toContain(QUESTION)
    for (const text of [stream, JSON.stringify(history.body)]) expect(text.toLowerCase()).not.toContain(REWRITE)
  })
})
