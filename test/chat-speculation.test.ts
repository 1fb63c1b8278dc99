import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { isAnswer, isGuard, REFUNDS_MD, SHIPPING_MD, system, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { reads } from './helpers/http.js'

/**
 * The answer is requested while the guard call runs (stages/08-speculate.ts): with a model that takes 300 ms
 * a call and a question whose embedding is known, the first token reaches the widget after about one call,
 * not two; a turn the guards stop shows nothing of it and aborts the request.
 */
// long enough that one call and two stay apart on a loaded 2-core machine (its overhead was seen at ~230 ms)
const CALL_MS = 600
let fake: FakeLlm
let t: TestApp
let owner: Tenant

beforeAll(async () => {
  fake = await startFakeLlm()
  // a high caveat line: an off-topic verdict stands against evidence that only partly matches
  t = await startApp({ env: { LLM_BASE_URL: fake.url, RETRIEVAL_CAVEAT_SCORE: '0.95' } })
  owner = await createTenant(t)
  await withDocs(t, owner, { 'refunds.md': REFUNDS_MD, 'shipping.md': SHIPPING_MD })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})
afterEach(() => fake.reset())

/** One widget turn: its frames, and when the first answer chunk arrived (ms after the request). */
async function widgetTurn(message: string): Promise<{ frames: any[]; firstChunkMs: number | null }> {
  const start = performance.now()
  const res = await fetch(`${t.url}/widget/chat?bot_id=${owner.bot.public_id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.7.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` },
    body: JSON.stringify({ message }),
  })
  let firstChunkMs: number | null = null
  let text = ''
  const decoder = new TextDecoder()
  for await (const part of reads(res.body!)) {
    text += decoder.decode(part, { stream: true })
    if (firstChunkMs === null && text.includes('"type":"chunk"')) firstChunkMs = performance.now() - start
  }
  const frames = text
    .split('\n\n')
    .map((f) => f.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice(6)))
  return { frames, firstChunkMs }
}

