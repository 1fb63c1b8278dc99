import type { Attached } from './attachments.js'
import { FALLBACK_LABELS } from './labels.js'

/**
 * The visitor's side of a live conversation: the session's event stream (`GET /widget/events`), the
 * visitor's typing signal, and the lines shown when a person joins or leaves (in the visitor's language). The stream is an
 * EventSource, which reconnects by itself with Last-Event-ID; after several failures in a row without a
 * single frame it gives up and the widget falls back to polling the history.
 */

export type Owner = 'bot' | 'queue' | 'human' | 'closed'

export interface LiveMessage {
  id: string
  role: 'user' | 'assistant'
  content: string
  created_at: string
  from_operator?: boolean
  author_name?: string | null
  session_id?: string
  /** a person's files sent with the message */
  attachments?: Attached[]
}

export type LiveEvent =
  | ({ type: 'message' } & LiveMessage)
  | { type: 'owner'; owner: Owner; assignee_name: string | null }
  | { type: 'typing'; from: 'visitor' | 'operator'; on: boolean }
  | { type: 'read' }
  | { type: 'availability'; online?: boolean; reply_eta_s?: number | null; next_open_at?: string | null }

/** Texts of the live conversation: the catalogue's `widget.*` keys, English until /widget/config sends the visitor's. */
const LIVE_KEYS = [
  'operator_joined',
  'someone_joined',
  'back_to_bot',
  'waiting',
  'operator_typing',
  'someone_typing',
  'operator_suffix',
  'conversation_closed',
] as const
export const LIVE_LABELS = Object.fromEntries(LIVE_KEYS.map((k) => [k, FALLBACK_LABELS.ui[k]])) as Record<(typeof LIVE_KEYS)[number], string>
export type LiveLabels = typeof LIVE_LABELS

export function liveLabels(from: Record<string, unknown> | undefined): LiveLabels {
  const out = { ...LIVE_LABELS }
  for (const k of Object.keys(out) as (keyof LiveLabels)[]) if (typeof from?.[k] === 'string') out[k] = from[k] as string
  return out
}

/** How many errors in a row, with no frame between them, before the stream is given up for the poll. */
const MAX_FAILURES = 4

export interface LiveStream {
  close(): void
  /** The last seq seen (for a new stream to carry on from). */
  readonly last: string | null
}

/**
 * Opens the stream. `onEvent` gets every frame; `onGiveUp` is called once when the stream keeps failing
 * (the caller polls instead). `after` continues from a seq seen by an earlier stream.
 */
export function openLiveStream(url: string, after: string | null, onEvent: (e: LiveEvent) => void, onGiveUp: () => void): LiveStream {
  let last = after
  let failures = 0
  let closed = false
  const es = new EventSource(after ? `${url}&after=${encodeURIComponent(after)}` : url)
  es.onmessage = (m) => {
    failures = 0
    if (m.lastEventId) last = m.lastEventId
    let data: unknown
    try {
      data = JSON.parse(m.data)
    } catch {
      return
    }
    if (data && typeof data === 'object' && typeof (data as { type?: unknown }).type === 'string') onEvent(data as LiveEvent)
  }
  es.onopen = () => {
    failures = 0
  }
  es.onerror = () => {
    if (closed) return
    failures++
    // CLOSED: the browser will not retry (an HTTP error); else it retries by itself, up to a point.
    if (es.readyState === EventSource.CLOSED || failures >= MAX_FAILURES) {
      closed = true
      es.close()
      onGiveUp()
    }
  }
  return {
    close() {
      closed = true
      es.close()
    },
    get last() {
      return last
    },
  }
}

/** How often an ongoing "typing" is repeated at most (the service lets it lapse after 30 s). */
const TYPING_REPEAT_MS = 4_000
/** Typing stops this long after the last key. */
const TYPING_IDLE_MS = 5_000

/**
 * The visitor's typing signal, debounced: `on` at the first key and at most once every few seconds while
 * typing goes on, `off` after a pause or when the message is sent. Failures are ignored.
 */
export function typingSignal(send: (on: boolean) => Promise<unknown>) {
  let on = false
  let sentAt = 0
  let idle: ReturnType<typeof setTimeout> | undefined
  const post = (value: boolean) => {
    on = value
    sentAt = Date.now()
    send(value).catch(() => {})
  }
  const stop = () => {
    clearTimeout(idle)
    idle = undefined
    if (on) post(false)
  }
  return {
    input(hasText: boolean) {
      if (!hasText) return stop()
      if (!on || Date.now() - sentAt > TYPING_REPEAT_MS) post(true)
      clearTimeout(idle)
      idle = setTimeout(stop, TYPING_IDLE_MS)
    },
    stop,
  }
}
