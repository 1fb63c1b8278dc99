import { useEffect, useRef } from 'react'

/** A frame of the team's stream (`GET /escalations/events`), as far as the dashboard reads it. */
export type TeamEvent =
  | {
      type: 'message'
      session_id: string
      id?: string
      role?: string
      content?: string
      created_at?: string
      from_operator?: boolean
      author_name?: string | null
      internal?: boolean
      /** an operator's files sent with the message (issue 54) */
      attachments?: { id: string; name: string; content_type: string; size: number; kind: 'image' | 'document' }[]
    }
  | { type: 'owner'; session_id: string; owner: 'bot' | 'queue' | 'human' | 'closed'; assignee_name: string | null }
  | { type: 'typing'; session_id: string; from: 'visitor' | 'operator'; on: boolean }
  | { type: 'read' | 'availability'; session_id: string }

type Listener = (e: TeamEvent) => void
const listeners = new Set<Listener>()
let source: EventSource | null = null

/**
 * One EventSource per tab, shared by every screen that listens (the shell's alerts, the inbox, the live chat):
 * a browser allows only a few connections per origin over HTTP/1.1. Opened with the first listener, closed
 * with the last. The session is the same-origin cookie, which EventSource sends, and the browser reconnects by
 * itself with Last-Event-ID, so nothing is missed across a dropped connection.
 */
function subscribe(l: Listener): () => void {
  listeners.add(l)
  if (!source) {
    source = new EventSource('/escalations/events')
    source.onmessage = (m) => {
      let e: TeamEvent
      try {
        e = JSON.parse(m.data) as TeamEvent
      } catch {
        return // not a frame of ours
      }
      for (const fn of [...listeners]) fn(e)
    }
  }
  return () => {
    listeners.delete(l)
    if (listeners.size === 0 && source) {
      source.close()
      source = null
    }
  }
}

/** Calls `onEvent` with each frame of the workspace's live stream while mounted (and `enabled`). */
export function useTeamEvents(onEvent: (e: TeamEvent) => void, enabled = true): void {
  const handler = useRef(onEvent)
  handler.current = onEvent
  useEffect(() => (enabled ? subscribe((e) => handler.current(e)) : undefined), [enabled])
}
