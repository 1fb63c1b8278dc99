import { useQuery } from '@tanstack/react-query'
import { useId } from 'react'
import { api, call } from '../api/client'
import type { Bot } from '../api/types'
import { ROLE_HINTS, ROLE_WORDS, ROLES, type Role } from '../roles'
import { useBots } from '../session'
import { Badge, Check } from './kit'

/** Helpers of the members, ticket assignment and audit log screens. */

/** Owners and admins see every bot: no bot limit applies to them. */
export const unscoped = (role: Role) => role === 'owner' || role === 'admin'

export const roleOptions = (roles: readonly Role[] = ROLES) => roles.map((r) => [r, ROLE_WORDS[r]] as const)

export function RoleBadge({ role }: { role: Role }) {
  return <Badge tone={role === 'owner' ? 'info' : 'neutral'}>{ROLE_WORDS[role]}</Badge>
}

/** The workspace's members: every role may read the list (the inbox names assignees); only owners and admins change it. */
export function useMembers() {
  return useQuery({ queryKey: ['members'], queryFn: () => call(api.GET('/tenants/me/members')) })
}

/** Bot names for a member's scope: "All bots", or the names of the bots they are limited to. */
export function botScopeText(botIds: readonly string[] | null | undefined, bots: readonly Bot[] | undefined): string {
  if (!botIds) return 'All bots'
  if (botIds.length === 0) return 'No bots'
  const names = botIds.map((id) => bots?.find((b) => b.id === id)?.name ?? 'a deleted bot')
  return names.join(', ')
}

/**
 * A member's bot scope: every bot (null) or a chosen few. A checkbox per bot in a fieldset, so each has its
 * own label and the group its legend.
 */
export function BotScopePicker({ value, onChange, error }: { value: string[] | null; onChange: (v: string[] | null) => void; error?: string }) {
  const bots = useBots()
  const id = useId()
  const all = value === null
  return (
    <fieldset aria-describedby={error ? `${id}-err` : undefined}>
      <legend>Bots</legend>
      <div className="check">
        <input id={`${id}-all`} type="checkbox" checked={all} onChange={(e) => onChange(e.target.checked ? null : [])} />
        <label htmlFor={`${id}-all`}>All bots, also future ones</label>
      </div>
      {!all &&
        (bots.isPending ? (
          <p className="muted">Loading bots…</p>
        ) : bots.isError ? (
          <p className="field-error">The bots could not be loaded.</p>
        ) : (
          bots.data.items.map((b) => (
            <div className="check" key={b.id}>
              <input
                id={`${id}-${b.id}`}
                type="checkbox"
                checked={value.includes(b.id)}
                onChange={(e) => onChange(e.target.checked ? [...value, b.id] : value.filter((x) => x !== b.id))}
              />
              <label htmlFor={`${id}-${b.id}`}>{b.name}</label>
            </div>
          ))
        ))}
      {!all && value.length === 0 && <p className="hint">Choose at least one bot: a member limited to no bot sees nothing.</p>}
      {error && (
        <p id={`${id}-err`} className="field-error">
          {error}
        </p>
      )}
    </fieldset>
  )
}

/** A role select with what the chosen role may do below it. */
export function RoleField({
  value,
  onChange,
  roles = ROLES,
  label = 'Role',
}: {
  value: Role
  onChange: (r: Role) => void
  roles?: readonly Role[]
  label?: string
}) {
  const id = useId()
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} aria-describedby={`${id}-hint`} onChange={(e) => onChange(e.target.value as Role)}>
        {roleOptions(roles).map(([r, text]) => (
          <option key={r} value={r}>
            {text}
          </option>
        ))}
      </select>
      <p id={`${id}-hint`} className="hint">
        {ROLE_HINTS[value]}
      </p>
    </div>
  )
}

/**
 * What a member may reach, as an invitation and the member editor both ask it: the role, for an agent the grant
 * to show original text, and for a role that can be limited the bots it is limited to.
 */
export function AccessFields(p: {
  role: Role
  onRole: (r: Role) => void
  roles: readonly Role[]
  original: boolean
  onOriginal: (v: boolean) => void
  bots: string[] | null
  onBots: (ids: string[] | null) => void
  botError?: string
}) {
  return (
    <>
      <RoleField value={p.role} onChange={p.onRole} roles={p.roles} />
      {p.role === 'agent' && (
        <Check
          label="May show original text"
          hint="Agents see visitors' messages with personal data masked; this lets them show the original."
          checked={p.original}
          onChange={p.onOriginal}
        />
      )}
      {!unscoped(p.role) && <BotScopePicker value={p.bots} onChange={p.onBots} error={p.botError} />}
    </>
  )
}
