import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import type { UrlSource } from '../api/types'
import { Badge, Button, ErrorBox, Field, fieldError, Select } from '../ui/kit'
import { useToast } from '../ui/toast'

type Kind = 'zendesk' | 'intercom' | 'freshdesk' | 'github'
type Schedule = 'hourly' | 'daily' | 'manual'

const KINDS = [
  ['zendesk', 'Zendesk Guide'],
  ['intercom', 'Intercom Articles'],
  ['freshdesk', 'Freshdesk Solutions'],
  ['github', 'GitHub docs folder'],
] as const
const CONNECTOR_SCHEDULES = [
  ['hourly', 'Every hour'],
  ['daily', 'Daily'],
  ['manual', 'Only when I refresh'],
] as const

/** Each kind's fields: [config key, label, placeholder, secret?]. */
const FIELDS: Record<Kind, readonly (readonly [string, string, string, boolean?])[]> = {
  zendesk: [
    ['base_url', 'Help centre address', 'https://acme.zendesk.com'],
    ['email', 'Agent e-mail', 'agent@acme.com'],
    ['api_token', 'API token', '', true],
    ['locales', 'Languages (optional, comma-separated)', 'en-us, de'],
  ],
  intercom: [
    ['access_token', 'Access token', '', true],
    ['base_url', 'API address (optional)', 'https://api.intercom.io'],
  ],
  freshdesk: [
    ['base_url', 'Helpdesk address', 'https://acme.freshdesk.com'],
    ['api_key', 'API key', '', true],
  ],
  github: [
    ['repo', 'Repository', 'owner/name'],
    ['path', 'Folder (optional)', 'docs'],
    ['ref', 'Branch or tag (optional)', 'main'],
    ['token', 'Token (optional for public repositories)', '', true],
  ],
}

function configOf(kind: Kind, values: Record<string, string>) {
  const out: Record<string, unknown> = {}
  for (const [key] of FIELDS[kind]) {
    const v = values[key]?.trim()
    if (!v) continue
    out[key] =
      key === 'locales'
        ? v
            .split(',')
            .map((l) => l.trim())
            .filter(Boolean)
        : v
  }
  return out
}

/** "Connect a help centre": the kind, its fields, a "Test connection" that lists the first articles it sees. */
export function ConnectHelpCentre() {
  const [kind, setKind] = useState<Kind>('zendesk')
  const [schedule, setSchedule] = useState<Schedule>('daily')
  const [name, setName] = useState('')
  const [values, setValues] = useState<Record<string, string>>({})
  const qc = useQueryClient()
  const toast = useToast()
  const body = () => ({ kind, name: name.trim() || null, schedule, config: configOf(kind, values) as never })
  const test = useMutation({ mutationFn: () => call(api.POST('/documents/sources/connector/test', { body: body() })) })
  const add = useMutation({
    mutationFn: () => call(api.POST('/documents/sources/connector', { body: body() })),
    onSuccess: async (s) => {
      await qc.invalidateQueries({ queryKey: ['sources'] })
      setValues({})
      setName('')
      test.reset()
      toast(`Syncing ${s.name}…`)
    },
  })
  const err = add.error ?? test.error
  const keys = FIELDS[kind].map(([k]) => `config.${k}`)
  return (
    <form
      className="card"
      aria-labelledby="connect-h"
      onSubmit={(e) => {
        e.preventDefault()
        add.mutate()
      }}
      noValidate
    >
      <h3 id="connect-h">Connect a help centre</h3>
      <p className="muted">
        Articles are read through the help centre's API and kept in sync: drafts and restricted articles are never used, deleted ones leave.
      </p>
      <div className="grid-2">
        <Select
          label="Help centre"
          value={kind}
          options={KINDS}
          onChange={(k) => {
            setKind(k)
            test.reset()
            add.reset()
          }}
        />
        <Select label="Sync" value={schedule} options={CONNECTOR_SCHEDULES} onChange={setSchedule} />
        <Field label="Display name (optional)" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
        {FIELDS[kind].map(([key, label, placeholder, secret]) => (
          <Field
            key={`${kind}-${key}`}
            label={label}
            type={secret ? 'password' : 'text'}
            autoComplete="off"
            placeholder={placeholder}
            value={values[key] ?? ''}
            onChange={(e) => setValues((v) => ({ ...v, [key]: e.target.value }))}
            error={fieldError(err, `config.${key}`)}
          />
        ))}
      </div>
      <ErrorBox error={err && !fieldError(err, ...keys) ? err : null} />
      {test.data && (
        <div className="kc-small" aria-live="polite">
          {test.data.error && <p className="upload-error">{`The connection failed: ${test.data.error}`}</p>}
          {test.data.ok && test.data.articles.length === 0 && <p>Connected, but no article was found.</p>}
          {test.data.articles.length > 0 && (
            <>
              <p>{`Connected. The first articles it sees:`}</p>
              <ul aria-label="Articles found">
                {test.data.articles.map((a, i) => (
                  <li key={`${a.url ?? a.title}-${i}`}>
                    {a.title} {a.status !== 'published' && <Badge tone="info">{a.status === 'draft' ? 'Draft: not used' : 'Restricted: not used'}</Badge>}
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
      <div className="row">
        <Button onClick={() => test.mutate()} busy={test.isPending}>
          Test connection
        </Button>
        <Button type="submit" variant="primary" busy={add.isPending}>
          Connect
        </Button>
      </div>
    </form>
  )
}

/** The last sync in words: its counts, and why it stopped when it did. */
export function LastSync({ s }: { s: UrlSource }) {
  const l = s.last_sync
  if (s.source_type === 'url') return null
  if (!l) return <div className="muted kc-small">First sync pending…</div>
  const counts = `${l.added} added, ${l.updated} updated, ${l.deleted} deleted, ${l.unchanged} unchanged, ${l.skipped} skipped`
  return (
    <div className="kc-small">
      {l.status === 'ok' && <span className="muted">{`Last sync: ${counts}.`}</span>}
      {l.status === 'partial' && <span className="warn-text">{`Last sync stopped part-way (${counts}): ${l.error ?? 'unknown reason'}.`}</span>}
      {l.status === 'failed' && <span className="upload-error">{`Last sync failed: ${l.error ?? 'unknown reason'}. Nothing was deleted.`}</span>}
    </div>
  )
}
