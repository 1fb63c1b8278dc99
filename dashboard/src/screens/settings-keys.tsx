import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import { api, call } from '../api/client'
import type { ApiKey, Res } from '../api/types'
import { Badge, Button, Check, Empty, ErrorBox, Loading, Select, When } from '../ui/kit'
import { SecretOnce, type Tone } from '../ui/ops'
import { useToast } from '../ui/toast'

/** The owner's settings: widget API keys and the identity signing secret (whose status admins see too). */

type Reason = 'scheduled' | 'leaked' | 'compromise' | 'other'
type Rotated = Res<'/tenants/me/api-keys/rotate', 'post'>
const REASONS = [
  ['scheduled', 'Scheduled rotation'],
  ['leaked', 'The key leaked'],
  ['compromise', 'Suspected compromise'],
  ['other', 'Other'],
] as const
const KEY_TONE: Record<ApiKey['status'], Tone> = { active: 'ok', revoking: 'warn', revoked: 'neutral' }
const KEY_WORDS: Record<ApiKey['status'], string> = { active: 'Active', revoking: 'Revoking (grace period)', revoked: 'Revoked' }

function hoursLeft(at: string | null): string {
  if (!at) return ''
  const ms = new Date(at).getTime() - Date.now()
  if (ms <= 0) return 'stops working any moment now'
  const h = Math.floor(ms / 3_600_000)
  const m = Math.round((ms % 3_600_000) / 60_000)
  return `${h > 0 ? `${h} h ` : ''}${m} min left`
}

function KeyRow({ k }: { k: ApiKey }) {
  const qc = useQueryClient()
  const toast = useToast()
  const revoke = useMutation({
    mutationFn: () => call(api.DELETE('/tenants/me/api-keys/{key_id}', { params: { path: { key_id: k.id } } })),
    onSuccess: async () => {
      toast(`Key ck_…${k.key_hint} revoked`)
      await qc.invalidateQueries({ queryKey: ['api-keys'] })
      void qc.invalidateQueries({ queryKey: ['tenant'] })
    },
  })
  return (
    <tr>
      <td>
        <code>ck_…{k.key_hint}</code>
      </td>
      <td>
        <Badge tone={KEY_TONE[k.status]}>{KEY_WORDS[k.status]}</Badge>
        {k.status === 'revoking' && k.expires_at && (
          <p className="hint grace">
            Still works until {new Date(k.expires_at).toLocaleString()} ({hoursLeft(k.expires_at)}).
          </p>
        )}
        {k.revoked_reason && <p className="hint">Reason: {REASONS.find(([v]) => v === k.revoked_reason)?.[1] ?? k.revoked_reason}</p>}
      </td>
      <td>
        <When at={k.created_at} />
      </td>
      <td>
        <When at={k.last_used_at} />
      </td>
      <td>{k.status === 'revoked' ? <When at={k.revoked_at} /> : k.expires_at ? <When at={k.expires_at} /> : <span className="muted">no expiry</span>}</td>
      <td>
        {k.status !== 'revoked' && (
          <Button
            small
            variant="danger"
            busy={revoke.isPending}
            aria-label={`Revoke key ending ${k.key_hint}`}
            onClick={() => confirm(`Revoke the key ending ${k.key_hint} now? Servers using it stop working at once.`) && revoke.mutate()}
          >
            Revoke
          </Button>
        )}
        <ErrorBox error={revoke.error} />
      </td>
    </tr>
  )
}

