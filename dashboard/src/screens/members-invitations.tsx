import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useRef, useState } from 'react'
import { api, ApiError, call } from '../api/client'
import type { Invitation } from '../api/types'
import { ROLES, type Role } from '../roles'
import { useBots, useRole } from '../session'
import { Badge, Button, Check, ErrorBox, Field, fieldError, focusSoon, Loading, When } from '../ui/kit'
import type { Tone } from '../ui/ops'
import { AccessFields, botScopeText, RoleBadge, unscoped } from '../ui/team'
import { useToast } from '../ui/toast'

const STATUS_TONE: Record<Invitation['status'], Tone> = { pending: 'warn', accepted: 'ok', revoked: 'neutral', expired: 'neutral' }
const STATUS_WORDS: Record<Invitation['status'], string> = { pending: 'Pending', accepted: 'Accepted', revoked: 'Revoked', expired: 'Expired' }

/** A 409 on invite means the address already belongs to a workspace; say so next to the address. */
function emailError(err: unknown): string | undefined {
  if (err instanceof ApiError && err.status === 409) return err.message || 'This address already has a workspace.'
  return fieldError(err, 'email')
}

export function InviteForm() {
  const { role: myRole } = useRole()
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<Role>('agent')
  const [bots, setBots] = useState<string[] | null>(null)
  const [original, setOriginal] = useState(false)
  const emailInput = useRef<HTMLInputElement>(null)
  const qc = useQueryClient()
  const toast = useToast()
  const invite = useMutation({
    mutationFn: () =>
      call(
        api.POST('/tenants/me/invitations', {
          body: { email: email.trim(), role, ...(unscoped(role) ? {} : { bot_ids: bots }), ...(role === 'agent' ? { can_view_original: original } : {}) },
        }),
      ),
    onSuccess: async (inv) => {
      toast(`Invitation sent to ${inv.email}`)
      setEmail('')
      emailInput.current?.focus()
      await qc.invalidateQueries({ queryKey: ['invitations'] })
    },
    onError: () => emailInput.current?.focus(),
  })
  const eErr = emailError(invite.error)
  const bErr = fieldError(invite.error, 'bot_ids')
  const roles = myRole === 'owner' ? ROLES : ROLES.filter((r) => r !== 'owner')
  return (
    <section className="card" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite a member</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          invite.mutate()
        }}
        noValidate
      >
        <Field
          ref={emailInput}
          label="E-mail"
          type="email"
          autoComplete="off"
          required
          maxLength={320}
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={eErr}
          hint="We mail a link that is valid for 7 days. Only this address can accept it."
        />
        <AccessFields role={role} onRole={setRole} roles={roles} original={original} onOriginal={setOriginal} bots={bots} onBots={setBots} botError={bErr} />
        <ErrorBox error={invite.error && !eErr && !bErr ? invite.error : null} />
        <Button type="submit" variant="primary" busy={invite.isPending} disabled={!email.trim()}>
          Send invitation
        </Button>
      </form>
    </section>
  )
}

function InvitationActions({ inv }: { inv: Invitation }) {
  const qc = useQueryClient()
  const toast = useToast()
  const done = () => qc.invalidateQueries({ queryKey: ['invitations'] })
  const resend = useMutation({
    mutationFn: () => call(api.POST('/tenants/me/invitations/{id}/resend', { params: { path: { id: inv.id } } })),
    onSuccess: async () => {
      toast(`Invitation sent again to ${inv.email}`)
      await done()
    },
  })
  const revoke = useMutation({
    mutationFn: () => call(api.DELETE('/tenants/me/invitations/{id}', { params: { path: { id: inv.id } } })),
    onSuccess: async () => {
      toast(`Invitation to ${inv.email} revoked`)
      await done()
      focusSoon('invitations-heading')
    },
  })
  // The service renews only a pending invitation; an expired one is invited again.
  if (inv.status !== 'pending') return inv.status === 'expired' ? <span className="hint">Invite again</span> : null
  return (
    <div className="row">
      <Button small busy={resend.isPending} aria-label={`Resend the invitation to ${inv.email}`} onClick={() => resend.mutate()}>
        Resend
      </Button>
      <Button
        small
        variant="danger"
        busy={revoke.isPending}
        aria-label={`Revoke the invitation to ${inv.email}`}
        onClick={() => confirm(`Revoke the invitation to ${inv.email}? The link stops working.`) && revoke.mutate()}
      >
        Revoke
      </Button>
      <ErrorBox error={resend.error ?? revoke.error} />
    </div>
  )
}

/** Invitations, newest first: pending ones can be resent (a new link, 7 more days) or revoked. */
export function Invitations() {
  const q = useQuery({ queryKey: ['invitations'], queryFn: () => call(api.GET('/tenants/me/invitations')) })
  const bots = useBots()
  const [showAll, setShowAll] = useState(false)
  const items = q.data?.items ?? []
  const shown = showAll ? items : items.filter((i) => i.status === 'pending' || i.status === 'expired')
  return (
    <section aria-labelledby="invitations-heading">
      <h2 id="invitations-heading" tabIndex={-1}>
        Invitations
      </h2>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : (
        <>
          {shown.length === 0 ? (
            <p className="muted">{items.length === 0 ? 'No invitations yet.' : 'No pending invitations.'}</p>
          ) : (
            <div className="table-wrap">
              <table>
                <caption className="sr-only">Invitations</caption>
                <thead>
                  <tr>
                    <th scope="col">E-mail</th>
                    <th scope="col">Role</th>
                    <th scope="col">Bots</th>
                    <th scope="col">Status</th>
                    <th scope="col">Expires</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {shown.map((inv) => (
                    <tr key={inv.id}>
                      <td className="kc-url">{inv.email}</td>
                      <td>
                        <RoleBadge role={inv.role} />
                      </td>
                      <td>{botScopeText(inv.bot_ids, bots.data?.items)}</td>
                      <td>
                        <Badge tone={STATUS_TONE[inv.status]}>{STATUS_WORDS[inv.status]}</Badge>
                      </td>
                      <td>{inv.status === 'pending' || inv.status === 'expired' ? <When at={inv.expires_at} /> : <span className="muted">–</span>}</td>
                      <td>
                        <InvitationActions inv={inv} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {items.length > 0 && <Check label="Show accepted and revoked invitations too" checked={showAll} onChange={setShowAll} />}
        </>
      )}
    </section>
  )
}
