import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call, messageOf } from '../api/client'
import { useBots, useRole } from '../session'
import { Badge, Button, Check, Empty, ErrorBox, Loading, PageHeader, Select } from '../ui/kit'
import { CaseForm } from './evals-case-form'
import { ImportCases } from './evals-import'
import { RunForm, RunsList } from './evals-runs'
import type { EvalCase } from './evals-types'

/**
 * Evaluations: the workspace's own test questions, asked of its bot with its own model as dry runs and checked
 * by code (outcome, cited sources, facts, forbidden text, action). Owners, admins and editors write and run
 * them; analysts read them.
 */
export async function listCases() {
  // the list pages (1,000 at most a page): the screen filters and the run view names cases from all of them
  const first = await call(api.GET('/evals/cases', { params: { query: { limit: 1000 } } }))
  const items = [...first.items]
  for (let cursor = first.next_cursor; cursor; ) {
    const page = await call(api.GET('/evals/cases', { params: { query: { limit: 1000, cursor } } }))
    items.push(...page.items)
    cursor = page.next_cursor
  }
  return { items, total: first.total }
}

function AutoRunToggle({ manage }: { manage: boolean }) {
  const qc = useQueryClient()
  const q = useQuery({ queryKey: ['eval-settings'], queryFn: () => call(api.GET('/evals/settings')) })
  // the switch shows the new state at once (a mutation's pending state arrives a tick later)
  const [local, setLocal] = useState<boolean | null>(null)
  const save = useMutation({
    mutationFn: (on: boolean) => call(api.PUT('/evals/settings', { body: { evals_auto_run: on } })),
    onSuccess: (s) => qc.setQueryData(['eval-settings'], s),
    onSettled: () => setLocal(null),
  })
  if (!q.data) return null
  const on = local ?? q.data.evals_auto_run
  if (!manage)
    return <p className="muted">{on ? 'The tests run by themselves after the knowledge changes (at most once an hour).' : 'Automatic runs are off.'}</p>
  return (
    <>
      <Check
        label="Run the tests after the knowledge changes"
        hint="A document added, changed or deleted, or a crawl finishing, starts a run a little later; at most one an hour."
        checked={on}
        onChange={(v) => {
          if (save.isPending) return
          setLocal(v)
          save.mutate(v)
        }}
      />
      {save.isError && (
        <p className="field-error" role="alert">
          {messageOf(save.error)}
        </p>
      )}
    </>
  )
}

