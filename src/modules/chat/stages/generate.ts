import { LlmUnavailableError, type LlmClient, type LlmMessage } from '../../llm/llm.js'

/**
 * Stage 8: the answer, streamed from CHAT_MODEL. Deltas go to `onDelta` the moment they arrive. A first
 * token that does not come in time, or a transient failure before any token, gets exactly one retry;
 * after a token was shown nothing is retried silently (the visitor would see the answer twice): the
 * caller gets a PartialAnswerError with what arrived. A stream that stalls (no token for as long as the
 * first-token limit) is cut.
 */

export interface GenerateInput {
  apiKey: string
  model: string
  messages: LlmMessage[]
  maxTokens: number
  firstTokenTimeoutMs: number
  totalTimeoutMs: number
  signal?: AbortSignal
  onDelta?: (delta: string) => void
}

export interface Generation {
  text: string
  tokens: number
  attempts: number
  firstTokenMs: number | null
}

export class PartialAnswerError extends Error {
  override name = 'PartialAnswerError'
  constructor(
    readonly partial: string,
    readonly reason: LlmUnavailableError,
    readonly attempts: number,
  ) {
    super('the answer stream broke off')
  }
}

/** Worth one more try: our timeout, the network, a broken reply, or the provider's 408/429/5xx. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof LlmUnavailableError)) return false
  if (err.kind === 'aborted') return false
  if (err.kind === 'http') return err.status === undefined || err.status === 408 || err.status === 429 || err.status >= 500
  return true
}

export async function generateAnswer(llm: Pick<LlmClient, 'chatStream'>, input: GenerateInput): Promise<Generation> {
  const start = performance.now()
  for (let attempt = 1; ; attempt++) {
    const watchdog = new AbortController()
    const signal = input.signal ? AbortSignal.any([input.signal, watchdog.signal]) : watchdog.signal
    let timer: NodeJS.Timeout | undefined
    const arm = () => {
      clearTimeout(timer)
      timer = setTimeout(() => watchdog.abort(new Error('no token in time')), input.firstTokenTimeoutMs)
    }
    let text = ''
    let firstTokenMs: number | null = null
    arm()
    try {
      const stream = llm.chatStream({
        apiKey: input.apiKey,
        model: input.model,
        messages: input.messages,
        maxTokens: input.maxTokens,
        temperature: 0.2,
        timeoutMs: input.totalTimeoutMs,
        signal,
      })
      for await (const delta of stream) {
        if (firstTokenMs === null) firstTokenMs = Math.round(performance.now() - start)
        text += delta
        arm()
        input.onDelta?.(delta)
      }
      clearTimeout(timer)
      const res = await stream.result()
      return { text, tokens: res.usage.total_tokens, attempts: attempt, firstTokenMs }
    } catch (raw) {
      clearTimeout(timer)
      if (input.signal?.aborted) throw raw
      // our own watchdog surfaces as a caller abort inside the client: it is a timeout here
      const err =
        watchdog.signal.aborted || !(raw instanceof LlmUnavailableError)
          ? new LlmUnavailableError(watchdog.signal.aborted ? 'no token from the language model in time' : 'language model failed', undefined, watchdog.signal.aborted ? 'timeout' : 'network')
          : raw
      if (text.length > 0) throw new PartialAnswerError(text, err, attempt)
      if (attempt < 2 && isTransient(err)) continue
      throw err
    }
  }
}
