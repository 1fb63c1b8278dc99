import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { Link } from 'wouter'
import { api, call, messageOf } from '../api/client'
import { useBots, useRole } from '../session'
import { Badge, Button, Empty, ErrorBox, Field, Loading, Progress, Select, When } from '../ui/kit'
import { type EvalRunSummary, passRate, percent, tagsOf } from './evals-types'

export const listRuns = () => call(api.GET('/evals/runs'))
export const getRun = (id: string) => call(api.GET('/evals/runs/{id}', { params: { path: { id } } }))

const STATUS_TONE = { queued: 'neutral', running: 'info', done: 'ok', failed: 'bad' } as const

export function RunStatus({ r }: { r: Pick<EvalRunSummary, 'status' | 'partial'> }) {
  return (
    <>
      <Badge tone={STATUS_TONE[r.status]}>{r.status}</Badge>
      {r.partial && (
        <>
          {' '}
          <Badge tone="warn">partial</Badge>
        </>
      )}
    </>
  )
}

/** A live run: polled every second until it ends. */
function LiveRun({ id }: { id: string }) {
  const q = useQuery({
    queryKey: ['eval-run', id],
    queryFn: () => getRun(id),
    refetchInterval: (query) => {
      const s = query.state.data
      return s && typeof s !== 'string' && (s.status === 'done' || s.status === 'failed') ? false : 1000
    },
  })
  const qc = useQueryClient()
  const run = q.data && typeof q.data !== 'string' ? q.data : null
  const ended = run?.status === 'done' || run?.status === 'failed'
  useEffect(() => {
    if (ended) void qc.invalidateQueries({ queryKey: ['eval-runs'] })
  }, [ended, qc])
  return (
    <div className="card" role="status" aria-live="polite">
      {!run ? (
        <Loading label="Starting the run…" />
      ) : (
        <>
          <p>
            {'Run '}
            <RunStatus r={run} />
            {` · ${run.totals.cases} case${run.totals.cases === 1 ? '' : 's'} done, ${run.totals.passed} passed`}
          </p>
          <Progress value={Math.round(run.progress * 100)} max={100} label="Run progress" />
          {ended && <Link href={`/evals/runs/${id}`}>See the results</Link>}
        </>
      )}
    </div>
  )
}

/** Start a run: bot, tags and repeats; its progress shows below until it ends. */
export function RunForm() {
  const bots = useBots()
  const [bot, setBot] = useState('')
  const [tags, setTags] = useState('')
  const [repeat, setRepeat] = useState('1')
  const [started, setStarted] = useState<string | null>(null)
  const qc = useQueryClient()
  const start = useMutation({
    mutationFn: () =>
      call(
        api.POST('/evals/runs', { body: { ...(bot ? { bot_id: bot } : {}), ...(tagsOf(tags).length ? { tags: tagsOf(tags) } : {}), repeat: Number(repeat) } }),
      ),
    onSuccess: (r) => {
      setStarted(r.id)
      void qc.invalidateQueries({ queryKey: ['eval-runs'] })
    },
  })
  return (
    <>
      <form
        className="filters"
        aria-label="Start a run"
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          start.mutate()
        }}
      >
        <Select
          label="Run for bot"
          value={bot}
          options={[['', 'Each case’s bot'] as const, ...(bots.data?.items ?? []).map((b) => [b.id, b.name] as const)]}
          onChange={setBot}
        />
        <Field label="Only cases tagged (comma-separated)" value={tags} onChange={(e) => setTags(e.target.value)} />
        <Field label="Repeats (1 to 5)" type="number" min={1} max={5} value={repeat} onChange={(e) => setRepeat(e.target.value)} />
        <div className="field">
          <Button type="submit" variant="primary" busy={start.isPending}>
            Run the tests
          </Button>
        </div>
      </form>
      {start.isError && (
        <p className="field-error" role="alert">
          {messageOf(start.error)}
        </p>
      )}
      {started && <LiveRun key={started} id={started} />}
    </>
  )
}

/** Pass rate of the finished runs, oldest first, as a small line chart (its numbers are in the table below it). */
export function PassRateChart({ runs }: { runs: EvalRunSummary[] }) {
  const points = runs
    .filter((r) => r.status === 'done' && r.totals.cases > 0)
    .slice(0, 30)
    .reverse()
    .map((r) => passRate(r.totals) ?? 0)
  if (points.length < 2) return null
  const w = 300
  const h = 80
  const x = (i: number) => 8 + (i * (w - 16)) / (points.length - 1)
  const y = (v: number) => h - 8 - v * (h - 16)
  const path = points.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')
  const label = `Pass rate of the last ${points.length} runs, oldest first: ${points.map((v) => percent(v)).join(', ')}`
  return (
    <figure className="eval-chart">
      <svg viewBox={`0 0 ${w} ${h}`} role="img" aria-label={label} preserveAspectRatio="none">
        <line x1="8" x2={w - 8} y1={y(1)} y2={y(1)} className="eval-chart-grid" />
        <line x1="8" x2={w - 8} y1={y(0)} y2={y(0)} className="eval-chart-grid" />
        <polyline points={path} className="eval-chart-line" />
        {points.map((v, i) => (
          <circle key={i} cx={x(i)} cy={y(v)} r="3" className="eval-chart-dot" />
        ))}
      </svg>
      <figcaption className="muted small">Pass rate over time (top line 100%, bottom 0%)</figcaption>
    </figure>
  )
}

export function RunsList() {
  const runs = useQuery({ queryKey: ['eval-runs'], queryFn: listRuns, refetchInterval: 10_000 })
  const { may } = useRole()
  if (runs.isPending) return <Loading />
  if (runs.isError) return <ErrorBox error={runs.error} retry={() => runs.refetch()} />
  if (runs.data.items.length === 0)
    return <Empty title="No runs yet">{may('evals') && <p>Start one above: each case is asked of your bot as a dry run.</p>}</Empty>
  return (
    <>
      <PassRateChart runs={runs.data.items} />
      <div className="table-wrap" role="region" aria-label="List of runs" tabIndex={0}>
        <table>
          <caption className="sr-only">Runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col" className="num">
                Pass rate
              </th>
              <th scope="col">Cases</th>
              <th scope="col">Pinned to</th>
            </tr>
          </thead>
          <tbody>
            {runs.data.items.map((r) => (
              <tr key={r.id}>
                <td>
                  <Link href={`/evals/runs/${r.id}`}>
                    <When at={r.created_at} />
                  </Link>
                  {r.trigger === 'auto' && (
                    <>
                      {' '}
                      <Badge tone="info">automatic</Badge>
                    </>
                  )}
                </td>
                <td>
                  <RunStatus r={r} />
                </td>
                <td className="num">{percent(passRate(r.totals))}</td>
                <td>{`${r.totals.passed} passed, ${r.totals.failed} failed, ${r.totals.flaky} flaky`}</td>
                <td className="small">{r.pins ? <Pins pins={r.pins} /> : <span className="muted">not yet</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  )
}

export function Pins({ pins }: { pins: NonNullable<EvalRunSummary['pins']> }) {
  return (
    <span>
      {`knowledge ${pins.knowledge_version.slice(0, 8)} · settings ${pins.settings_hash.slice(0, 8)} · ${pins.chat_model} · ${pins.embedding_model} · prompt ${pins.prompt_version}`}
    </span>
  )
}
