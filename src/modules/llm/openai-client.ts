import OpenAI from 'openai'
import {
  EmbeddingRejectedError,
  LlmUnavailableError,
  type ChatOptions,
  type ChatResult,
  type ChatStream,
  type EmbedOptions,
  type LlmClient,
  type LlmImage,
  type LlmMessage,
  type LlmUsage,
  type ToolCall,
} from './llm.js'
import { inlinePlaceholder, jsonWithImages, type InlineImage } from './image-body.js'
import { leanFetch } from './lean-fetch.js'
import { createQuirkMemory, jsonFromPlain, quirkFromRefusal, type JsonMode, type QuirkMemory, type Quirks, type SentParams } from './quirks.js'
import { checkVectors, decodeEmbedding } from './vectors.fns.js'

const DEFAULT_TIMEOUT_MS = 60_000

/** Rough token estimate for providers that do not report usage (~4 characters a token). */
export const estimateTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4))

const promptText = (opts: ChatOptions) => opts.messages.map((m) => m.content).join('\n')

function toUsage(
  u: { prompt_tokens: number; completion_tokens?: number; total_tokens: number } | null | undefined,
  prompt: string,
  completion: string,
): LlmUsage {
  if (u) return { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens ?? 0, total_tokens: u.total_tokens }
  const p = estimateTokens(prompt)
  const c = completion ? estimateTokens(completion) : 0
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c }
}

interface CallSignal {
  signal: AbortSignal
  caller?: AbortSignal
  /** whether our own deadline ended the call */
  timedOut: () => boolean
  /** the call is over: its deadline timer and its listener on the caller's signal go */
  release: () => void
}

/**
 * One signal for the whole call (all attempts and the whole stream): aborted by the caller's or by our deadline.
 * A timer cleared when the call ends, not AbortSignal.timeout: that one fires a minute after every call (an
 * abort event and a DOMException each, four calls a turn) and keeps the call's listeners alive until then.
 */
function signalFor(opts: { timeoutMs?: number; signal?: AbortSignal }): CallSignal {
  const ctl = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    ctl.abort(new DOMException('language model call timed out', 'TimeoutError'))
  }, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS)
  timer.unref?.()
  const caller = opts.signal
  const onAbort = () => ctl.abort(caller?.reason)
  if (caller?.aborted) onAbort()
  else caller?.addEventListener('abort', onAbort, { once: true })
  return {
    signal: ctl.signal,
    caller,
    timedOut: () => timedOut,
    release: () => {
      clearTimeout(timer)
      caller?.removeEventListener('abort', onAbort)
    },
  }
}

/** Every failure becomes an LlmUnavailableError; messages never carry the provider's text (it may echo input). */
function toUnavailable(err: unknown, s: CallSignal): LlmUnavailableError {
  if (err instanceof LlmUnavailableError) return err
  if (s.caller?.aborted) return new LlmUnavailableError('language model call aborted by the caller', undefined, 'aborted')
  if (s.timedOut()) return new LlmUnavailableError('language model call timed out', undefined, 'timeout')
  if (err instanceof OpenAI.APIUserAbortError || (err as Error)?.name === 'AbortError' || (err as Error)?.name === 'TimeoutError') {
    return new LlmUnavailableError('language model call aborted or timed out', undefined, 'timeout')
  }
  if (err instanceof OpenAI.APIConnectionError) return new LlmUnavailableError('language model unreachable', undefined, 'network')
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    // 4xx other than 429 are our fault or the tenant's key: still "unavailable" to the visitor, but keep the status.
    return new LlmUnavailableError(`language model error ${err.status}`, err.status, 'http')
  }
  if (err instanceof SyntaxError) return new LlmUnavailableError('language model sent a malformed reply', undefined, 'malformed')
  return new LlmUnavailableError('language model unreachable', undefined, 'network')
}

/** A 429's Retry-After is honoured up to this long within a turn; a longer wait fails the call at once. */
export const MAX_RETRY_AFTER_MS = 10_000

