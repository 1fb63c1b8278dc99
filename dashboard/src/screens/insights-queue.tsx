import { useQuery } from '@tanstack/react-query'
import { api, call } from '../api/client'
import type { Res } from '../api/types'
import { TableWithCsv } from '../ui/chart'
import { ErrorBox, Loading, Tiles } from '../ui/kit'

type Summary = Res<'/analytics/summary', 'get'>
type Filters = { from: string; to: string; tz: string; bot_id?: string }

const secs = (v: number | null) =>
  v === null ? '–' : v >= 3600 ? `${Math.round((v / 3600) * 10) / 10} h` : v >= 60 ? `${Math.round(v / 6) / 10} min` : `${Math.round(v)} s`

/**
 * The live queue of the period (#39): how long visitors waited for a person, how many left before anyone
 * answered, and per agent the hand-offs they had with their first reply and resolution times.
 */
export function QueueFigures({ s, f }: { s: Summary; f: Filters }) {
  const agents = useQuery({ queryKey: ['analytics', 'agents', f], queryFn: () => call(api.GET('/analytics/agents', { params: { query: f } })) })
  const tiles: [string, string][] = [
    ['Queue wait (median)', secs(s.queue_wait_s.p50)],
    ['Queue wait (90th percentile)', secs(s.queue_wait_s.p90)],
    ['Abandoned in the queue', String(s.abandoned_in_queue)],
  ]
  const items = agents.data?.items ?? []
  const text = items.map((a) => [
    a.name ?? 'A former member',
    String(a.conversations),
    String(a.resolved),
    secs(a.first_reply_s.p50),
    secs(a.first_reply_s.p90),
    secs(a.resolve_s.p50),
    secs(a.resolve_s.p90),
  ])
  return (
    <section className="card" aria-labelledby="queue-h">
      <h2 id="queue-h">Queue and agents</h2>
      <p className="hint">
        Hand-offs of the period: the wait from the hand-off until a person had the conversation, and the visitors who left before any reply.
      </p>
      <Tiles tiles={tiles} />
      {agents.isError ? (
        <ErrorBox error={agents.error} retry={() => agents.refetch()} />
      ) : !agents.data ? (
        <Loading label="Loading the agents' figures…" />
      ) : items.length === 0 ? (
        <p className="muted">No hand-off of the period was assigned to anyone yet.</p>
      ) : (
        <TableWithCsv
          caption="Per agent"
          head={['Agent', 'Conversations', 'Resolved', 'First reply (median)', 'First reply (90th pct.)', 'Resolution (median)', 'Resolution (90th pct.)']}
          rows={text}
          text={text}
          fileName={`agents-${f.from}-${f.to}.csv`}
        />
      )}
    </section>
  )
}
