import type { Logger } from 'pino'
import type { Clock } from '../../lib/clock.js'
import { createQuirkMemory, type QuirkMemory } from './quirks.js'
import { LlmUnavailableError, type ChatStream, type LlmClient, type LlmFailureKind } from './llm.js'

/**
 * Whether the language-model provider at LLM_BASE_URL answers, as seen by the calls this process makes.
 *
 * A wrong or unreachable LLM_BASE_URL is a deployment problem the visitor cannot fix and must not see
 * (they get the contract's neutral 503 or error frame). The operator can: the first failure is logged
 * with the address tried and the variable to change, and `GET /llm/status` shows the same to the
 * dashboard. Only failures that say something about the deployment count (unreachable, timed out, 5xx,
 * 404, a reply that is not OpenAI-shaped); a refused key (401/403), a bad request or the visitor leaving
 * are one tenant's or one call's business and leave the state alone.
 */
export type ProviderState = 'unknown' | 'ok' | 'unreachable' | 'error'

export interface ProviderFailure {
  kind: LlmFailureKind
  status: number | null
  message: string
  at: Date
}

export interface ProviderStatus {
  base_url: string
  variable: 'LLM_BASE_URL'
  state: ProviderState
  checked_at: Date | null
  last_success_at: Date | null
  last_error: ProviderFailure | null
  hint: string | null
}

/** Repeats of the same failure are logged at most this often, so a dead provider does not flood the log. */
const LOG_EVERY_MS = 60_000

/** The address without credentials, query or fragment: it is shown to operators and written to logs. */
export function displayBaseUrl(raw: string): string {
  try {
    const u = new URL(raw)
    u.username = ''
    u.password = ''
    u.search = ''
    u.hash = ''
    return u.toString().replace(/\/$/, '')
  } catch {
    return '(not a URL)'
  }
}

function classify(err: unknown): { state: 'unreachable' | 'error'; failure: Omit<ProviderFailure, 'at'> } | null {
  if (!(err instanceof LlmUnavailableError)) return null
  const status = err.status ?? null
  if (err.kind === 'aborted') return null
  if (err.kind === 'network' || err.kind === 'timeout') return { state: 'unreachable', failure: { kind: err.kind, status, message: err.message } }
  if (err.kind === 'malformed') return { state: 'error', failure: { kind: err.kind, status, message: err.message } }
  if (status !== null && (status >= 500 || status === 404 || status === 429))
    return { state: 'error', failure: { kind: err.kind, status, message: err.message } }
  return null
}

function hintFor(state: ProviderState, failure: ProviderFailure | null, baseUrl: string): string | null {
  if (state === 'unreachable') {
    return `The language-model provider at ${baseUrl} could not be reached (${failure?.kind ?? 'network'}). Set LLM_BASE_URL to an OpenAI-compatible API this server can reach (for example http://127.0.0.1:11434/v1 for Ollama) and restart.`
  }
  if (state === 'error' && failure?.status === 404) {
    return `The provider at ${baseUrl} answered 404: LLM_BASE_URL usually ends in /v1, and CHAT_MODEL, GUARD_MODEL and EMBEDDING_MODEL must be models it serves.`
  }
  if (state === 'error' && failure?.kind === 'malformed') {
    return `The provider at ${baseUrl} sent a reply that is not OpenAI-shaped: check that LLM_BASE_URL points at an OpenAI-compatible /v1 API.`
  }
  if (state === 'error')
    return `The provider at ${baseUrl} is failing (HTTP ${failure?.status ?? '?'}); if it persists, check the provider or change LLM_BASE_URL.`
  return null
}

export function createProviderMonitor(rawBaseUrl: string, log: Logger, clock: Clock, quirks: QuirkMemory = createQuirkMemory()) {
  const baseUrl = displayBaseUrl(rawBaseUrl)
  let state: ProviderState = 'unknown'
  let checkedAt: Date | null = null
  let lastSuccess: Date | null = null
  let lastError: ProviderFailure | null = null
  let lastLoggedAt = 0
  let suppressed = 0

  function succeeded() {
    const now = clock.now()
    if (state === 'unreachable' || state === 'error') log.info({ base_url: baseUrl }, 'language-model provider answers again')
    state = 'ok'
    checkedAt = now
    lastSuccess = now
  }

  function failed(err: unknown) {
    const c = classify(err)
    if (!c) return
    const now = clock.now()
    const changed = state !== c.state
    state = c.state
    checkedAt = now
    lastError = { ...c.failure, at: now }
    if (changed || now.getTime() - lastLoggedAt >= LOG_EVERY_MS) {
      log.warn(
        { base_url: baseUrl, variable: 'LLM_BASE_URL', kind: c.failure.kind, status: c.failure.status, repeated: suppressed },
        hintFor(state, lastError, baseUrl) ?? 'language-model provider failing',
      )
      lastLoggedAt = now.getTime()
      suppressed = 0
    } else suppressed++
  }

  async function observe<T>(call: () => Promise<T>): Promise<T> {
    try {
      const r = await call()
      succeeded()
      return r
    } catch (err) {
      failed(err)
      throw err
    }
  }

  return {
    /** What the server was seen to refuse, per model (learned by openai-client.ts). */
    quirks,
    /** The client every module uses, reporting each call's outcome here. */
    wrap(llm: LlmClient): LlmClient {
      return {
        chat: (opts) => observe(() => llm.chat(opts)),
        embed: (opts) => observe(() => llm.embed(opts)),
        chatStream(opts): ChatStream {
          const inner = llm.chatStream(opts)
          const result = inner.result()
          result.then(succeeded, failed)
          return { [Symbol.asyncIterator]: () => inner[Symbol.asyncIterator](), result: () => result }
        },
      }
    },

    status(): ProviderStatus {
      return {
        base_url: baseUrl,
        variable: 'LLM_BASE_URL',
        state,
        checked_at: checkedAt,
        last_success_at: lastSuccess,
        last_error: lastError,
        hint: hintFor(state, lastError, baseUrl),
      }
    },

    /**
     * Asks the provider's model list now (a cheap GET), with the tenant's key when it has one: any HTTP
     * answer, even 401, proves the address is right; no answer within the timeout is `unreachable`.
     */
    async probe(apiKey: string | null, timeoutMs = 3000): Promise<void> {
      const url = `${rawBaseUrl.replace(/\/+$/, '')}/models`
      try {
        const res = await fetch(url, {
          headers: { authorization: `Bearer ${apiKey ?? 'sk-status-probe'}` },
          signal: AbortSignal.timeout(timeoutMs),
          redirect: 'manual',
        })
        await res.body?.cancel()
        if (res.status === 404 || res.status >= 500) failed(new LlmUnavailableError(`language model error ${res.status}`, res.status, 'http'))
        else succeeded()
      } catch (err) {
        const timedOut = (err as Error)?.name === 'TimeoutError'
        failed(new LlmUnavailableError(timedOut ? 'language model call timed out' : 'language model unreachable', undefined, timedOut ? 'timeout' : 'network'))
      }
    },
  }
}

export type ProviderMonitor = ReturnType<typeof createProviderMonitor>
