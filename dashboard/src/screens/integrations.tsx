import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api, call } from '../api/client'
import { useBots } from '../session'
import { Badge, Button, Check, Empty, ErrorBox, Field, fieldError, Loading, PageHeader, Select, When } from '../ui/kit'
import { SecretOnce } from '../ui/ops'
import { useToast } from '../ui/toast'

type Endpoint = Awaited<ReturnType<typeof listEndpoints>>['items'][number]
type EventName = Endpoint['events'][number]

const listEndpoints = () => call(api.GET('/webhooks/endpoints'))

/** Every event an endpoint can take, in the words the screen shows (webhook.test is the test button's). */
const EVENTS: [EventName, string][] = [
  ['ticket.created', 'A ticket is created'],
  ['ticket.assigned', 'A ticket is assigned'],
  ['ticket.replied', 'A reply is sent on a ticket'],
  ['ticket.resolved', 'A ticket is resolved'],
  ['ticket.reopened', 'A ticket is reopened'],
  ['conversation.ended', 'A conversation ends'],
  ['feedback.received', 'An answer gets feedback'],
  ['document.ready', 'A document is ready'],
  ['document.failed', 'A document fails'],
  ['source.crawl_failed', 'A website crawl fails'],
]

function EventBoxes({ value, onChange, error }: { value: EventName[]; onChange: (v: EventName[]) => void; error?: string }) {
  const errorId = useId()
  return (
    <fieldset aria-describedby={error ? errorId : undefined}>
      <legend>Events</legend>
      <div className="check-grid">
        {EVENTS.map(([name, label]) => (
          <Check
            key={name}
            label={`${label} (${name})`}
            checked={value.includes(name)}
            onChange={(on) => onChange(on ? [...value, name] : value.filter((x) => x !== name))}
          />
        ))}
      </div>
      {error && (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
    </fieldset>
  )
}

function CreateEndpoint({ onCreated, onCancel }: { onCreated: (secret: string) => void; onCancel: () => void }) {
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [kind, setKind] = useState<'standard' | 'slack'>('standard')
  const [events, setEvents] = useState<EventName[]>(['ticket.created'])
  const [botIds, setBotIds] = useState<string[]>([])
  const bots = useBots()
  const qc = useQueryClient()
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/webhooks/endpoints', { body: { url: url.trim(), events, description: description.trim(), kind, bot_ids: botIds.length ? botIds : null } }),
      ),
    onSuccess: async (e) => {
      await qc.invalidateQueries({ queryKey: ['webhooks'] })
      onCreated(e.secret)
    },
  })
  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault()
        create.mutate()
      }}
      noValidate
    >
      <h2>New endpoint</h2>
      <Select
        label="Kind"
        value={kind}
        options={[
          ['standard', 'Webhook (signed JSON)'],
          ['slack', 'Slack incoming webhook'],
        ]}
        onChange={setKind}
      />
      <Field
        label="URL"
        type="url"
        required
        maxLength={2048}
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        error={fieldError(create.error, 'url')}
        hint={kind === 'slack' ? 'The incoming-webhook URL Slack gave you (https://hooks.slack.com/services/...)' : 'Where the events are POSTed'}
      />
      <Field
        label="Description"
        maxLength={500}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
        error={fieldError(create.error, 'description')}
      />
      <EventBoxes value={events} onChange={setEvents} error={fieldError(create.error, 'events')} />
      {bots.data && bots.data.items.length > 1 && (
        <fieldset>
          <legend>Only these bots (none checked: every bot)</legend>
          {bots.data.items.map((b) => (
            <Check
              key={b.id}
              label={b.name}
              checked={botIds.includes(b.id)}
              onChange={(on) => setBotIds(on ? [...botIds, b.id] : botIds.filter((x) => x !== b.id))}
            />
          ))}
        </fieldset>
      )}
      <ErrorBox error={create.error && !fieldError(create.error, 'url', 'events', 'description') ? create.error : null} />
      <div className="row">
        <Button type="submit" variant="primary" busy={create.isPending}>
          Create endpoint
        </Button>
        <Button onClick={onCancel}>Cancel</Button>
      </div>
    </form>
  )
}

const STATUS_TONE = { delivered: 'ok', pending: 'info', failed: 'bad' } as const

