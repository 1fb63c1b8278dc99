import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import type { Gap, Res } from '../api/types'
import { Badge, Button, CopyButton, Empty, ErrorBox, Loading, PageHeader, Progress, Select, When } from '../ui/kit'
import { percent, score, type Tone } from '../ui/ops'
import { useToast } from '../ui/toast'

type AStatus = 'active' | 'dismissed' | 'archived' | 'all'
type BStatus = 'active' | 'closed' | 'dismissed' | 'inactive' | 'archived' | 'all'
type ASort = 'coverage_asc' | 'newest'
type BSort = 'signal_desc' | 'coverage_asc' | 'newest'
type RunMode = 'both' | 'mode_a' | 'mode_b'
type Reason = 'feature_request' | 'not_relevant' | 'already_covered' | 'other'
type Draft = Res<'/gap-analyzer/{source}/{gap_id}/draft', 'post'>
type Run = Res<'/gap-analyzer/recalculate', 'post'>

const A_STATUS = [
  ['active', 'Active'],
  ['dismissed', 'Dismissed'],
  ['archived', 'Archived'],
  ['all', 'All'],
] as const
const B_STATUS = [
  ['active', 'Active'],
  ['closed', 'Closed (now answered)'],
  ['dismissed', 'Dismissed'],
  ['inactive', 'Inactive (no recent questions)'],
  ['archived', 'Archived'],
  ['all', 'All'],
] as const
const A_SORT = [
  ['coverage_asc', 'Least covered first'],
  ['newest', 'Newest first'],
] as const
const B_SORT = [
  ['signal_desc', 'Strongest signal first'],
  ['coverage_asc', 'Least covered first'],
  ['newest', 'Newest first'],
] as const
const RUN_MODES = [
  ['both', 'Both analyses'],
  ['mode_a', 'Topics missing from your documents'],
  ['mode_b', "Visitors' unanswered questions"],
] as const
const REASONS = [
  ['not_relevant', 'Not relevant'],
  ['already_covered', 'Already covered'],
  ['feature_request', 'A feature request, not a knowledge gap'],
  ['other', 'Other'],
] as const
const CLASS_TONE: Record<string, Tone> = { uncovered: 'bad', partial: 'warn', covered: 'ok' }
const CLASS_WORDS: Record<string, string> = { uncovered: 'Not covered', partial: 'Partly covered', covered: 'Covered' }
const MODE_WORDS = { mode_a: 'Topics missing from your documents', mode_b: "Visitors' questions the knowledge answers badly" } as const

