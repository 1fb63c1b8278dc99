import { useQueries, useQuery } from '@tanstack/react-query'
import { useMemo, useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api/client'
import type { paths } from '../api/schema'
import type { Res } from '../api/types'
import { DailyChart, TableWithCsv, type Line } from '../ui/chart'
import { ErrorBox, Field, Loading, PageHeader, Select, Tiles } from '../ui/kit'
import { ExportsPanel } from './insights-exports'
import { QueueFigures } from './insights-queue'

type Metric = NonNullable<paths['/analytics/timeseries']['get']['parameters']['query']>['metric']
type Summary = Res<'/analytics/summary', 'get'>
type Filters = { from: string; to: string; tz: string; bot_id?: string }

const OUTCOMES = [
  ['resolved_confirmed', 'Resolved, confirmed', '#15803d'],
  ['resolved_assumed', 'Resolved, assumed', '#1d4ed8'],
  ['handed_off', 'Handed off', '#b45309'],
  ['unresolved', 'Unresolved', '#b91c1c'],
  ['pending', 'Pending', '#6b7280'],
] as const

const localDate = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`
const pct = (v: number) => `${Math.round(v * 1000) / 10} %`
const secs = (v: number) => (v >= 3600 ? `${Math.round((v / 3600) * 10) / 10} h` : v >= 60 ? `${Math.round(v / 6) / 10} min` : `${Math.round(v)} s`)
const count = (v: number) => String(Math.round(v))

/** Daily values of several metrics, one request each, in the filters' order. */
function useSeries(metrics: Metric[], f: Filters) {
  const results = useQueries({
    queries: metrics.map((metric) => ({
      queryKey: ['analytics', 'series', metric, f],
      queryFn: () => call(api.GET('/analytics/timeseries', { params: { query: { metric, ...f } } })),
    })),
  })
  const error = results.find((r) => r.error)?.error
  const ready = results.every((r) => r.data)
  const data = useMemo(() => (ready ? results.map((r) => r.data!) : null), [ready, ...results.map((r) => r.data)])
  return { data, error, retry: () => results.forEach((r) => r.refetch()) }
}

function Chart(props: {
  title: string
  metrics: Metric[]
  labels: string[]
  colors: string[]
  f: Filters
  format: (v: number) => string
  file: string
  yRange?: [number, number]
}) {
  const { data, error, retry } = useSeries(props.metrics, props.f)
  const lines: Line[] | null = useMemo(
    () => (data ? data.map((s, i) => ({ label: props.labels[i]!, color: props.colors[i]!, values: s.points.map((p) => p.value) })) : null),
    [data, props.labels, props.colors],
  )
  if (error) return <ErrorBox error={error} retry={retry} />
  if (!data || !lines) return <Loading label={`Loading ${props.title.toLowerCase()}…`} />
  return (
    <DailyChart
      title={props.title}
      dates={data[0]!.points.map((p) => p.date)}
      lines={lines}
      format={props.format}
      fileName={`${props.file}-${props.f.from}-${props.f.to}.csv`}
      yRange={props.yRange}
    />
  )
}

function SummaryTiles({ s }: { s: Summary }) {
  const resolved = s.outcomes.resolved_confirmed.share + s.outcomes.resolved_assumed.share
  const fb = s.feedback.bot
  const tiles: [string, string][] = [
    ['Conversations', String(s.conversations)],
    ['Questions', String(s.questions)],
    ['Resolved', s.conversations ? pct(resolved) : '–'],
    ['Handed off', s.conversations ? pct(s.outcomes.handed_off.share) : '–'],
    ['First response (median)', s.first_response_s.p50 === null ? '–' : secs(s.first_response_s.p50)],
    ['Positive bot feedback', fb.up + fb.down ? pct(fb.up / (fb.up + fb.down)) : '–'],
  ]
  return <Tiles tiles={tiles} />
}

function OutcomeTable({ s, f }: { s: Summary; f: Filters }) {
  const text = OUTCOMES.map(([o, label]) => [label, String(s.outcomes[o].count), pct(s.outcomes[o].share)])
  return (
    <section className="card" aria-labelledby="outcomes-h">
      <h2 id="outcomes-h">Outcomes of the conversations started in the period</h2>
      <p className="hint">Each conversation has one outcome, decided 24 hours after its last message (pending until then); the five shares add up to 100 %.</p>
      <TableWithCsv caption="Outcomes" head={['Outcome', 'Conversations', 'Share']} rows={text} text={text} fileName={`outcomes-${f.from}-${f.to}.csv`} />
    </section>
  )
}

function Unanswered({ f }: { f: Filters }) {
  const q = useQuery({
    queryKey: ['analytics', 'unanswered', f.bot_id],
    queryFn: () => call(api.GET('/analytics/unanswered', { params: { query: { limit: 10, ...(f.bot_id ? { bot_id: f.bot_id } : {}) } } })),
  })
  if (q.isError) return <ErrorBox error={q.error} retry={() => q.refetch()} />
  if (!q.data) return <Loading label="Loading unanswered topics…" />
  const items = q.data.items
  const text = items.map((g) => [g.label, String(g.question_count), g.examples.map((e) => e.question).join(' | ')])
  const rows = items.map((g) => [
    g.label,
    String(g.question_count),
    <ul key="ex" className="examples">
      {g.examples.map((e) => (
        <li key={e.question}>{e.session_id ? <Link href={`/conversations/${e.session_id}`}>{e.question}</Link> : e.question}</li>
      ))}
    </ul>,
  ])
  return (
    <section className="card" aria-labelledby="unanswered-h">
      <h2 id="unanswered-h">Top unanswered topics</h2>
      {items.length === 0 ? (
        <p className="muted">
          No open gaps. Run the <Link href="/gaps">gap analyzer</Link> to find topics the bot cannot answer.
        </p>
      ) : (
        <TableWithCsv
          caption="Top unanswered topics"
          head={['Topic', 'Questions', 'Example questions']}
          rows={rows}
          text={text}
          fileName="unanswered-topics.csv"
        />
      )}
    </section>
  )
}

export default function Insights() {
  const today = new Date()
  const [from, setFrom] = useState(localDate(new Date(today.getTime() - 29 * 86400_000)))
  const [to, setTo] = useState(localDate(today))
  const [bot, setBot] = useState('')
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
  const f: Filters = useMemo(() => ({ from, to, tz, ...(bot ? { bot_id: bot } : {}) }), [from, to, tz, bot])
  const bots = useQuery({ queryKey: ['bots'], queryFn: () => call(api.GET('/bots')) })
  const summary = useQuery({ queryKey: ['analytics', 'summary', f], queryFn: () => call(api.GET('/analytics/summary', { params: { query: f } })) })
  const botOptions: [string, string][] = [['', 'All bots'], ...(bots.data?.items ?? []).map((b) => [b.id, b.name] as [string, string])]
  return (
    <>
      <PageHeader title="Insights" />
      <p className="hint">
        Figures of the conversations started in the period, by day in your time zone ({tz}). They follow the conversations within a minute.
      </p>
      <div className="filters">
        <Field label="From" type="date" value={from} max={to} onChange={(e) => e.target.value && setFrom(e.target.value)} />
        <Field label="To" type="date" value={to} min={from} onChange={(e) => e.target.value && setTo(e.target.value)} />
        <Select label="Bot" value={bot} options={botOptions} onChange={setBot} />
      </div>
      {summary.isError ? (
        <ErrorBox error={summary.error} retry={() => summary.refetch()} />
      ) : !summary.data ? (
        <Loading label="Loading the figures…" />
      ) : (
        <>
          <SummaryTiles s={summary.data} />
          <OutcomeTable s={summary.data} f={f} />
          <QueueFigures s={summary.data} f={f} />
        </>
      )}
      <Chart
        title="Outcome shares over time"
        metrics={OUTCOMES.map(([o]) => `share_${o}` as Metric)}
        labels={OUTCOMES.map(([, l]) => l)}
        colors={OUTCOMES.map(([, , c]) => c)}
        f={f}
        format={pct}
        file="outcome-shares"
        yRange={[0, 1]}
      />
      <Chart
        title="Volume"
        metrics={['conversations', 'questions']}
        labels={['Conversations', 'Questions']}
        colors={['#1d4ed8', '#7c3aed']}
        f={f}
        format={count}
        file="volume"
      />
      <Chart
        title="First response time of tickets"
        metrics={['first_response_s_p50', 'first_response_s_p90']}
        labels={['Median', '90th percentile']}
        colors={['#0f766e', '#b45309']}
        f={f}
        format={secs}
        file="first-response"
      />
      <Chart
        title="Visitor feedback (share positive)"
        metrics={['feedback_bot_positive_share', 'feedback_operator_positive_share']}
        labels={['Bot answers', 'Operator replies']}
        colors={['#15803d', '#1d4ed8']}
        f={f}
        format={pct}
        file="feedback"
        yRange={[0, 1]}
      />
      <Unanswered f={f} />
      <ExportsPanel from={from} to={to} botId={bot || null} />
    </>
  )
}
