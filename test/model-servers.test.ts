import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { EmbeddingRejectedError, LlmUnavailableError, type LlmMessage } from '../src/modules/llm/llm.js'
import { createOpenAiClient } from '../src/modules/llm/openai-client.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'

/**
 * Issue 37: every OpenAI-compatible server works or says what to change. The real client against the fake
 * acting like each server (fake-servers.ts), over HTTP: each quirk is handled, and learned once per model.
 */
let fake: FakeLlm
const apiKey = 'sk-tenant-key-9f3a'
const ask: LlmMessage[] = [
  { role: 'system', content: 'Answer from the sources.\n[1] Refunds are available within 30 days of purchase.' },
  { role: 'user', content: 'How long do I have for a refund?' },
]
const tool = {
  name: 'order_status',
  description: 'Look up an order status by its order number',
  parameters: { type: 'object', properties: { order: { type: 'string' } } },
}
const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))

beforeAll(async () => {
  fake = await startFakeLlm()
})
afterAll(() => fake.close())
beforeEach(() => fake.reset())

const statuses = () => fake.requests.map((r) => r.status)

describe('embeddings', () => {
  it('a server that answers float arrays whatever is asked gives the same vectors as one that honours base64', async () => {
    const llm = createOpenAiClient(fake.url)
    const input = ['Refunds are available within 30 days.', 'Standard shipping takes 3 to 5 business days.']
    const a = await llm.embed({ apiKey, model: 'text-embedding-3-small', input, dimensions: 256 })
    fake.behaveAs({ floatEmbeddings: true })
    const b = await llm.embed({ apiKey, model: 'text-embedding-3-small', input, dimensions: 256 })
    expect(fake.embeddingCalls().every((c) => c.body.encoding_format === 'float')).toBe(true)
    for (const v of [...a.vectors, ...b.vectors]) {
      expect(v).toHaveLength(256)
      expect(norm(v)).toBeGreaterThan(0.99)
    }
    for (let i = 0; i < 2; i++) for (let j = 0; j < 256; j++) expect(b.vectors[i]![j]).toBeCloseTo(a.vectors[i]![j]!, 5)
  })

  it('a zero vector or a non-finite value is a provider error with a reason, never a vector', async () => {
    const llm = createOpenAiClient(fake.url)
    const problems: Record<string, string> = { zeros: 'zero_norm', nan: 'not_finite', ragged: 'wrong_width' }
    for (const [bad, problem] of Object.entries(problems)) {
      fake.behaveAs({ floatEmbeddings: true, badVectors: bad as 'zeros' })
      const err = await llm.embed({ apiKey, model: 'text-embedding-3-small', input: ['x', 'y'] }).then(
        () => null,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(EmbeddingRejectedError)
      expect(err).toBeInstanceOf(LlmUnavailableError)
      expect((err as EmbeddingRejectedError).problem, bad).toBe(problem)
    }
  })

  it('dimensions refused (vLLM, TEI): learned once, the native width is used from then on', async () => {
    const llm = createOpenAiClient(fake.url)
    fake.behaveAs('vllm')
    const r = await llm.embed({ apiKey, model: 'bge-m3', input: ['refund'], dimensions: 1536 })
    expect(r.vectors[0]).toHaveLength(1024)
    expect(statuses()).toEqual([400, 200])
    await llm.embed({ apiKey, model: 'bge-m3', input: ['shipping'], dimensions: 1536 })
    expect(statuses()).toEqual([400, 200, 200])
    expect(fake.embeddingCalls()[2]!.body.dimensions).toBeUndefined()
    expect(llm.quirks.get('bge-m3')).toEqual({ noDimensions: true })
  })
})

describe('chat', () => {
  it("OpenAI reasoning models: max_tokens and temperature refused with OpenAI's 400; learned once, later calls pay nothing", async () => {
    const llm = createOpenAiClient(fake.url)
    fake.behaveAs('openai-reasoning')
    const r = await llm.chat({ apiKey, model: 'o4-mini', messages: ask, maxTokens: 300, temperature: 0.2 })
    expect(r.text).toContain('30 days')
    expect(statuses()).toEqual([400, 400, 200])
    const last = fake.chatCalls().at(-1)!.body
    expect(last.max_completion_tokens).toBe(300)
    expect(last.max_tokens).toBeUndefined()
    expect(last.temperature).toBeUndefined()
    // the stream of the next turn goes right the first time
    const s = llm.chatStream({ apiKey, model: 'o4-mini', messages: ask, maxTokens: 300, temperature: 0.2 })
    let text = ''
    for await (const d of s) text += d
    expect(text).toContain('30 days')
    expect(statuses()).toEqual([400, 400, 200, 200])
  })

  it('no tools (an Ollama model without tool support): the call is answered without them, and tools are not sent again', async () => {
    const llm = createOpenAiClient(fake.url)
    fake.behaveAs('ollama')
    const s = llm.chatStream({ apiKey, model: 'gemma2', messages: ask, tools: [tool] })
    let text = ''
    for await (const d of s) text += d
    expect(text).toContain('30 days')
    expect((await s.result()).toolCalls).toBeUndefined()
    await llm.chat({ apiKey, model: 'gemma2', messages: ask, tools: [tool] })
    expect(statuses()).toEqual([400, 200, 200])
    expect(fake.chatCalls().at(-1)!.body.tools).toBeUndefined()
    expect(llm.quirks.get('gemma2').noTools).toBe(true)
  })

  it("no tools in vLLM's error shape (top-level message, no error key) is recognised too", async () => {
    const llm = createOpenAiClient(fake.url)
    fake.behaveAs('vllm')
    const r = await llm.chat({ apiKey, model: 'qwen', messages: ask, tools: [tool] })
    expect(r.text).toContain('30 days')
    expect(llm.quirks.get('qwen').noTools).toBe(true)
  })

  it('JSON mode: json_schema falls back to json_object, then to a plain call read as JSON', async () => {
    const llm = createOpenAiClient(fake.url)
    const schema = { name: 'verdict', schema: { type: 'object', properties: { relevant: { type: 'boolean' } } } }
    const guard: LlmMessage[] = [
      { role: 'system', content: 'Say whether the question is relevant. Answer as JSON {"relevant": boolean}.' },
      { role: 'user', content: 'refunds?' },
    ]
    fake.behaveAs({ refuseJsonSchema: true })
    expect(JSON.parse((await llm.chat({ apiKey, model: 'm1', messages: guard, jsonSchema: schema })).text)).toEqual({ relevant: true })
    expect(llm.quirks.get('m1').json).toBe('json_object')
    fake.behaveAs('lm-studio')
    fake.script((req) => (req.json ? undefined : { text: 'Sure! ```json\n{"relevant": true}\n```' }))
    expect(JSON.parse((await llm.chat({ apiKey, model: 'm2', messages: guard, json: true })).text)).toEqual({ relevant: true })
    expect(llm.quirks.get('m2').json).toBe('plain')
  })

  it('SSE comment lines and empty choices chunks are ignored; usage missing from a stream is counted from the text', async () => {
    const llm = createOpenAiClient(fake.url)
    fake.behaveAs({ sseNoise: true, noStreamUsage: true })
    const s = llm.chatStream({ apiKey, model: 'gpt-4o-mini', messages: ask })
    let text = ''
    for await (const d of s) text += d
    const r = await s.result()
    expect(r.text).toBe(text)
    expect(text).toContain('30 days')
    expect(r.usage.completion_tokens).toBe(Math.ceil(text.length / 4))
    expect(r.usage.prompt_tokens).toBeGreaterThan(0)
  })

  it('stream_options refused: learned, streams go without it', async () => {
    const llm = createOpenAiClient(fake.url)
    fake.behaveAs({ refuseStreamOptions: true })
    const s = llm.chatStream({ apiKey, model: 'gpt-4o-mini', messages: ask })
    for await (const _ of s);
    expect((await s.result()).text).toContain('30 days')
    expect(llm.quirks.get('gpt-4o-mini').noStreamOptions).toBe(true)
  })

  it('429 with Retry-After: honoured when short, a wait over 10 s fails the call at once', async () => {
    const llm = createOpenAiClient(fake.url)
    fake.fail(429, { times: 1, delayMs: 300 })
    const t0 = Date.now()
    expect((await llm.chat({ apiKey, model: 'gpt-4o-mini', messages: ask })).text).toContain('30 days')
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290)
    expect(statuses()).toEqual([429, 200])
    fake.reset()
    fake.fail(429, { times: 1, delayMs: 30_000 })
    const t1 = Date.now()
    const err = await llm.chat({ apiKey, model: 'gpt-4o-mini', messages: ask }).then(
      () => null,
      (e: unknown) => e,
    )
    expect((err as LlmUnavailableError).status).toBe(429)
    expect(Date.now() - t1).toBeLessThan(10_000)
    expect(statuses()).toEqual([429])
  })
})
