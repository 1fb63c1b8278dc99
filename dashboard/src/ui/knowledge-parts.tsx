import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import type { DocumentItem, UrlSource } from '../api/types'
import { Badge, Button, ErrorBox, fieldError, Progress, TextArea } from './kit'
import { useToast } from './toast'

/** Small pieces shared by the knowledge and conversation screens. */

export function DocStatus({ status }: { status: DocumentItem['status'] | string }) {
  if (status === 'ready') return <Badge tone="ok">Ready</Badge>
  if (status === 'error') return <Badge tone="bad">Error</Badge>
  if (status === 'processing') return <Badge tone="info">Processing</Badge>
  return <Badge>{status}</Badge>
}

/** Whether the document's vectors exist: keyword search works without them, meaning-based search needs them. */
export function VectorsStatus({ embeddings }: { embeddings: DocumentItem['embeddings'] }) {
  if (embeddings.status === 'ready') return embeddings.total > 0 ? <Badge tone="ok">Vectors ready</Badge> : null
  if (embeddings.status === 'pending') return <Badge tone="info">{`Vectors ${embeddings.done}/${embeddings.total}`}</Badge>
  return (
    <span title={embeddings.message ?? undefined}>
      <Badge tone="warn">Keyword search only</Badge>
    </span>
  )
}

export function SourceStatus({ status }: { status: UrlSource['status'] }) {
  const tone = ({ queued: 'neutral', indexing: 'info', ready: 'ok', error: 'bad', paused: 'warn' } as const)[status]
  const text = { queued: 'Queued', indexing: 'Indexing', ready: 'Ready', error: 'Error', paused: 'Paused' }[status]
  return <Badge tone={tone}>{text}</Badge>
}

export const TYPE_NAMES: Record<DocumentItem['file_type'], string> = {
  pdf: 'PDF',
  markdown: 'Markdown',
  docx: 'Word',
  doc: 'Word (old)',
  plaintext: 'Text',
  json: 'JSON',
  yaml: 'YAML',
  swagger: 'OpenAPI',
  url: 'Web page',
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`
  return `${(n / 1024 / 1024).toFixed(1)} MB`
}

export const severityTone = (s: 'high' | 'medium' | 'low') => (s === 'high' ? 'bad' : s === 'medium' ? 'warn' : 'neutral')

/** Health score as a badge with the number of warnings, for tables. */
export function HealthCell({ health }: { health: DocumentItem['health_status'] }) {
  if (!health) return <span className="muted">not checked</span>
  if (health.error) return <span className="muted">check failed</span>
  const score = health.score
  const tone = score === null ? 'neutral' : score >= 80 ? 'ok' : score >= 50 ? 'warn' : 'bad'
  const n = health.warnings.length
  return (
    <span className="row kc-nowrap">
      <Badge tone={tone}>{score === null ? 'no score' : `${score}/100`}</Badge>
      {n > 0 && <span className="muted">{`${n} warning${n === 1 ? '' : 's'}`}</span>}
    </span>
  )
}

/**
 * The operator's "ideal answer" for an assistant message: marks the answer as bad (feedback down) with the
 * text it should have given. Saved answers feed the bad-answers list and the FAQ suggestions.
 */
export function IdealAnswerEditor({
  messageId,
  initial,
  onSaved,
  label = 'Ideal answer',
}: {
  messageId: string
  initial: string | null
  onSaved?: () => void
  label?: string
}) {
  const [open, setOpen] = useState(false)
  const [text, setText] = useState(initial ?? '')
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: () =>
      call(
        api.POST('/chat/messages/{message_id}/feedback', {
          params: { path: { message_id: messageId } },
          body: { feedback: 'down', ideal_answer: text.trim() || null },
        }),
      ),
    onSuccess: async () => {
      setOpen(false)
      toast('Ideal answer saved')
      await Promise.all([
        qc.invalidateQueries({ queryKey: ['transcript'] }),
        qc.invalidateQueries({ queryKey: ['bad-answers'] }),
        qc.invalidateQueries({ queryKey: ['faq'] }),
      ])
      onSaved?.()
    },
  })
  if (!open)
    return (
      <div className="ideal">
        {initial && (
          <div className="ideal-text">
            <span className="ideal-label">{label}:</span> <span className="msg-text">{initial}</span>
          </div>
        )}
        <Button small onClick={() => setOpen(true)}>
          {initial ? 'Edit ideal answer' : 'Write ideal answer'}
        </Button>
      </div>
    )
  return (
    <form
      className="ideal"
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
      noValidate
    >
      <TextArea
        label={label}
        hint="What the bot should have answered. Saving marks this answer as bad and proposes the question with this answer as an FAQ: once approved (FAQ, Candidates), the bot answers it so."
        value={text}
        rows={4}
        autoFocus
        onChange={(e) => setText(e.target.value)}
        error={fieldError(save.error, 'ideal_answer')}
      />
      <ErrorBox error={save.error && !fieldError(save.error, 'ideal_answer') ? save.error : null} />
      <div className="row">
        <Button type="submit" variant="primary" small busy={save.isPending}>
          Save ideal answer
        </Button>
        <Button small onClick={() => setOpen(false)}>
          Cancel
        </Button>
      </div>
    </form>
  )
}

export const SCHEDULES = [
  ['weekly', 'Weekly'],
  ['daily', 'Daily'],
  ['manual', 'Only when I refresh'],
] as const

/** A schedule in words, the connectors' hourly included. */
export const scheduleWords = (schedule: string) => (schedule === 'hourly' ? 'Every hour' : (SCHEDULES.find(([v]) => v === schedule)?.[1] ?? schedule))

/** Pages (a website's) or articles (a connected help centre's) indexed of those found, as a bar and in words. */
export function CrawlProgress({ s }: { s: Pick<UrlSource, 'name' | 'pages_found' | 'pages_indexed' | 'status' | 'source_type'> }) {
  const busy = s.status === 'queued' || s.status === 'indexing'
  const unit = s.source_type === 'url' ? 'pages' : 'articles'
  return (
    <div className="crawl-progress">
      {(busy || s.pages_found > 0) && (
        <Progress value={s.pages_indexed} max={s.pages_found} label={`${unit === 'pages' ? 'Pages' : 'Articles'} of ${s.name} indexed`} />
      )}
      <span className="muted kc-small kc-nowrap">
        {s.status === 'queued' && s.pages_found === 0 ? 'Waiting to start' : `${s.pages_indexed} of ${s.pages_found} ${unit} indexed`}
      </span>
    </div>
  )
}