export function ApiKeys() {
  const [immediately, setImmediately] = useState(false)
  const [reason, setReason] = useState<Reason>('scheduled')
  const [fresh, setFresh] = useState<Rotated | null>(null)
  const qc = useQueryClient()
  const q = useQuery({ queryKey: ['api-keys'], queryFn: () => call(api.GET('/tenants/me/api-keys')) })
  const rotate = useMutation({
    mutationFn: () => call(api.POST('/tenants/me/api-keys/rotate', { body: { revoke_old_immediately: immediately, reason } })),
    onSuccess: async (r) => {
      setFresh(r)
      setImmediately(false)
      await qc.invalidateQueries({ queryKey: ['api-keys'] })
      void qc.invalidateQueries({ queryKey: ['tenant'] })
    },
  })
  return (
    <>
      {fresh && (
        <SecretOnce title="Your new API key." value={fresh.api_key} onDone={() => setFresh(null)}>
          <p>{fresh.message}</p>
        </SecretOnce>
      )}
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : q.data.items.length === 0 ? (
        <Empty title="No API keys" />
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Widget API keys</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires / revoked</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {q.data.items.map((k) => (
                <KeyRow key={k.id} k={k} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form
        className="rotate"
        onSubmit={(e) => {
          e.preventDefault()
          if (!immediately || confirm('Revoke the current key immediately? Servers still using it stop working at once.')) rotate.mutate()
        }}
      >
        <h3>Rotate the key</h3>
        <p className="hint">A new key is issued. The old one keeps working for 24 hours so you can switch your servers over, unless you revoke it now.</p>
        <Select label="Reason" value={reason} options={REASONS} onChange={setReason} />
        <Check label="Revoke the old key immediately (no grace period)" checked={immediately} onChange={setImmediately} />
        <ErrorBox error={rotate.error} />
        <Button type="submit" variant="primary" busy={rotate.isPending}>
          Rotate key
        </Button>
      </form>
    </>
  )
}

/** The secret's status is for owners and admins (is identity verification on?); creating and rotating it, the owner's. */
export function SigningSecret({ canChange, ownerOnly }: { canChange: boolean; ownerOnly?: ReactNode }) {
  const [fresh, setFresh] = useState<{ secret_key: string; message: string } | null>(null)
  const qc = useQueryClient()
  const q = useQuery({ queryKey: ['kyc'], queryFn: () => call(api.GET('/tenants/me/kyc/status')) })
  const make = useMutation({
    mutationFn: (rotate: boolean) => (rotate ? call(api.POST('/tenants/me/kyc/rotate')) : call(api.POST('/tenants/me/kyc/secret'))),
    onSuccess: async (r) => {
      setFresh(r)
      await qc.invalidateQueries({ queryKey: ['kyc'] })
    },
  })
  if (q.isPending) return <Loading />
  if (q.isError) return <ErrorBox error={q.error} retry={() => q.refetch()} />
  const s = q.data
  return (
    <>
      {fresh && (
        <SecretOnce title="Your signing secret." value={fresh.secret_key} onDone={() => setFresh(null)}>
          <p>{fresh.message}</p>
        </SecretOnce>
      )}
      <dl className="facts">
        <dt>Secret</dt>
        <dd>{s.has_secret ? <code>{s.masked_secret_hint ?? '••••'}</code> : <span className="muted">not created</span>}</dd>
        {s.previous_valid_until && (
          <>
            <dt>Previous secret</dt>
            <dd>valid until {new Date(s.previous_valid_until).toLocaleString()}</dd>
          </>
        )}
        <dt>Identified chats (7 days)</dt>
        <dd>
          {s.identified_sessions_7d} ({Math.round(s.identified_session_rate_7d * 100)} % of chats)
        </dd>
        <dt>Last identified chat</dt>
        <dd>
          <When at={s.last_identified_session} />
        </dd>
      </dl>
      {canChange ? (
        <>
          <ErrorBox error={make.error} />
          <div className="row">
            {s.has_secret ? (
              <Button
                busy={make.isPending}
                onClick={() => confirm('Rotate the signing secret? The current one keeps working for one hour.') && make.mutate(true)}
              >
                Rotate signing secret
              </Button>
            ) : (
              <Button variant="primary" busy={make.isPending} onClick={() => make.mutate(false)}>
                Create signing secret
              </Button>
            )}
          </div>
        </>
      ) : (
        ownerOnly
      )}
    </>
  )
}