/** The time to the first token of one bare streamed call to the (slowed) model. */
async function oneCallMs(): Promise<number> {
  const start = performance.now()
  const res = await fetch(`${fake.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  })
  for await (const part of reads(res.body!)) if (new TextDecoder().decode(part).includes('"content":"')) break
  const ms = performance.now() - start
  await res.body?.cancel().catch(() => {})
  return ms
}

describe('speculative answer', () => {
  it('sends the first token of a question asked before after about one model call, with the same answer', async () => {
    // asked once at full speed: its query embedding is kept, and the process's paths are warm
    const before = await widgetTurn('How long do refunds take?')
    fake.reset()
    fake.fail('slow_first_token', { delayMs: CALL_MS }) // every call: guard, embedding, answer, validation
    const one = await oneCallMs()
    const { frames, firstChunkMs } = await widgetTurn('How long do refunds take?')
    const done = frames.find((f) => f.type === 'done')
    expect(done.text).toBe(before.frames.find((f) => f.type === 'done').text)
    expect(fake.embeddingCalls()).toHaveLength(0)
    expect(
      frames
        .filter((f) => f.type === 'chunk')
        .map((f) => f.text)
        .join(''),
    ).toBe(done.text)
    // guards and embedding, then the answer would be two calls; 1.3 calls plus slack for a shared CI machine (two calls would be 2x)
    expect(firstChunkMs!, `first chunk ${firstChunkMs} ms, one call ${one} ms`).toBeLessThan(1.3 * one + 200)
    expect(fake.chatCalls().filter(isAnswer)).toHaveLength(1)
    const log = await owner.api.get(`/chat/logs/session/${done.session_id}`)
    expect(log.body.messages[1].debug.speculation).toBe('used')
  })

  it("starts a new question's answer from the lexical evidence while its embedding is in flight, and keeps it when the vectors agree", async () => {
    await widgetTurn('Do you ship abroad?') // warm paths, another question
    fake.reset()
    fake.fail('slow_first_token', { delayMs: CALL_MS })
    const one = await oneCallMs()
    const { frames, firstChunkMs } = await widgetTurn('How long does a refund take to be processed?')
    const done = frames.find((f) => f.type === 'done')
    expect(done.text).toContain('5 business days')
    expect(fake.embeddingCalls()).toHaveLength(1) // a new question: its embedding was a real call
    // the embedding, then the answer, would be two calls
    expect(firstChunkMs!, `first chunk ${firstChunkMs} ms, one call ${one} ms`).toBeLessThan(1.3 * one + 200)
    expect(fake.chatCalls().filter(isAnswer)).toHaveLength(1)
    const log = await owner.api.get(`/chat/logs/session/${done.session_id}`)
    expect(log.body.messages[1].debug.speculation).toMatch(/^used/)
  })

  /** A new question asked of an app with the early answer off, the model slowed as `fault` says: its answer's debug record. */
  async function askWithoutEarlyAnswer(fault: Parameters<FakeLlm['fail']>[1]) {
    const off = await startApp({ env: { LLM_BASE_URL: fake.url, RETRIEVAL_CAVEAT_SCORE: '0.95', CHAT_EARLY_ANSWER_FROM_BM25: 'false' } })
    try {
      const tenant = await createTenant(off)
      await withDocs(off, tenant, { 'refunds.md': REFUNDS_MD, 'shipping.md': SHIPPING_MD })
      fake.reset()
      fake.fail('slow_first_token', fault)
      const r = await tenant.api.withApiKey(tenant.apiKey).post('/chat', { question: 'How long does a refund take to be processed?' })
      expect(r.status, r.text).toBe(200)
      const log = await tenant.api.get(`/chat/logs/session/${r.body.session_id}`)
      return log.body.messages[1].debug
    } finally {
      await off.close()
    }
  }

  it('with CHAT_EARLY_ANSWER_FROM_BM25=false, a new question waits for its embedding: no answer from the BM25 evidence', async () => {
    const debug = await askWithoutEarlyAnswer({ delayMs: CALL_MS })
    expect(debug.speculation ?? 'none').not.toBe('used_lexical')
    expect(debug.timings.retrieval).toBeGreaterThan(CALL_MS * 0.9) // the embedding was waited for
    expect(fake.chatCalls().filter(isAnswer)).toHaveLength(1)
  })

  it("counts the query embedding's wait as the model's time (the turn's meter reaches retrieval's call)", async () => {
    // only the embedding is slow: the guard and the answer come at once
    const { timings } = await askWithoutEarlyAnswer({ delayMs: CALL_MS, match: (r) => r.path === '/v1/embeddings' })
    expect(timings.model).toBeGreaterThan(CALL_MS * 0.9)
    expect(timings.model).toBeLessThanOrEqual(timings.total)
  })

  it.each([
    ['an injection', { injection: true, wants_human: false, relevant: true }, 'How long do refunds take?', /can't help with that/],
    ['a request for a person', { injection: false, wants_human: true, relevant: true }, 'How long do refunds take?', /./],
    [
      'an off-topic question',
      { injection: false, wants_human: false, relevant: false },
      'Write a poem about express shipping',
      /can only help with questions about/,
    ],
  ])('shows nothing of the answer in flight when the guard model stops %s, and aborts it', async (_name, verdict, question, reply) => {
    fake.script((req) => (req.json && system(req).includes('routing classifier') ? { json: verdict, delayMs: 150 } : undefined))
    fake.script((req) => (!req.json ? { text: 'Refunds are processed within 5 business days [1].', delayMs: 2000 } : undefined))
    const { frames } = await widgetTurn(question)
    const done = frames.find((f) => f.type === 'done')
    expect(done.text).toMatch(reply)
    expect(done.text).not.toContain('5 business days')
    expect(done.sources).toEqual([])
    expect(
      frames
        .filter((f) => f.type === 'chunk')
        .map((f) => f.text)
        .join(''),
    ).toBe(done.text)
    expect(frames.filter((f) => f.type === 'status').map((f) => f.stage)).not.toContain('writing')
    expect(fake.chatCalls().filter(isGuard)).toHaveLength(1)
    const answers = fake.chatCalls().filter(isAnswer)
    expect(answers).toHaveLength(1) // it was requested early...
    await fake.waitFor(() => answers[0]!.request.clientAborted) // ...and aborted, not left running
    expect(answers[0]!.request.completed).toBe(false)
  })
})
