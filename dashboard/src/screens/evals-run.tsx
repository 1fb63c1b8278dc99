import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'wouter'
import { Badge, Check, Empty, ErrorBox, Loading, PageHeader, Progress, When } from '../ui/kit'
import { listCases } from './evals'
import { RunDiff } from './evals-diff'
import { getRun, listRuns, Pins, RunStatus } from './evals-runs'
import { useDocumentTitles } from './document-titles'
import { type EvalResult, passRate, percent } from './evals-types'

function Result({ r, question, titles }: { r: EvalResult; question: string; titles: Map<string, string> | null }) {
  const failed = r.checks.filter((c) => !c.passed)
  return (
    <li className={`card eval-result${r.passed ? '' : ' eval-failed'}`}>
      <h3 className="eval-q">
        <Badge tone={r.passed ? 'ok' : r.flaky ? 'warn' : 'bad'}>{r.passed ? 'passed' : 'failed'}</Badge>
        {r.flaky && (
          <>
            {' '}
            <Badge tone="warn">flaky</Badge>
          </>
        )}{' '}
        {question}
      </h3>
      <div className="eval-cols">
        <div>
          <h4>Answer</h4>
          <p className="msg-text">{r.answer || <span className="muted">(no answer)</span>}</p>
          <p className="small muted">{r.outcome === 'handed_off' ? 'Handed off to a person' : 'Answered'}</p>
        </div>
        <div>
          <h4>Sources</h4>
          {r.reached !== null && <p className="small">{`Expected source reached the model: ${r.reached ? 'yes' : 'no'}`}</p>}
          {r.cited.length ? (
            <ul className="eval-cited">
              {r.cited.map((s) => (
                <li key={s} className={titles?.has(s) ? undefined : 'kc-url'}>
                  {titles?.has(s) ? <Link href={`/knowledge/documents/${s}`}>{titles.get(s)}</Link> : s}
                </li>
              ))}
            </ul>
          ) : (
            <p className="small muted">Nothing cited</p>
          )}
        </div>
        <div>
          <h4>{failed.length ? 'Failed checks' : 'Checks'}</h4>
          <ul className="eval-checks">
            {(failed.length ? failed : r.checks).map((c, i) => (
              <li key={`${c.name}-${i}`}>
                <strong>{c.name}</strong>
                {c.passed ? ' passed' : ' failed'}: {c.detail}
              </li>
            ))}
          </ul>
          {r.runs.length > 1 && <p className="small muted">{`${r.runs.filter((x) => x.passed).length} of ${r.runs.length} repeats passed`}</p>}
        </div>
      </div>
    </li>
  )
}

/** A run: progress while it runs, pins, totals, each case's answer, sources and checks side by side, JUnit, diff. */
export default function EvalRunScreen({ params }: { params: Record<string, string> }) {
  const id = params.id!
  const run = useQuery({
    queryKey: ['eval-run', id],
    queryFn: () => getRun(id),
    refetchInterval: (q) => {
      const d = q.state.data
      return d && typeof d !== 'string' && (d.status === 'done' || d.status === 'failed') ? false : 1500
    },
  })
  const cases = useQuery({ queryKey: ['eval-cases'], queryFn: listCases })
  const runs = useQuery({ queryKey: ['eval-runs'], queryFn: listRuns })
  const [onlyFailed, setOnlyFailed] = useState(false)
  const titles = useDocumentTitles()
  const questionOf = (caseId: string) => cases.data?.items.find((c) => c.id === caseId)?.question ?? 'A case since deleted'
  const r = run.data && typeof run.data !== 'string' ? run.data : null
  return (
    <>
      <p>
        <Link href="/evals">← Evaluations</Link>
      </p>
      <PageHeader title="Evaluation run">
        <a className="btn" href={`/evals/runs/${id}?format=junit`} download={`evaluation-${id}.xml`}>
          Download JUnit XML
        </a>
      </PageHeader>
      {run.isPending ? (
        <Loading />
      ) : run.isError ? (
        <ErrorBox error={run.error} retry={() => run.refetch()} />
      ) : !r ? null : (
        <>
          <dl className="tiles">
            <div className="tile">
              <dt>Status</dt>
              <dd>
                <RunStatus r={r} />
              </dd>
            </div>
            <div className="tile">
              <dt>Pass rate</dt>
              <dd>{percent(passRate(r.totals))}</dd>
            </div>
            <div className="tile">
              <dt>Passed / failed</dt>
              <dd>{`${r.totals.passed} / ${r.totals.failed}`}</dd>
            </div>
            <div className="tile">
              <dt>Flaky</dt>
              <dd>{r.totals.flaky}</dd>
            </div>
          </dl>
          {(r.status === 'queued' || r.status === 'running') && <Progress value={Math.round(r.progress * 100)} max={100} label="Run progress" />}
          {r.error && (
            <p className="error-box" role="alert">
              {r.error}
            </p>
          )}
          <p className="small muted">
            {'Started '}
            <When at={r.created_at} />
            {r.repeat > 1 ? ` · each case ${r.repeat} times` : ''}
            {r.pins ? ' · ' : ''}
            {r.pins && <Pins pins={r.pins} />}
          </p>
          <section aria-labelledby="eval-results">
            <h2 id="eval-results">Results</h2>
            <Check label="Show failed cases only" checked={onlyFailed} onChange={setOnlyFailed} />
            {r.results.length === 0 ? (
              <Empty title="No results yet" />
            ) : (
              <ul className="eval-results">
                {/* failed cases first (what needs work), each group in the order the cases were asked */}
                {[...r.results]
                  .filter((x) => !onlyFailed || !x.passed)
                  .sort((a, b) => Number(a.passed) - Number(b.passed))
                  .map((x) => (
                    <Result key={x.case_id} r={x} question={questionOf(x.case_id)} titles={titles} />
                  ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="eval-diff">
            <h2 id="eval-diff">Compare with another run</h2>
            {runs.data && <RunDiff id={id} runs={runs.data.items} question={questionOf} />}
          </section>
        </>
      )}
    </>
  )
}