function GapItem({ gap }: { gap: Gap }) {
  const [reason, setReason] = useState<Reason>('not_relevant')
  const [draft, setDraft] = useState<Draft | null>(null)
  const qc = useQueryClient()
  const toast = useToast()
  const path = { params: { path: { source: gap.source, gap_id: gap.id } } }
  const refresh = () => qc.invalidateQueries({ queryKey: ['gaps'] })
  const dismiss = useMutation({
    mutationFn: () => call(api.POST('/gap-analyzer/{source}/{gap_id}/dismiss', { ...path, body: { reason } })),
    onSuccess: async () => {
      toast('Gap dismissed')
      await refresh()
    },
  })
  const reactivate = useMutation({
    mutationFn: () => call(api.POST('/gap-analyzer/{source}/{gap_id}/reactivate', path)),
    onSuccess: async () => {
      toast('Gap active again')
      await refresh()
    },
  })
  const write = useMutation({
    mutationFn: () => call(api.POST('/gap-analyzer/{source}/{gap_id}/draft', path)),
    onSuccess: setDraft,
  })
  return (
    <li className="card gap-item">
      <h3>{gap.label}</h3>
      <div className="row">
        <Badge tone={CLASS_TONE[gap.classification] ?? 'neutral'}>{CLASS_WORDS[gap.classification] ?? gap.classification}</Badge>
        {gap.status !== 'active' && <Badge>{gap.status[0]!.toUpperCase() + gap.status.slice(1)}</Badge>}
        {gap.is_new && <Badge tone="info">New</Badge>}
      </div>
      <dl className="facts">
        <dt>Coverage</dt>
        <dd>{percent(gap.coverage_score)}</dd>
        {gap.source === 'mode_b' && (
          <>
            <dt>Questions</dt>
            <dd>{gap.question_count}</dd>
            <dt>Signal</dt>
            <dd>{score(gap.signal_weight)}</dd>
          </>
        )}
        <dt>First seen</dt>
        <dd>
          <When at={gap.first_seen_at} />
        </dd>
        {gap.dismiss_reason && (
          <>
            <dt>Dismissed as</dt>
            <dd>{REASONS.find(([v]) => v === gap.dismiss_reason)?.[1] ?? gap.dismiss_reason}</dd>
          </>
        )}
      </dl>
      {gap.example_questions.length > 0 && (
        <>
          <p className="muted">{gap.source === 'mode_b' ? 'What visitors asked:' : 'Example questions:'}</p>
          <ul className="examples">
            {gap.example_questions.map((q, i) => (
              <li key={i}>{q}</li>
            ))}
          </ul>
        </>
      )}
      <div className="row gap-actions">
        <Button small variant="primary" busy={write.isPending} onClick={() => write.mutate()}>
          Draft an article
        </Button>
        {gap.status === 'dismissed' ? (
          <Button small busy={reactivate.isPending} onClick={() => reactivate.mutate()}>
            Reactivate
          </Button>
        ) : (
          gap.status === 'active' && (
            <form
              className="row dismiss-form"
              onSubmit={(e) => {
                e.preventDefault()
                dismiss.mutate()
              }}
            >
              <Select label="Reason" value={reason} options={REASONS} onChange={setReason} />
              <Button type="submit" small busy={dismiss.isPending}>
                Dismiss
              </Button>
            </form>
          )
        )}
      </div>
      <ErrorBox error={dismiss.error ?? reactivate.error ?? write.error} />
      {draft && (
        <div className="draft">
          <h4>Draft: {draft.title}</h4>
          <p className="hint">Markdown to edit and add to your knowledge.</p>
          <pre>{draft.markdown}</pre>
          <div className="row">
            <CopyButton text={draft.markdown} label="Copy draft" />
            <Button small onClick={() => setDraft(null)}>
              Close draft
            </Button>
          </div>
        </div>
      )}
    </li>
  )
}

function GapList({ items, empty }: { items: Gap[]; empty: string }) {
  if (items.length === 0) return <Empty title={empty} />
  return (
    <ul className="gap-list">
      {items.map((g) => (
        <GapItem key={g.id} gap={g} />
      ))}
    </ul>
  )
}

function Recalculate({ onAccepted }: { onAccepted: () => void }) {
  const [mode, setMode] = useState<RunMode>('both')
  const [run, setRun] = useState<Run | null>(null)
  const recalc = useMutation({
    mutationFn: () => call(api.POST('/gap-analyzer/recalculate', { params: { query: { mode } } })),
    onSuccess: (r) => {
      setRun(r)
      onAccepted()
    },
  })
  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault()
        recalc.mutate()
      }}
    >
      <h2>Recalculate</h2>
      <p className="hint">The analysis also runs by itself; recalculate after adding documents to see the effect now.</p>
      <div className="row recalc">
        <Select label="What to analyse" value={mode} options={RUN_MODES} onChange={setMode} />
        <Button type="submit" busy={recalc.isPending}>
          Recalculate
        </Button>
      </div>
      <div role="status">
        {run &&
          (run.status === 'accepted' ? (
            <p className="notice">Recalculation started. The lists update when it is done.</p>
          ) : (
            <p className="notice">
              A recalculation is already running.
              {run.retry_after_seconds !== null && ` You can start another in ${run.retry_after_seconds} s.`}
            </p>
          ))}
      </div>
      <ErrorBox error={recalc.error} />
    </form>
  )
}

