import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useLocation } from 'wouter'
import { api, ApiError, call, messageOf } from '../api/client'
import { useRole } from '../session'
import { Badge, Button, Check, ErrorBox, fieldError, Loading, PageHeader, TextArea, When } from '../ui/kit'
import { CALL_TONE } from './action-calls'
import { ActionForm } from './action-form'
import { useEnabledToggle } from './action-toggle'
import { type Action, parseJson } from './action-types'

/**
 * One action: the enable switch and the call log at the top, then the test console and the definition
 * (editable by owners and admins, read-only for editors), whose response fields are picked from the test's answer. A test is a dry run unless "Send for real" is switched on, which only owners and admins see.
 */
function TestConsole({ a, onAnswer }: { a: Action; onAnswer: (body: string | null) => void }) {
  const { may } = useRole()
  const example = Object.fromEntries(a.parameters.filter((p) => p.source === 'model').map((p) => [p.name, '']))
  const [args, setArgs] = useState(JSON.stringify(example, null, 2))
  const [claims, setClaims] = useState(a.parameters.some((p) => p.source === 'visitor') ? '{\n  "user_id": ""\n}' : '')
  const [live, setLive] = useState(false)
  const qc = useQueryClient()
  const run = useMutation({
    mutationFn: () => {
      const bad: Record<string, string> = {}
      const p = parseJson(args, 'The arguments')
      const c = parseJson(claims, 'The visitor claims')
      if (p.error) bad.arguments = p.error
      if (c.error) bad.visitor_claims = c.error
      if (Object.keys(bad).length) throw new ApiError(422, 'Please fix the marked fields.', 'validation_error', bad)
      return call(
        api.POST('/actions/{id}/test', {
          params: { path: { id: a.id } },
          body: { arguments: (p.value ?? {}) as Record<string, never>, visitor_claims: (c.value ?? null) as Record<string, never> | null, live },
        }),
      )
    },
    // a live call is logged, and the first one makes the workspace's signing secret
    onSuccess: (res) => {
      // a live answer is the sample to pick response fields from
      if (res.response?.body) onAnswer(res.response.body)
      if (live) return Promise.all([qc.invalidateQueries({ queryKey: ['action-calls', a.id] }), qc.invalidateQueries({ queryKey: ['action-secret'] })])
    },
  })
  const r = run.data
  return (
    <section className="card" aria-labelledby="test-h">
      <h2 id="test-h">Test console</h2>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          run.mutate()
        }}
      >
        <div className="grid-2">
          <TextArea label="Arguments (JSON)" rows={4} value={args} onChange={(e) => setArgs(e.target.value)} error={fieldError(run.error, 'arguments')} />
          <TextArea
            label="Visitor claims (JSON)"
            hint="As in a signed identity token; empty for an anonymous visitor."
            rows={4}
            value={claims}
            onChange={(e) => setClaims(e.target.value)}
            error={fieldError(run.error, 'visitor_claims')}
          />
        </div>
        {may('actions') && (
          <Check
            label="Send for real"
            hint="Off: a dry run, nothing is sent. On: the request goes to your API and is logged."
            checked={live}
            onChange={setLive}
          />
        )}
        {run.isError && !fieldError(run.error, 'arguments', 'visitor_claims') && (
          <p className="field-error" role="alert">
            {messageOf(run.error)}
          </p>
        )}
        <Button type="submit" variant={live ? 'danger' : 'primary'} busy={run.isPending}>
          {live ? 'Send request' : 'Dry run'}
        </Button>
      </form>
      <div role="status" aria-live="polite">
        {r && (
          <div className="stack">
            <h3>{r.status === 'dry_run' ? 'Dry run: the request that would be sent' : `Sent: ${r.status}`}</h3>
            <pre aria-label="Request">
              {`${r.request.method} ${r.request.url}\n${Object.entries(r.request.headers)
                .map(([k, v]) => `${k}: ${v}`)
                .join('\n')}${r.request.body ? `\n\n${r.request.body}` : ''}`}
            </pre>
            {r.response && (
              <>
                <h3>
                  Response: HTTP {r.response.status ?? '–'} in {r.response.latency_ms} ms
                </h3>
                <pre aria-label="Response body">{r.response.body ?? ''}</pre>
              </>
            )}
            <h3>What the model sees</h3>
            <pre aria-label="Model view">{r.model_view ?? '(nothing: no response yet)'}</pre>
          </div>
        )}
      </div>
    </section>
  )
}

