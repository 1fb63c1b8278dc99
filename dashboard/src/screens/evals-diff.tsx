import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import { ErrorBox, Loading, Select, When } from '../ui/kit'
import type { EvalDiff, EvalRunSummary } from './evals-types'

const GROUPS: [keyof EvalDiff, string][] = [
  ['broken', 'Broken (passed before, fail now)'],
  ['fixed', 'Fixed (failed before, pass now)'],
  ['still_failing', 'Still failing'],
  ['still_passing', 'Still passing'],
  ['missing', 'Missing (in only one of the runs)'],
]

/** This run against an earlier one: which cases it fixed, broke, left passing or failing, and which are missing. */
export function RunDiff({ id, runs, question }: { id: string; runs: EvalRunSummary[]; question: (caseId: string) => string }) {
  const others = runs.filter((r) => r.id !== id && r.status === 'done')
  const [against, setAgainst] = useState('')
  const diff = useQuery({
    queryKey: ['eval-diff', id, against],
    queryFn: () => call(api.GET('/evals/runs/{id}/diff', { params: { path: { id }, query: { against } } })),
    enabled: !!against,
  })
  if (others.length === 0) return <p className="muted">No other finished run to compare with yet.</p>
  return (
    <>
      <Select
        label="Compare with the run of"
        value={against}
        options={[
          ['', 'Choose a run'] as const,
          ...others.map((r) => [r.id, `${new Date(r.created_at).toLocaleString()} (${r.totals.passed}/${r.totals.cases} passed)`] as const),
        ]}
        onChange={setAgainst}
      />
      {against && diff.isPending && <Loading />}
      {diff.isError && <ErrorBox error={diff.error} retry={() => diff.refetch()} />}
      {diff.data && (
        <div className="grid-2" aria-live="polite">
          {GROUPS.map(([k, title]) => (
            <div key={k} className="card">
              <h3>{`${title}: ${diff.data[k].length}`}</h3>
              {diff.data[k].length > 0 && (
                <ul className="eval-diff-list">
                  {diff.data[k].map((c) => (
                    <li key={c}>{question(c)}</li>
                  ))}
                </ul>
              )}
            </div>
          ))}
        </div>
      )}
      {against && (
        <p className="muted small">
          {'Compared with the run started '}
          <When at={others.find((r) => r.id === against)?.created_at} />.
        </p>
      )}
    </>
  )
}
