import OpenAI from 'openai'
import {
  LlmUnavailableError,
  type ChatOptions,
  type ChatResult,
  type ChatStream,
  type EmbedOptions,
  type LlmClient,
  type LlmMessage,
  type LlmUsage,
  type ToolCall,
} from './llm.js'

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
  timeout: AbortSignal
}

/** One signal for the whole call (all attempts and the whole stream): the caller's, or our timeout. */
function signalFor(opts: { timeoutMs?: number; signal?: AbortSignal }): CallSignal {
  const timeout = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS)
  return { signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout, caller: opts.signal, timeout }
}

/** Every failure becomes an LlmUnavailableError; messages never carry the provider's text (it may echo input). */
function toUnavailable(err: unknown, s: CallSignal): LlmUnavailableError {
  if (err instanceof LlmUnavailableError) return err
  if (s.caller?.aborted) return new LlmUnavailableError('language model call aborted by the caller', undefined, 'aborted')
  if (s.timeout.aborted) return new LlmUnavailableError('language model call timed out', undefined, 'timeout')
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

/**
 * The official SDK at a configurable base URL. One SDK client per API key is cached (tenants bring their
 * own keys). The SDK retries once on connection errors, 408, 409, 429 (honouring Retry-After) and 5xx;
 * `timeoutMs` bounds the whole call including that retry and the whole stream.
 */
export function createOpenAiClient(baseURL: string): LlmClient {
  const clients = new Map<string, OpenAI>()
  const client = (apiKey: string) => {
    let c = clients.get(apiKey)
    if (!c) {
      if (clients.size > 1000) clients.clear()
      // logLevel off: the SDK would print raw reply chunks (visitor text) to the console on parse errors.
      c = new OpenAI({ apiKey, baseURL, maxRetries: 1, timeout: DEFAULT_TIMEOUT_MS, logLevel: 'off' })
      clients.set(apiKey, c)
    }
    return c
  }

  function params(opts: ChatOptions) {
    return {
      model: opts.model,
      messages: opts.messages.map(wireMessage) as never,
      temperature: opts.temperature,
      max_tokens: opts.maxTokens,
      ...(opts.json ? { response_format: { type: 'json_object' as const } } : {}),
      ...(opts.tools?.length
        ? { tools: opts.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) }
        : {}),
    }
  }

  return {
    async chat(opts) {
      const s = signalFor(opts)
      try {
        const res = await client(opts.apiKey).chat.completions.create({ ...params(opts), stream: false }, { signal: s.signal })
        if (!res || !Array.isArray(res.choices)) throw new SyntaxError('no choices in the reply')
        const text = res.choices[0]?.message?.content ?? ''
        const calls = (res.choices[0]?.message?.tool_calls ?? []).flatMap((c) =>
          c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [],
        )
        return { text, usage: toUsage(res.usage, promptText(opts), text), ...(calls.length ? { toolCalls: calls } : {}) }
      } catch (err) {
        throw toUnavailable(err, s)
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
          const stream = await client(opts.apiKey).chat.completions.create(
            { ...params(opts), stream: true, stream_options: { include_usage: true } },
            { signal: s.signal },
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
        const res = await client(opts.apiKey).embeddings.create(
          { model: opts.model, input: opts.input, ...(opts.dimensions ? { dimensions: opts.dimensions } : {}) },
          { signal: s.signal },
        )
        if (!res || !Array.isArray(res.data) || res.data.length !== opts.input.length) throw new SyntaxError('embedding count does not match the input')
        const vectors = [...res.data].sort((a, b) => a.index - b.index).map((d) => Array.from(d.embedding as ArrayLike<number>))
        const tokens = res.usage?.total_tokens ?? estimateTokens(opts.input.join('\n'))
        return { vectors, usage: { prompt_tokens: res.usage?.prompt_tokens ?? tokens, completion_tokens: 0, total_tokens: tokens } }
      } catch (err) {
        throw toUnavailable(err, s)
      }
    },
  }
}

/** A message as the provider takes it: an assistant's tool calls and a tool's answer in OpenAI's shape. */
function wireMessage(m: LlmMessage) {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: m.content }
  if (m.role === 'assistant' && m.tool_calls?.length) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    }
  }
  return { role: m.role, content: m.content }
}