function Deliveries({ endpoint }: { endpoint: Endpoint }) {
  const qc = useQueryClient()
  const toast = useToast()
  const [open, setOpen] = useState<string | null>(null)
  const list = useQuery({
    queryKey: ['webhooks', endpoint.id, 'deliveries'],
    queryFn: () => call(api.GET('/webhooks/endpoints/{id}/deliveries', { params: { path: { id: endpoint.id }, query: { limit: 25 } } })),
    refetchInterval: 5000,
  })
  const attempts = useQuery({
    queryKey: ['webhooks', 'attempts', open],
    queryFn: () => call(api.GET('/webhooks/deliveries/{id}/attempts', { params: { path: { id: open! } } })),
    enabled: !!open,
  })
  const resend = useMutation({
    mutationFn: (id: string) => call(api.POST('/webhooks/deliveries/{id}/resend', { params: { path: { id } } })),
    onSuccess: async () => {
      toast('Delivery queued again')
      await qc.invalidateQueries({ queryKey: ['webhooks', endpoint.id] })
    },
    onError: (e) => toast(e.message, 'error'),
  })
  const resendFailed = useMutation({
    mutationFn: () =>
      call(
        api.POST('/webhooks/endpoints/{id}/resend-failed', {
          params: { path: { id: endpoint.id } },
          body: { since: new Date(Date.now() - 30 * 86400_000).toISOString() },
        }),
      ),
    onSuccess: async (r) => {
      toast(`${r.resent} failed deliveries queued again`)
      await qc.invalidateQueries({ queryKey: ['webhooks', endpoint.id] })
    },
    onError: (e) => toast(e.message, 'error'),
  })
  if (list.isPending) return <Loading label="Loading deliveries…" />
  if (list.isError) return <ErrorBox error={list.error} retry={() => list.refetch()} />
  return (
    <section aria-label={`Deliveries to ${endpoint.url}`}>
      <div className="row">
        <h3>Delivery log</h3>
        <Button small onClick={() => resendFailed.mutate()} busy={resendFailed.isPending} disabled={!endpoint.enabled}>
          Resend failed (30 days)
        </Button>
      </div>
      {list.data.items.length === 0 ? (
        <p className="muted">No deliveries yet. Send a test event to see one here.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((d) => (
                <tr key={d.id}>
                  <td>
                    <code>{d.type}</code>
                  </td>
                  <td>
                    <Badge tone={STATUS_TONE[d.status]}>{d.status}</Badge>
                    {d.next_attempt_at && (
                      <span className="muted">
                        {' '}
                        next <When at={d.next_attempt_at} />
                      </span>
                    )}
                  </td>
                  <td>{d.attempts}</td>
                  <td>{d.last_status_code ? `HTTP ${d.last_status_code}, ${d.last_latency_ms} ms` : d.attempts ? 'no answer' : '—'}</td>
                  <td>
                    <When at={d.created_at} />
                  </td>
                  <td className="row">
                    <Button small onClick={() => setOpen(open === d.id ? null : d.id)} aria-expanded={open === d.id}>
                      Attempts
                    </Button>
                    {d.status !== 'pending' && (
                      <Button small onClick={() => resend.mutate(d.id)} disabled={!endpoint.enabled} aria-label={`Resend ${d.type} delivery`}>
                        Resend
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && (
        <div className="card" role="region" aria-label="Attempts of the delivery">
          {attempts.isPending ? (
            <Loading />
          ) : attempts.isError ? (
            <ErrorBox error={attempts.error} />
          ) : (
            <ol className="attempts">
              {attempts.data.items.map((a) => (
                <li key={a.attempted_at}>
                  <When at={a.attempted_at} />: {a.status_code ? `HTTP ${a.status_code}` : (a.error ?? 'no answer')} in {a.latency_ms} ms
                  {a.next_attempt_at && (
                    <>
                      {', next try '}
                      <When at={a.next_attempt_at} />
                    </>
                  )}
                  {a.response_excerpt && <pre className="excerpt">{a.response_excerpt}</pre>}
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  )
}

function EndpointCard({ endpoint }: { endpoint: Endpoint }) {
  const qc = useQueryClient()
  const toast = useToast()
  const [secret, setSecret] = useState<string | null>(null)
  const [showLog, setShowLog] = useState(false)
  const refresh = () => qc.invalidateQueries({ queryKey: ['webhooks'] })
  const toggle = useMutation({
    mutationFn: () => call(api.PATCH('/webhooks/endpoints/{id}', { params: { path: { id: endpoint.id } }, body: { enabled: !endpoint.enabled } })),
    onSuccess: refresh,
    onError: (e) => toast(e.message, 'error'),
  })
  const rotate = useMutation({
    mutationFn: () => call(api.POST('/webhooks/endpoints/{id}/rotate-secret', { params: { path: { id: endpoint.id } } })),
    onSuccess: (r) => setSecret(r.secret),
    onError: (e) => toast(e.message, 'error'),
  })
  const test = useMutation({
    mutationFn: () => call(api.POST('/webhooks/endpoints/{id}/test', { params: { path: { id: endpoint.id } } })),
    onSuccess: async () => {
      toast('Test event queued')
      setShowLog(true)
      await qc.invalidateQueries({ queryKey: ['webhooks', endpoint.id] })
    },
    onError: (e) => toast(e.message, 'error'),
  })
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/webhooks/endpoints/{id}', { params: { path: { id: endpoint.id } } })),
    onSuccess: refresh,
    onError: (e) => toast(e.message, 'error'),
  })
  return (
    <li className="card endpoint">
      <div className="row endpoint-head">
        <h2 className="endpoint-url">{endpoint.url}</h2>
        {endpoint.enabled ? <Badge tone="ok">Enabled</Badge> : <Badge tone="bad">Disabled</Badge>}
        {endpoint.kind === 'slack' && <Badge tone="info">Slack</Badge>}
      </div>
      {endpoint.description && <p>{endpoint.description}</p>}
      {endpoint.disabled_reason && <p className="muted">{endpoint.disabled_reason}</p>}
      <p className="muted">
        Events: {endpoint.events.join(', ')}
        {endpoint.bot_ids ? ` · limited to ${endpoint.bot_ids.length} bot(s)` : ''}
      </p>
      {secret && (
        <SecretOnce title="New signing secret." value={secret} onDone={() => setSecret(null)}>
          <p>The previous secret keeps signing beside it for 24 hours, so your receiver can switch without losing events.</p>
        </SecretOnce>
      )}
      <div className="row">
        <Button small onClick={() => test.mutate()} busy={test.isPending} disabled={!endpoint.enabled}>
          Send test event
        </Button>
        <Button small onClick={() => toggle.mutate()} busy={toggle.isPending}>
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </Button>
        <Button small onClick={() => rotate.mutate()} busy={rotate.isPending}>
          Rotate secret
        </Button>
        <Button small onClick={() => setShowLog((s) => !s)} aria-expanded={showLog}>
          Delivery log
        </Button>
        <Button
          small
          variant="danger"
          busy={remove.isPending}
          onClick={() => {
            if (window.confirm(`Delete the endpoint ${endpoint.url}? Its delivery log goes with it.`)) remove.mutate()
          }}
        >
          Delete
        </Button>
      </div>
      {showLog && <Deliveries endpoint={endpoint} />}
    </li>
  )
}

export default function Integrations() {
  // a delivery can disable an endpoint (410, five days of failures): the list follows
  const endpoints = useQuery({ queryKey: ['webhooks'], queryFn: listEndpoints, refetchInterval: 5000 })
  const [creating, setCreating] = useState(false)
  const [secret, setSecret] = useState<string | null>(null)
  return (
    <>
      <PageHeader title="Integrations">
        {!creating && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New endpoint
          </Button>
        )}
      </PageHeader>
      <p className="muted">
        Webhooks tell your own systems or a Slack channel what happens here: signed (Standard Webhooks), retried for a day and a half, kept in a delivery log
        for 30 days.
      </p>
      {secret && (
        <SecretOnce title="Signing secret." value={secret} onDone={() => setSecret(null)}>
          <p>Your receiver verifies every request with it (see the README: webhook-id, webhook-timestamp, webhook-signature).</p>
        </SecretOnce>
      )}
      {creating && (
        <CreateEndpoint
          onCreated={(s) => {
            setCreating(false)
            setSecret(s)
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      {endpoints.isPending ? (
        <Loading />
      ) : endpoints.isError ? (
        <ErrorBox error={endpoints.error} retry={() => endpoints.refetch()} />
      ) : endpoints.data.items.length === 0 ? (
        <Empty title="No endpoints yet">
          <p>Add a URL of your backend, your CRM or a Slack incoming webhook to be told of new tickets and more.</p>
        </Empty>
      ) : (
        <ul className="endpoints">
          {endpoints.data.items.map((e) => (
            <EndpointCard key={e.id} endpoint={e} />
          ))}
        </ul>
      )}
    </>
  )
}