/** The wait a 429 asks for (retry-after-ms, retry-after in seconds or as a date), null when it names none. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | null {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '')
  if (Number.isFinite(ms)) return ms
  const raw = headers.get('retry-after')
  if (!raw) return null
  const s = Number.parseFloat(raw)
  if (Number.isFinite(s)) return s * 1000
  const at = Date.parse(raw)
  return Number.isFinite(at) ? at - now : null
}

/**
 * fetch for the SDK: a 429 asking for more than MAX_RETRY_AFTER_MS is not retried (the SDK would wait up to a
 * minute); a 400/422 in another server's error shape (vLLM's top-level `message`, `{"error": "text"}`) is put
 * in OpenAI's `{error: {message, param, code}}`, so a refused parameter can be recognised (quirks.ts).
 */
const serverFetch: typeof fetch = async (input, init) => {
  const res = await leanFetch(input, init)
  if (res.status === 429) {
    const wait = retryAfterMs(res.headers)
    if (wait === null || wait <= MAX_RETRY_AFTER_MS) return res
    const headers = new Headers(res.headers)
    headers.set('x-should-retry', 'false')
    return new Response(await res.text(), { status: res.status, statusText: res.statusText, headers })
  }
  if (res.status !== 400 && res.status !== 422) return res
  const text = (await res.text()).slice(0, 20_000)
  let body: unknown = null
  try {
    body = JSON.parse(text)
  } catch {}
  const o = body && typeof body === 'object' ? (body as Record<string, unknown>) : null
  const error =
    o && typeof o.error === 'object' && o.error !== null
      ? o.error
      : o && typeof o.error === 'string'
        ? { message: o.error, param: null, code: null }
        : o && (typeof o.message === 'string' || typeof o.detail === 'string')
          ? { message: typeof o.message === 'string' ? o.message : JSON.stringify(o.detail), param: o.param ?? null, code: o.code ?? null }
          : { message: text, param: null, code: null }
  const headers = new Headers(res.headers)
  headers.set('content-type', 'application/json')
  headers.delete('content-length')
  return new Response(JSON.stringify({ error }), { status: res.status, statusText: res.statusText, headers })
}

type JsonRequest = JsonMode | null
const JSON_ORDER: JsonMode[] = ['json_schema', 'json_object', 'plain']
/** The JSON mode a call goes with: what it asks, lowered to what the server was seen to take. */
const jsonModeFor = (asked: JsonRequest, learned: JsonMode | undefined): JsonRequest =>
  asked === null ? null : learned && JSON_ORDER.indexOf(learned) > JSON_ORDER.indexOf(asked) ? learned : asked

/**
 * The official SDK at a configurable base URL. One SDK client per API key is cached (tenants bring their
 * own keys). The SDK retries once on connection errors, 408, 409, 429 (honouring Retry-After up to 10 s)
 * and 5xx; `timeoutMs` bounds the whole call including that retry and the whole stream. A parameter the
 * server refuses is learned (quirks.ts) and the call goes again without it.
 */
