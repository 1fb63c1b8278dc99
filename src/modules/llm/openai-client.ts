import OpenAI from 'openai'
import { LlmUnavailableError, type ChatOptions, type ChatResult, type ChatStream, type EmbedOptions, type LlmClient, type LlmUsage } from './llm.js'

const DEFAULT_TIMEOUT_MS = 60_000

/** Rough token estimate for providers that do not report usage on streams (~4 characters a token). */
export const estimateTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4))

function toUnavailable(err: unknown): Error {
  if (err instanceof LlmUnavailableError) return err
  if (err instanceof OpenAI.APIError) {
    // 4xx other than 429 are our fault or the tenant's key: still "unavailable" to the visitor, but keep the status.
    return new LlmUnavailableError(`language model error ${err.status ?? ''}`.trim(), err.status ?? undefined)
  }
  if ((err as Error)?.name === 'AbortError' || err instanceof OpenAI.APIUserAbortError) {
    return new LlmUnavailableError('language model call aborted or timed out')
  }
  return new LlmUnavailableError('language model unreachable')
}

/**
 * The official SDK at a configurable base URL. One SDK client per API key is cached (tenants bring their
 * own keys). The SDK retries once on connection errors, 408, 409, 429 and 5xx.
 */
export function createOpenAiClient(baseURL: string): LlmClient {
  const clients = new Map<string, OpenAI>()
  const client = (apiKey: string) => {
    let c = clients.get(apiKey)
    if (!c) {
      if (clients.size > 1000) clients.clear()
      c = new OpenAI({ apiKey, baseURL, maxRetries: 1, timeout: DEFAULT_TIMEOUT_MS })
      clients.set(apiKey, c)
    }
    return c
  }

  function params(opts: ChatOptions) {
    return {
      model: opts.model,
      messages: opts.messages,
      temperature: opts.temperature,
      max_tokens: opts.maxTokens,
      ...(opts.json ? { response_format: { type: 'json_object' as const } } : {}),
    }
  }

  function signalFor(opts: { timeoutMs?: number; signal?: AbortSignal }) {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS)
    return opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout
  }

  return {
    async chat(opts) {
      try {
        const res = await client(opts.apiKey).chat.completions.create({ ...params(opts), stream: false }, { signal: signalFor(opts) })
        const text = res.choices[0]?.message?.content ?? ''
        const usage: LlmUsage = res.usage
          ? { prompt_tokens: res.usage.prompt_tokens, completion_tokens: res.usage.completion_tokens, total_tokens: res.usage.total_tokens }
          : { prompt_tokens: 0, completion_tokens: estimateTokens(text), total_tokens: estimateTokens(text) }
        return { text, usage }
      } catch (err) {
        throw toUnavailable(err)
      }
    },

    chatStream(opts): ChatStream {
      let text = ''
      let usage: LlmUsage | null = null
      let settle!: { resolve: (r: ChatResult) => void; reject: (e: Error) => void }
      const done = new Promise<ChatResult>((resolve, reject) => (settle = { resolve, reject }))
      done.catch(() => {})
      const iterate = async function* () {
        try {
          const stream = await client(opts.apiKey).chat.completions.create(
            { ...params(opts), stream: true, stream_options: { include_usage: true } },
            { signal: signalFor(opts) },
          )
          for await (const part of stream) {
            if (part.usage) {
              usage = { prompt_tokens: part.usage.prompt_tokens, completion_tokens: part.usage.completion_tokens, total_tokens: part.usage.total_tokens }
            }
            const delta = part.choices[0]?.delta?.content
            if (delta) {
              text += delta
              yield delta
            }
          }
          const prompt = estimateTokens(opts.messages.map((m) => m.content).join('\n'))
          settle.resolve({ text, usage: usage ?? { prompt_tokens: prompt, completion_tokens: estimateTokens(text), total_tokens: prompt + estimateTokens(text) } })
        } catch (err) {
          const e = toUnavailable(err)
          settle.reject(e)
          throw e
        }
      }
      const it = iterate()
      return {
        [Symbol.asyncIterator]: () => it,
        result: () => done,
      }
    },

    async embed(opts) {
      if (opts.input.length === 0) return { vectors: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }
      try {
        const res = await client(opts.apiKey).embeddings.create({ model: opts.model, input: opts.input }, { signal: signalFor(opts) })
        const vectors = [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding as number[])
        const tokens = res.usage?.total_tokens ?? 0
        return { vectors, usage: { prompt_tokens: res.usage?.prompt_tokens ?? tokens, completion_tokens: 0, total_tokens: tokens } }
      } catch (err) {
        throw toUnavailable(err)
      }
    },
  }
}
