import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState } from 'react'
import { api, call } from '../api/client'
import type { Member } from '../api/types'
import { ROLES, type Role } from '../roles'
import { useBots, useRole } from '../session'
import { Button, Empty, ErrorBox, fieldError, focusSoon, Loading, PageHeader, Select, When } from '../ui/kit'
import { AccessFields, botScopeText, RoleBadge, unscoped, useMembers } from '../ui/team'
import { useToast } from '../ui/toast'
import { Invitations, InviteForm } from './members-invitations'

/** Role, bots and removal of one member, opened below the list. */
function MemberEditor({ m, onClose }: { m: Member; onClose: (focusId: string) => void }) {
  const { role: myRole, me } = useRole()
  const [role, setRole] = useState<Role>(m.role)
  const [bots, setBots] = useState<string[] | null>(m.bot_ids ?? null)
  const [original, setOriginal] = useState(m.can_view_original)
  const qc = useQueryClient()
  const toast = useToast()
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [])
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH('/tenants/me/members/{user_id}', {
          params: { path: { user_id: m.user_id } },
          body: { role, bot_ids: unscoped(role) ? null : bots, ...(role === 'agent' ? { can_view_original: original } : {}) },
        }),
      ),
    onSuccess: async (saved) => {
      toast(`${saved.email} saved`)
      await qc.invalidateQueries({ queryKey: ['members'] })
      onClose(`edit-${m.user_id}`)
    },
  })
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/tenants/me/members/{user_id}', { params: { path: { user_id: m.user_id } } })),
    onSuccess: async () => {
      toast(`${m.email} removed from the workspace`)
      await qc.invalidateQueries({ queryKey: ['members'] })
      onClose('members-heading')
    },
  })
  const self = m.user_id === me?.id
  // Admins manage everyone but owners; only an owner makes another owner.
  const roles = myRole === 'owner' ? ROLES : ROLES.filter((r) => r !== 'owner')
  const botErr = fieldError(save.error, 'bot_ids')
  return (
    <section className="card member-editor" aria-labelledby="member-editor-heading">
      <h2 id="member-editor-heading" ref={heading} tabIndex={-1}>
        Edit {m.email}
      </h2>
      {self && <p className="hint">This is you. A workspace keeps at least one owner, and another owner or admin removes you.</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault()
          save.mutate()
        }}
        noValidate
      >
        <AccessFields role={role} onRole={setRole} roles={roles} original={original} onOriginal={setOriginal} bots={bots} onBots={setBots} botError={botErr} />
        <ErrorBox error={save.error && !botErr ? save.error : null} />
        <div className="row">
          <Button type="submit" variant="primary" busy={save.isPending}>
            Save changes
          </Button>
          <Button onClick={() => onClose(`edit-${m.user_id}`)}>Cancel</Button>
        </div>
      </form>
      {!self && (
        <>
          <h3>Remove</h3>
          <p className="hint">A removed member is signed out at once. Their tickets stay, unassigned.</p>
          <ErrorBox error={remove.error} />
          <Button
            variant="danger"
            busy={remove.isPending}
            onClick={() => confirm(`Remove ${m.email} from the workspace? They lose access at once.`) && remove.mutate()}
          >
            Remove {m.email}
          </Button>
        </>
      )}
    </section>
  )
}

/** The owner hands the workspace to an admin and stays on as admin. */
function TransferOwnership({ members }: { members: Member[] }) {
  const admins = members.filter((m) => m.role === 'admin')
  const [to, setTo] = useState(admins[0]?.user_id ?? '')
  const qc = useQueryClient()
  const toast = useToast()
  const transfer = useMutation({
    mutationFn: () => call(api.POST('/tenants/me/transfer-ownership', { body: { user_id: to } })),
    onSuccess: async (r) => {
      toast(`${r.owner.email} is now the owner; you are an admin`)
      await Promise.all([qc.invalidateQueries({ queryKey: ['members'] }), qc.invalidateQueries({ queryKey: ['me'] })])
    },
  })
  const target = admins.find((a) => a.user_id === to)
  return (
    <section className="card" aria-labelledby="transfer-heading">
      <h2 id="transfer-heading">Transfer ownership</h2>
      {admins.length === 0 ? (
        <p className="muted">Make a member an admin first: ownership goes to an admin.</p>
      ) : (
        <>
          <p className="hint">The admin you choose becomes the owner, with the keys; you become an admin.</p>
          <Select label="New owner" value={to || admins[0]!.user_id} options={admins.map((a) => [a.user_id, a.email] as const)} onChange={setTo} />
          <ErrorBox error={transfer.error} />
          <Button
            variant="danger"
            busy={transfer.isPending}
            onClick={() => target && confirm(`Make ${target.email} the owner? You become an admin.`) && transfer.mutate()}
          >
            Transfer ownership
          </Button>
        </>
      )}
    </section>
  )
}

export default function Members() {
  const { may, me, role: myRole } = useRole()
  const list = useMembers()
  const bots = useBots()
  const [editing, setEditing] = useState<string | null>(null)
  const members = list.data?.items ?? []
  const current = members.find((m) => m.user_id === editing)
  return (
    <>
      <PageHeader title="Members" />
      <p className="hint">Who works in this workspace, with which role and on which bots.</p>
      <InviteForm />
      <Invitations />
      <h2 id="members-heading" tabIndex={-1}>
        Members
      </h2>
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorBox error={list.error} retry={() => list.refetch()} />
      ) : members.length === 0 ? (
        <Empty title="No members yet" />
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Members</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Bots</th>
                <th scope="col">Last active</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.map((m) => (
                <tr key={m.user_id}>
                  <td className="kc-url">
                    {m.email}
                    {m.user_id === me?.id && <span className="muted"> (you)</span>}
                  </td>
                  <td>
                    <RoleBadge role={m.role} />
                  </td>
                  <td>{botScopeText(m.bot_ids, bots.data?.items)}</td>
                  <td>
                    <When at={m.last_active_at} />
                  </td>
                  <td>
                    {(myRole === 'owner' || m.role !== 'owner') && (
                      <Button
                        small
                        id={`edit-${m.user_id}`}
                        aria-expanded={editing === m.user_id}
                        aria-label={`Edit ${m.email}`}
                        onClick={() => setEditing(editing === m.user_id ? null : m.user_id)}
                      >
                        Edit
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {current && (
        <MemberEditor
          key={current.user_id}
          m={current}
          onClose={(focusId) => {
            setEditing(null)
            focusSoon(focusId)
          }}
        />
      )}
      {may('workspace') && list.data && <TransferOwnership members={members} />}
    </>
  )
}