function CallLog({ a }: { a: Action }) {
  const calls = useQuery({
    queryKey: ['action-calls', a.id],
    queryFn: () => call(api.GET('/actions/{id}/calls', { params: { path: { id: a.id }, query: { limit: 50 } } })),
  })
  return (
    <section className="card" aria-labelledby="calls-h">
      <div className="row">
        <h2 id="calls-h">Call log</h2>
        <Button small onClick={() => calls.refetch()}>
          Refresh
        </Button>
      </div>
      {calls.isPending ? (
        <Loading />
      ) : calls.isError ? (
        <ErrorBox error={calls.error} retry={() => calls.refetch()} />
      ) : calls.data.items.length === 0 ? (
        <p className="muted">No calls yet.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Calls of {a.name}</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  HTTP
                </th>
                <th scope="col" className="num">
                  ms
                </th>
                <th scope="col">Arguments</th>
              </tr>
            </thead>
            <tbody>
              {calls.data.items.map((c) => (
                <tr key={c.id}>
                  <td>
                    <When at={c.created_at} />
                  </td>
                  <td>
                    <Badge tone={CALL_TONE[c.status] ?? 'neutral'}>{c.status}</Badge>
                  </td>
                  <td className="num">{c.http_status ?? '–'}</td>
                  <td className="num">{c.latency_ms ?? '–'}</td>
                  <td>
                    <code>{JSON.stringify(c.arguments)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

/** The enable switch at the top of the page: on, the bot offers the action to the model; off, never. */
function EnableSwitch({ a }: { a: Action }) {
  const toggle = useEnabledToggle(a)
  return (
    <div className="stack">
      <Check
        label="Enabled: the bot may call this action"
        hint={toggle.checked ? 'On: the model is offered this action in chats.' : 'Off: the model is never offered it; tests still work.'}
        checked={toggle.checked}
        onChange={(v) => toggle.set(v)}
      />
      {toggle.error && <ErrorBox error={toggle.error} />}
    </div>
  )
}

export default function ActionDetail({ params }: { params: Record<string, string> }) {
  const id = params.id ?? ''
  const { may } = useRole()
  const manage = may('actions')
  const [, navigate] = useLocation()
  const qc = useQueryClient()
  const [sample, setSample] = useState<string | null>(null)
  const q = useQuery({ queryKey: ['action', id], queryFn: () => call(api.GET('/actions/{id}', { params: { path: { id } } })) })
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/actions/{id}', { params: { path: { id } } })),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['actions'] })
      navigate('/actions')
    },
  })
  if (q.isPending) return <Loading />
  if (q.isError) return <ErrorBox error={q.error} retry={() => q.refetch()} />
  const a = q.data
  return (
    <>
      <p>
        <Link href="/actions">← All actions</Link>
      </p>
      <PageHeader title={a.name}>
        <Badge tone={a.kind === 'write' ? 'warn' : 'neutral'}>{a.kind}</Badge>
        <Badge tone={a.enabled ? 'ok' : 'neutral'}>{a.enabled ? 'Enabled' : 'Disabled'}</Badge>
        {manage && (
          <Button variant="danger" small busy={remove.isPending} onClick={() => confirm(`Delete the action ${a.name}?`) && remove.mutate()}>
            Delete
          </Button>
        )}
      </PageHeader>
      {remove.isError && <ErrorBox error={remove.error} />}
      {manage && <EnableSwitch a={a} />}
      <CallLog a={a} />
      <TestConsole a={a} onAnswer={setSample} />
      <ActionForm key={`${a.id}-${a.created_at}-${JSON.stringify(a.secrets)}`} action={a} readOnly={!manage} sample={sample} />
    </>
  )
}