type RunState = NonNullable<Res<'/gap-analyzer', 'get'>['summary']['run']>
const isOpen = (r: RunState | null | undefined) => r?.status === 'queued' || r?.status === 'running'

/** The open run's counts as a bar: steps done of those known so far (the total grows as the run finds its topics). */
function RunProgress({ run }: { run: RunState }) {
  if (run.status === 'queued' || !run.progress) return <p className="muted">Analysis queued: it starts when a worker is free.</p>
  const { done, total } = run.progress
  return (
    <div>
      <Progress value={done} max={total} label="Gap analysis progress" />
      <p className="muted">
        Analysing: {done} of {total} steps
      </p>
    </div>
  )
}

export default function Gaps() {
  const [aStatus, setAStatus] = useState<AStatus>('active')
  const [bStatus, setBStatus] = useState<BStatus>('active')
  const [aSort, setASort] = useState<ASort>('coverage_asc')
  const [bSort, setBSort] = useState<BSort>('signal_desc')
  const [pollUntil, setPollUntil] = useState(0)
  const q = useQuery({
    queryKey: ['gaps', aStatus, bStatus, aSort, bSort],
    queryFn: () =>
      call(api.GET('/gap-analyzer', { params: { query: { mode_a_status: aStatus, mode_b_status: bStatus, mode_a_sort: aSort, mode_b_sort: bSort } } })),
    placeholderData: (prev) => prev,
    // While a run is open its progress is followed closely; for a while after a recalculation, the lists follow it.
    refetchInterval: (query) => (isOpen(query.state.data?.summary.run) ? 1500 : Date.now() < pollUntil ? 3000 : false),
  })
  const s = q.data?.summary
  return (
    <>
      <PageHeader title="Knowledge gaps" />
      <p className="hint">What your knowledge is missing: topics your documents do not cover, and questions visitors ask that the bot answers badly.</p>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : (
        <>
          <dl className="stats">
            <div>
              <dt>Active gaps</dt>
              <dd>{s!.total_active}</dd>
            </div>
            <div>
              <dt>Not covered</dt>
              <dd>{s!.uncovered_count}</dd>
            </div>
            <div>
              <dt>Partly covered</dt>
              <dd>{s!.partial_count}</dd>
            </div>
            <div>
              <dt>New</dt>
              <dd>{s!.new_count}</dd>
            </div>
            <div>
              <dt>From documents</dt>
              <dd>{s!.by_source.mode_a}</dd>
            </div>
            <div>
              <dt>From visitors</dt>
              <dd>{s!.by_source.mode_b}</dd>
            </div>
          </dl>
          <p className="muted">
            Last analysed: <When at={s!.last_updated} />
          </p>
          <div role="status">{isOpen(s!.run) && <RunProgress run={s!.run!} />}</div>
        </>
      )}
      <Recalculate
        onAccepted={() => {
          setPollUntil(Date.now() + 60_000)
          void q.refetch()
        }}
      />
      {q.data && (
        <div className="grid-2">
          <section aria-labelledby="gaps-a">
            <h2 id="gaps-a">{MODE_WORDS.mode_a}</h2>
            <div className="filters">
              <Select label="Status of document topics" value={aStatus} options={A_STATUS} onChange={setAStatus} />
              <Select label="Order of document topics" value={aSort} options={A_SORT} onChange={setASort} />
            </div>
            <GapList items={q.data.mode_a_items} empty="No missing topics found" />
          </section>
          <section aria-labelledby="gaps-b">
            <h2 id="gaps-b">{MODE_WORDS.mode_b}</h2>
            <div className="filters">
              <Select label="Status of visitor questions" value={bStatus} options={B_STATUS} onChange={setBStatus} />
              <Select label="Order of visitor questions" value={bSort} options={B_SORT} onChange={setBSort} />
            </div>
            <GapList items={q.data.mode_b_items} empty="No badly answered questions found" />
          </section>
        </div>
      )}
    </>
  )
}