function DeleteCase({ c }: { c: EvalCase }) {
  const qc = useQueryClient()
  const del = useMutation({
    mutationFn: () => call(api.DELETE('/evals/cases/{id}', { params: { path: { id: c.id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['eval-cases'] }),
  })
  return (
    <>
      <Button small variant="danger" busy={del.isPending} onClick={() => window.confirm('Delete this test case?') && del.mutate()}>
        Delete<span className="sr-only"> the case “{c.question.slice(0, 60)}”</span>
      </Button>
      {del.isError && (
        <span className="field-error" role="alert">
          {messageOf(del.error)}
        </span>
      )}
    </>
  )
}

/** What a case expects, in a few words. */
function expectation(c: EvalCase): string {
  const e = c.expect
  const parts = [e.outcome === 'handed_off' ? 'handed off' : 'answered']
  if (e.sources_any?.length) parts.push(`cites one of ${e.sources_any.length} source${e.sources_any.length === 1 ? '' : 's'}`)
  if (e.facts?.length) parts.push(`contains ${e.facts.join('; ')}`)
  if (e.forbidden?.length) parts.push(`never says ${e.forbidden.join('; ')}`)
  if (e.action) parts.push(`calls ${e.action.name}`)
  return parts.join(', ')
}

function CasesList({ manage, onEdit }: { manage: boolean; onEdit: (c: EvalCase) => void }) {
  const cases = useQuery({ queryKey: ['eval-cases'], queryFn: listCases })
  const bots = useBots()
  const [tag, setTag] = useState('')
  const [bot, setBot] = useState('')
  if (cases.isPending) return <Loading />
  if (cases.isError) return <ErrorBox error={cases.error} retry={() => cases.refetch()} />
  const items = cases.data.items
  if (items.length === 0)
    return <Empty title="No test cases yet">{manage && <p>Write one, import a CSV or JSONL file, or make one from a conversation.</p>}</Empty>
  const tags = [...new Set(items.flatMap((c) => c.tags))].sort()
  const botName = (id: string | null) => (id ? (bots.data?.items.find((b) => b.id === id)?.name ?? 'another bot') : 'any bot')
  const shown = items.filter((c) => (!tag || c.tags.includes(tag)) && (!bot || (bot === 'none' ? c.bot_id === null : c.bot_id === bot)))
  return (
    <>
      <div className="filters" role="group" aria-label="Filter the cases">
        <Select label="Tag" value={tag} options={[['', 'Any tag'] as const, ...tags.map((t) => [t, t] as const)]} onChange={setTag} />
        <Select
          label="Bot"
          value={bot}
          options={[['', 'Any bot'] as const, ['none', 'Cases for any bot'] as const, ...(bots.data?.items ?? []).map((b) => [b.id, b.name] as const)]}
          onChange={setBot}
        />
        <p className="muted" aria-live="polite">{`${shown.length} of ${items.length} cases`}</p>
      </div>
      <div className="table-wrap" role="region" aria-label="List of test cases" tabIndex={0}>
        <table>
          <caption className="sr-only">Test cases</caption>
          <thead>
            <tr>
              <th scope="col">Question</th>
              <th scope="col">Expected</th>
              <th scope="col">Bot</th>
              <th scope="col">Tags</th>
              {manage && <th scope="col">Change</th>}
            </tr>
          </thead>
          <tbody>
            {shown.map((c) => (
              <tr key={c.id}>
                <td className="kc-cell-wrap">
                  {c.question}
                  {c.turns?.length ? <div className="muted small">{`after ${c.turns.length} earlier turn${c.turns.length === 1 ? '' : 's'}`}</div> : null}
                </td>
                <td className="kc-cell-wrap small">{expectation(c)}</td>
                <td>{botName(c.bot_id)}</td>
                <td>
                  {c.tags.map((t) => (
                    <Badge key={t}>{t}</Badge>
                  ))}
                </td>
                {manage && (
                  <td>
                    <div className="row">
                      <Button small onClick={() => onEdit(c)}>
                        Edit<span className="sr-only"> the case “{c.question.slice(0, 60)}”</span>
                      </Button>
                      <DeleteCase c={c} />
                    </div>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  )
}

export default function EvalsScreen() {
  const { may, me } = useRole()
  const manage = may('evals')
  // automatic runs ask every bot's cases: a member limited to some bots reads the switch, never flips it
  const limited = !!(me as { bot_ids?: string[] | null } | null | undefined)?.bot_ids
  const [mode, setMode] = useState<{ kind: 'none' } | { kind: 'new' } | { kind: 'edit'; c: EvalCase } | { kind: 'import' }>({ kind: 'none' })
  const close = () => setMode({ kind: 'none' })
  return (
    <>
      <PageHeader title="Evaluations">
        {manage && (
          <>
            <Button variant="primary" onClick={() => setMode(mode.kind === 'new' ? { kind: 'none' } : { kind: 'new' })} aria-expanded={mode.kind === 'new'}>
              New test case
            </Button>
            <Button onClick={() => setMode(mode.kind === 'import' ? { kind: 'none' } : { kind: 'import' })} aria-expanded={mode.kind === 'import'}>
              Import cases
            </Button>
          </>
        )}
      </PageHeader>
      <p className="muted">
        Your own test questions, asked of your bot with your model and settings as dry runs (no conversations, tickets or webhooks), and checked by code.
        {manage ? '' : ' Your role may read the cases and runs; owners, admins and editors change and run them.'}
      </p>
      {mode.kind === 'new' && <CaseForm existing={null} onDone={close} />}
      {mode.kind === 'edit' && <CaseForm key={mode.c.id} existing={mode.c} onDone={close} />}
      {mode.kind === 'import' && <ImportCases onDone={close} />}
      <section aria-labelledby="evals-runs">
        <h2 id="evals-runs">Runs</h2>
        <AutoRunToggle manage={manage && !limited} />
        {manage && <RunForm />}
        <RunsList />
      </section>
      <section aria-labelledby="evals-cases">
        <h2 id="evals-cases">Test cases</h2>
        <CasesList manage={manage} onEdit={(c) => setMode({ kind: 'edit', c })} />
      </section>
    </>
  )
}
