import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import { Button, ErrorBox, Progress, Select, When } from '../ui/kit'
import { useToast } from '../ui/toast'

type Kind = 'conversations' | 'messages' | 'tickets' | 'questions'
type Format = 'csv' | 'jsonl'
const KINDS = [
  ['conversations', 'Conversations'],
  ['messages', 'Messages'],
  ['tickets', 'Tickets'],
  ['questions', 'Questions'],
] as const
const FORMATS = [
  ['csv', 'CSV (spreadsheets)'],
  ['jsonl', 'JSON lines'],
] as const
const STATUS_WORDS = { queued: 'Waiting', running: 'Running', done: 'Ready', failed: 'Failed' } as const

/** Start an export of the period, follow its progress, download it while its link lasts (24 h). */
export function ExportsPanel({ from, to, botId }: { from: string; to: string; botId: string | null }) {
  const [kind, setKind] = useState<Kind>('conversations')
  const [format, setFormat] = useState<Format>('csv')
  const qc = useQueryClient()
  const toast = useToast()
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
  const list = useQuery({
    queryKey: ['exports'],
    queryFn: () => call(api.GET('/exports')),
    refetchInterval: (q) => (q.state.data?.items.some((e) => e.status === 'queued' || e.status === 'running') ? 1000 : false),
  })
  const start = useMutation({
    mutationFn: () => call(api.POST('/exports', { body: { kind, format, from, to, tz, ...(botId ? { bot_ids: [botId] } : {}) } })),
    onSuccess: async () => {
      toast('Export started')
      await qc.invalidateQueries({ queryKey: ['exports'] })
    },
  })
  return (
    <section className="card" aria-labelledby="exports-h">
      <h2 id="exports-h">Exports</h2>
      <p className="hint">The period and bot chosen above, as a file. Text is always the redacted text; a download link lasts 24 hours.</p>
      <div className="filters">
        <Select label="Data" value={kind} options={KINDS} onChange={setKind} />
        <Select label="Format" value={format} options={FORMATS} onChange={setFormat} />
        <Button variant="primary" busy={start.isPending} onClick={() => start.mutate()}>
          Start export
        </Button>
      </div>
      {start.isError && <ErrorBox error={start.error} />}
      {list.isError && <ErrorBox error={list.error} retry={() => list.refetch()} />}
      {list.data && list.data.items.length > 0 && (
        <ul className="export-list">
          {list.data.items.map((e) => (
            <li key={e.id} className="export-item">
              <span>
                <strong>{KINDS.find(([k]) => k === e.kind)?.[1]}</strong> {e.format.toUpperCase()}, {e.from} to {e.to}
              </span>
              <span className="muted">
                {STATUS_WORDS[e.status]}
                {e.status === 'done' && `, ${e.rows} rows`} · started <When at={e.created_at} />
              </span>
              {(e.status === 'queued' || e.status === 'running') && <Progress value={Math.round(e.progress * 100)} max={100} label={`Export of ${e.kind}`} />}
              {e.download_url ? (
                <a className="btn btn-small" href={e.download_url} download>
                  Download
                  <span className="sr-only">
                    {' '}
                    {e.kind} export {e.from} to {e.to}
                  </span>
                </a>
              ) : (
                e.expired && <span className="muted">Link expired</span>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