export function createOpenAiClient(baseURL: string, quirks: QuirkMemory = createQuirkMemory()): LlmClient & { quirks: QuirkMemory } {
  const clients = new Map<string, OpenAI>()
  const client = (apiKey: string) => {
    let c = clients.get(apiKey)
    if (!c) {
      if (clients.size > 1000) clients.clear()
      // logLevel off: the SDK would print raw reply chunks (visitor text) to the console on parse errors.
      c = new OpenAI({ apiKey, baseURL, maxRetries: 1, timeout: DEFAULT_TIMEOUT_MS, logLevel: 'off', fetch: serverFetch })
      clients.set(apiKey, c)
    }
    return c
  }

  function params(opts: ChatOptions, q: Quirks, stream: boolean) {
    const json = jsonModeFor(opts.jsonSchema ? 'json_schema' : opts.json ? 'json_object' : null, q.json)
    const tools = opts.tools?.length && !q.noTools ? opts.tools : null
    const sent: SentParams = {
      maxTokens: opts.maxTokens !== undefined && !q.maxCompletionTokens,
      maxCompletionTokens: opts.maxTokens !== undefined && !!q.maxCompletionTokens,
      temperature: opts.temperature !== undefined && !q.noTemperature,
      dimensions: false,
      json,
      tools: !!tools,
      streamOptions: stream && !q.noStreamOptions,
      images: !q.noImages && opts.messages.some((m) => m.images?.length),
    }
    const inline: InlineImage[] = []
    const body = {
      model: opts.model,
      messages: opts.messages.map((m) => wireMessage(m, !sent.images, inline)) as never,
      ...(sent.temperature ? { temperature: opts.temperature } : {}),
      ...(sent.maxTokens ? { max_tokens: opts.maxTokens } : {}),
      ...(sent.maxCompletionTokens ? { max_completion_tokens: opts.maxTokens } : {}),
      ...(json === 'json_object' || (json === 'json_schema' && !opts.jsonSchema) ? { response_format: { type: 'json_object' as const } } : {}),
      ...(json === 'json_schema' && opts.jsonSchema
        ? { response_format: { type: 'json_schema' as const, json_schema: { name: opts.jsonSchema.name, schema: opts.jsonSchema.schema } } }
        : {}),
      ...(tools
        ? { tools: tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) }
        : {}),
      ...(sent.streamOptions ? { stream_options: { include_usage: true } } : {}),
    }
    if (inline.length) inlineImages.set(body, inline)
    return { body, sent, json }
  }

  /** Runs a call, learning each parameter the server refuses and going again without it (at most a few times). */
  async function adaptive<T, B>(model: string, build: (q: Quirks) => { body: B; sent: SentParams }, run: (body: B) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const { body, sent } = build(quirks.get(model))
      try {
        return await run(body)
      } catch (err) {
        if (attempt < 5 && err instanceof OpenAI.APIError) {
          const e = err.error as { message?: unknown } | string | undefined
          const message = typeof e === 'string' ? e : (e?.message ?? err.message)
          const learned = quirkFromRefusal(err.status, { param: err.param, code: err.code, message }, sent)
          if (learned) {
            quirks.learn(model, learned)
            continue
          }
        }
        throw err
      }
    }
  }

  return {
    async chat(opts) {
      const s = signalFor(opts)
      try {
        let plain = false
        const res = await adaptive(
          opts.model,
          (q) => {
            const p = params(opts, q, false)
            plain = p.json === 'plain'
            return p
          },
          (body) => client(opts.apiKey).chat.completions.create({ ...body, stream: false }, { signal: s.signal, ...ownJson(body, false) }),
        )
        if (!res || !Array.isArray(res.choices)) throw new SyntaxError('no choices in the reply')
        const raw = res.choices[0]?.message?.content ?? ''
        const text = plain ? jsonFromPlain(raw) : raw
        const calls = (res.choices[0]?.message?.tool_calls ?? []).flatMap((c) =>
          c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [],
        )
        return { text, usage: toUsage(res.usage, promptText(opts), text), ...(calls.length ? { toolCalls: calls } : {}) }
      } catch (err) {
        throw toUnavailable(err, s)
      } finally {
        s.release()
      }
    },

    chatStream(opts): ChatStream {
      let text = ''
      let usage: LlmUsage | null = null
      let settled = false
      let settle!: { resolve: (r: ChatResult) => void; reject: (e: Error) => void }
      const done = new Promise<ChatResult>((resolve, reject) => (settle = { resolve, reject }))
      done.catch(() => {})
      // tool calls arrive in pieces, by index: the id and name first, the arguments' JSON text in slices
      const calls: ToolCall[] = []
      const finish = (outcome: { ok: true } | { ok: false; err: Error }) => {
        if (settled) return
        settled = true
        const toolCalls = calls.filter((c) => c?.name)
        if (outcome.ok) settle.resolve({ text, usage: usage ?? toUsage(null, promptText(opts), text), ...(toolCalls.length ? { toolCalls } : {}) })
        else settle.reject(outcome.err)
      }
      const iterate = async function* () {
        const s = signalFor(opts)
        try {
          const stream = await adaptive(
            opts.model,
            (q) => params(opts, q, true),
            (body) => client(opts.apiKey).chat.completions.create({ ...body, stream: true }, { signal: s.signal, ...ownJson(body, true) }),
          )
          let finished = false
          for await (const part of stream) {
            if (part.usage) usage = toUsage(part.usage, '', '')
            const choice = part.choices?.[0]
            if (choice?.finish_reason) finished = true
            for (const d of choice?.delta?.tool_calls ?? []) {
              const c = (calls[d.index] ??= { id: '', name: '', arguments: '' })
              if (d.id) c.id = d.id
              if (d.function?.name) c.name += d.function.name
              if (d.function?.arguments) c.arguments += d.function.arguments
            }
            const delta = choice?.delta?.content
            if (delta) {
              text += delta
              yield delta
            }
          }
          // The SDK ends an aborted stream silently, and a dropped connection can look like a clean end:
          // an answer without finish_reason is incomplete and must not pass for a whole one.
          if (!finished) {
            throw s.signal.aborted
              ? toUnavailable(new DOMException('aborted', 'AbortError'), s)
              : new LlmUnavailableError('language model stream ended early', undefined, 'network')
          }
          finish({ ok: true })
        } catch (err) {
          const e = toUnavailable(err, s)
          finish({ ok: false, err: e })
          throw e
        } finally {
          // The consumer stopped early (break/return): the SDK aborts the request; result() gets what arrived.
          s.release()
          finish({ ok: true })
        }
      }
      const it = iterate()
      return {
        [Symbol.asyncIterator]: () => it,
        result: () => done,
      }
    },

    async embed(opts: EmbedOptions) {
      if (opts.input.length === 0) return { vectors: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }
      const s = signalFor(opts)
      try {
        const res = await adaptive(
          opts.model,
          (q) => {
            const dimensions = opts.dimensions && !q.noDimensions ? opts.dimensions : undefined
            const sent: SentParams = { ...NOTHING_SENT, dimensions: dimensions !== undefined }
            return { body: { model: opts.model, input: opts.input, encoding_format: 'float' as const, ...(dimensions ? { dimensions } : {}) }, sent }
          },
          (body) => client(opts.apiKey).embeddings.create(body, { signal: s.signal }),
        )
        if (!res || !Array.isArray(res.data)) throw new SyntaxError('no data in the embedding reply')
        // asked as floats; read by what arrived all the same (base64 text or a float array)
        const vectors = [...res.data].sort((a, b) => a.index - b.index).map((d) => decodeEmbedding(d.embedding))
        const check = checkVectors(vectors, { count: opts.input.length })
        if (!check.ok) throw new EmbeddingRejectedError(check.problem, check.detail)
        const tokens = res.usage?.total_tokens ?? estimateTokens(opts.input.join('\n'))
        return { vectors: vectors as number[][], usage: { prompt_tokens: res.usage?.prompt_tokens ?? tokens, completion_tokens: 0, total_tokens: tokens } }
      } catch (err) {
        throw toUnavailable(err, s)
      } finally {
        s.release()
      }
    },
    quirks,
  }
}

