import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import { useRole } from '../session'
import type { Member, Ticket } from '../api/types'
import { roleMay } from '../roles'
import { Button, Check, ErrorBox, focusSoon, Select } from '../ui/kit'
import { useMembers } from '../ui/team'
import { useToast } from '../ui/toast'

/** Who a ticket is assigned to, in words: you, a member's address, or "a former member" once they left the workspace. */
export function AssigneeName({ id, members }: { id: string | null | undefined; members?: readonly Member[] }) {
  const { me } = useRole()
  if (!id) return <span className="muted">Unassigned</span>
  if (id === me?.id) return <strong>You</strong>
  const m = members?.find((x) => x.user_id === id)
  return <span className="kc-url">{m ? m.email : members ? 'A former member' : 'Another member'}</span>
}

const UNASSIGNED = 'none'

/**
 * The ticket's assignee: anyone who works on tickets takes it; owners and admins also hand it to a member
 * who may work on tickets, or take it back to nobody.
 */
export function Assignment({ t }: { t: Ticket }) {
  const { me, may } = useRole()
  const members = useMembers()
  const qc = useQueryClient()
  const toast = useToast()
  const current = t.assignee_user_id ?? null
  const [pick, setPick] = useState<string>(current ?? UNASSIGNED)
  const assign = useMutation({
    mutationFn: (userId: string | null) =>
      call(api.PATCH('/escalations/{ticket_id}', { params: { path: { ticket_id: t.id } }, body: { assignee_user_id: userId } })),
    onSuccess: async (saved) => {
      const to = saved.assignee_user_id
      toast(!to ? `${t.ticket_number} is unassigned` : to === me?.id ? `You took ${t.ticket_number}` : `${t.ticket_number} assigned`)
      setPick(to ?? UNASSIGNED)
      await qc.invalidateQueries({ queryKey: ['ticket', t.id] })
      void qc.invalidateQueries({ queryKey: ['tickets'] })
      focusSoon('assignee-heading')
    },
  })
  const workers = (members.data?.items ?? []).filter((m) => roleMay(m.role, 'tickets'))
  return (
    <div className="card">
      <h2 id="assignee-heading" tabIndex={-1}>
        Assignee
      </h2>
      <p>
        <AssigneeName id={current} members={members.data?.items} />
      </p>
      <ErrorBox error={assign.error} />
      {current !== me?.id && (may('members') || !current) && (
        <Button variant={current ? 'secondary' : 'primary'} busy={assign.isPending && assign.variables === me?.id} onClick={() => me && assign.mutate(me.id)}>
          Take
        </Button>
      )}
      {current === me?.id && !may('members') && (
        <Button busy={assign.isPending && assign.variables === null} onClick={() => assign.mutate(null)}>
          Give back
        </Button>
      )}
      {current && current !== me?.id && !may('members') && <p className="hint">An owner or admin can reassign it.</p>}
      {may('members') && members.data && (
        <form
          className="row assign-form"
          onSubmit={(e) => {
            e.preventDefault()
            assign.mutate(pick === UNASSIGNED ? null : pick)
          }}
        >
          <Select
            label="Assign to"
            value={pick}
            options={[[UNASSIGNED, 'Nobody'] as const, ...workers.map((m) => [m.user_id, m.user_id === me?.id ? `${m.email} (you)` : m.email] as const)]}
            onChange={setPick}
          />
          <Button type="submit" busy={assign.isPending && assign.variables !== me?.id} disabled={pick === (current ?? UNASSIGNED)}>
            Assign
          </Button>
        </form>
      )}
      {t.first_response_at && <p className="hint">First reply {new Date(t.first_response_at).toLocaleString()}</p>}
    </div>
  )
}

/** The member's own choice: a mail when someone else assigns them a ticket. */
export function AssignmentMailPref() {
  const { me } = useRole()
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: (on: boolean) => call(api.PATCH('/auth/me', { body: { notify_on_assignment: on } })),
    onSuccess: (u) => {
      qc.setQueryData(['me'], u)
      toast(u.notify_on_assignment ? 'You get a mail when a ticket is assigned to you' : 'No more mails for assigned tickets')
    },
  })
  if (!me) return null
  return (
    <>
      <Check
        label="Mail me when someone assigns a ticket to me"
        checked={save.isPending ? !!save.variables : me.notify_on_assignment}
        onChange={(v) => save.mutate(v)}
      />
      <ErrorBox error={save.error} />
    </>
  )
}
