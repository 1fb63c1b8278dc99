import { SseParser } from './sse.js'
import type { Availability } from './availability.js'
import type { LinkLabels, UiLabels } from './labels.js'
import type { Owner } from './live.js'
import type { Source } from './store.js'
import type { Attached } from './attachments.js'

/** A failed call: HTTP status (0 when the service could not be reached), the contract's code when coded. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
  ) {
    super(message)
  }
}

export interface WidgetConfig {
  bot_id: string
  name: string
  link_safety_enabled: boolean
  allowed_domains: string[]
  link_safety_labels: LinkLabels
  labels?: UiLabels
  locale: string
  availability?: Availability
  /** the languages the visitor may choose in the header's menu (#40) */
  languages?: string[]
}

export interface HistoryMessage {
  id: string
  role: 'user' | 'assistant'
  content: string
  created_at: string
  from_operator?: boolean
  author_name?: string | null
  /** the files the visitor sent with the message */
  attachments?: Attached[]
}

export interface History {
  session_id: string
  messages: HistoryMessage[]
  chat_ended: boolean
  ticket_number?: string | null
  owner?: Owner
  /** the conversation's language once known (#52) */
  language?: string | null
}

export type StreamEvent =
  | { type: 'status'; stage: string }
  | { type: 'chunk'; text: string }
  | { type: 'delivered'; message_id: string }
  | {
      type: 'done'
      text: string
      session_id: string
      message_id: string
      chat_ended: boolean
      sources?: Source[]
      ticket_number?: string
      owner?: Owner
      /** the session's language once known: the widget's texts follow it */
      language?: string
    }
  | { type: 'error'; code: string; message: string }

async function failure(res: Response): Promise<ApiError> {
  let code = `http_${res.status}`
  let message = res.statusText
  try {
    const body = await res.json()
    const detail = body?.detail
    if (detail && typeof detail === 'object' && !Array.isArray(detail)) {
      code = String(detail.code ?? code)
      message = String(detail.message ?? message)
    } else if (typeof detail === 'string') message = detail
    else if (typeof body?.error === 'string') message = body.error
  } catch {
    // not JSON
  }
  const retry = Number(res.headers.get('retry-after'))
  return new ApiError(res.status, res.status === 429 ? 'rate_limited' : code, message, Number.isFinite(retry) && retry > 0 ? retry : null)
}

export function createClient(apiBase: string, botId: string) {
  const url = (path: string, query: Record<string, string | null | undefined> = {}) => {
    const q = new URLSearchParams({ bot_id: botId })
    for (const [k, v] of Object.entries(query)) if (v) q.set(k, v)
    return `${apiBase}${path}?${q}`
  }

  async function call<T>(method: string, path: string, query?: Record<string, string | null | undefined>, body?: unknown, signal?: AbortSignal): Promise<T> {
    let res: Response
    try {
      res = await fetch(url(path, query), {
        method,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        signal,
      })
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err
      throw new ApiError(0, 'network', 'network error')
    }
    if (!res.ok) throw await failure(res)
    if (res.status === 204) return undefined as T
    return (await res.json()) as T
  }

  return {
    config: (locale: string) => call<WidgetConfig>('GET', '/widget/config', { locale }),
    initSession: (identityToken: string | null, locale: string) =>
      call<{ session_id: string; mode: string }>('POST', '/widget/session/init', {}, { bot_id: botId, identity_token: identityToken ?? undefined, locale }),
    history: (sessionId: string) => call<History>('GET', '/widget/history', { session_id: sessionId }),
    escalate: (sessionId: string, note: string) =>
      call<{ message: string; ticket_number: string; chat_ended?: boolean }>(
        'POST',
        '/widget/escalate',
        { session_id: sessionId },
        { trigger: 'user_request', user_note: note || undefined },
      ),
    typing: (sessionId: string, on: boolean) => call<unknown>('POST', '/widget/typing', { session_id: sessionId }, { on }),
    /** A file of the conversation, as a download (GET /widget/attachments/{id}): the visitor's own or a person's. */
    fileUrl: (sessionId: string, id: string) => url(`/widget/attachments/${encodeURIComponent(id)}`, { session_id: sessionId }),
    /** The session's live event stream, for an EventSource. */
    eventsUrl: (sessionId: string) => url('/widget/events', { session_id: sessionId }),
    /** A file for the conversation (typed by the service from its bytes): its stored form, or an ApiError (413, 415). */
    async upload(sessionId: string, file: File): Promise<Attached> {
      const form = new FormData()
      form.append('file', file, file.name)
      let res: Response
      try {
        res = await fetch(url('/widget/attachments', { session_id: sessionId }), { method: 'POST', body: form, credentials: 'omit' })
      } catch {
        throw new ApiError(0, 'network', 'network error')
      }
      if (!res.ok) throw await failure(res)
      return (await res.json()) as Attached
    },
    markRead: (sessionId: string, messageId: string) => call<unknown>('POST', '/widget/messages/read', { session_id: sessionId }, { message_id: messageId }),

    /**
     * Sends a message and calls `onEvent` for every frame as it arrives. Resolves after the `done` or
     * `error` frame; an HTTP error before the stream, or a stream that ends without either, throws.
     */
    /** `language`: the one the visitor chose in the widget's menu (the session's language from this message on). */
    async chat(
      sessionId: string | null,
      message: string,
      locale: string,
      onEvent: (e: StreamEvent) => void,
      signal: AbortSignal,
      language?: string | null,
      attachmentIds: string[] = [],
    ): Promise<void> {
      let res: Response
      try {
        res = await fetch(url('/widget/chat', { session_id: sessionId, locale }), {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({ message, ...(language ? { language } : {}), ...(attachmentIds.length ? { attachment_ids: attachmentIds } : {}) }),
          credentials: 'omit',
          signal,
        })
      } catch (err) {
        if ((err as Error).name === 'AbortError') throw err
        throw new ApiError(0, 'network', 'network error')
      }
      if (!res.ok || !res.body) throw await failure(res)
      const reader = res.body.getReader()
      const decoder = new TextDecoder()
      const parser = new SseParser()
      let finished = false
      try {
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          for (const frame of parser.push(decoder.decode(value, { stream: true })) as StreamEvent[]) {
            if (!frame || typeof frame !== 'object') continue
            onEvent(frame)
            if (frame.type === 'done' || frame.type === 'error') finished = true
          }
        }
      } catch (err) {
        if ((err as Error).name === 'AbortError') throw err
        if (!finished) throw new ApiError(0, 'network', 'connection lost')
      }
      if (!finished) throw new ApiError(0, 'network', 'connection lost')
    },
  }
}

export type Client = ReturnType<typeof createClient>