const NOTHING_SENT: SentParams = {
  maxTokens: false,
  maxCompletionTokens: false,
  temperature: false,
  dimensions: false,
  json: null,
  tools: false,
  streamOptions: false,
}

/** A request's images given as bytes (a visitor's files), by request body: in its JSON as placeholders until sent. */
const inlineImages = new WeakMap<object, InlineImage[]>()

/**
 * The SDK's options for a request with images given as bytes: its JSON made here (image-body.ts: each image's
 * base64 written once into the body's bytes) and sent by the SDK as it is. Any other request is the SDK's to serialise.
 */
function ownJson(body: object, stream: boolean): { body?: Buffer; headers?: Record<string, string> } {
  const images = inlineImages.get(body)
  if (!images) return {}
  return { body: jsonWithImages({ ...body, stream }, images), headers: { 'content-type': 'application/json' } }
}

/**
 * A message as the provider takes it: an assistant's tool calls and a tool's answer in OpenAI's shape. An image given
 * as bytes goes into `inline`, its URL a placeholder until the body is serialised (ownJson).
 */
function wireMessage(m: LlmMessage, textOnly: boolean, inline: InlineImage[]) {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: m.content }
  if (m.role === 'assistant' && m.tool_calls?.length) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    }
  }
  // images as image_url parts after the text (whose "[image: name]" lines name them), or the text alone
  if (m.images?.length && !textOnly) {
    const url = (i: LlmImage) => ('url' in i ? i.url : inlinePlaceholder(inline.push({ type: i.type, bytes: i.bytes }) - 1))
    return { role: m.role, content: [{ type: 'text', text: m.content }, ...m.images.map((i) => ({ type: 'image_url', image_url: { url: url(i) } }))] }
  }
  return { role: m.role, content: m.content }
}
