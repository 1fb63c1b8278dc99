import { useQuery } from '@tanstack/react-query'
import { api, call } from '../api/client'
import type { LogMessage } from '../api/types'
import { Badge } from '../ui/kit'

export type TranscriptCall = LogMessage['action_calls'][number]

/** How a call's status reads at a glance (the call log and the transcript). */
export const CALL_TONE: Record<string, 'ok' | 'warn' | 'bad' | 'neutral' | 'info'> = {
  ok: 'ok',
  http_error: 'bad',
  timeout: 'bad',
  refused: 'bad',
  blocked: 'bad',
  cancelled: 'neutral',
  pending: 'info',
  running: 'info',
}

/**
 * The action calls of one turn in a transcript: name, status, HTTP status, latency and the arguments as the
 * call log keeps them (PII redacted, visitor values named, never a secret). Shown as plain text only.
 */
export function TurnActionCalls({ calls }: { calls: readonly TranscriptCall[] }) {
  if (calls.length === 0) return null
  return (
    <div className="sources action-calls">
      <span className="ideal-label">Actions called:</span>
      <ul>
        {calls.map((c) => (
          <li key={c.id}>
            <code>{c.action ?? 'a deleted action'}</code> <Badge tone={CALL_TONE[c.status] ?? 'neutral'}>{c.status}</Badge>
            {c.http_status !== null && <> HTTP {c.http_status}</>}
            {c.latency_ms !== null && <> · {c.latency_ms} ms</>}
            {Object.keys(c.arguments).length > 0 && (
              <>
                {' '}
                · <code className="call-args">{JSON.stringify(c.arguments)}</code>
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  )
}

/** A ticket's conversation: every action call its turns made, or nothing when there were none. */
export function SessionActionCalls({ sessionId }: { sessionId: string }) {
  const log = useQuery({
    queryKey: ['transcript', sessionId, false],
    queryFn: () => call(api.GET('/chat/logs/session/{session_id}', { params: { path: { session_id: sessionId }, query: { include_original: false } } })),
  })
  const calls = (log.data?.messages ?? []).flatMap((m) => m.action_calls)
  if (calls.length === 0) return null
  return (
    <section aria-labelledby="ticket-action-calls-h">
      <h2 id="ticket-action-calls-h">Actions the bot called</h2>
      <TurnActionCalls calls={calls} />
    </section>
  )
}
