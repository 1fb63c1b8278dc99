import { useInfiniteQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import type { AuditEntry } from '../api/types'
import { Button, Empty, ErrorBox, Field, focusSoon, Loading, PageHeader, Select } from '../ui/kit'
import { useMembers } from '../ui/team'

/** The actions the service records, in words; an action not listed here is shown as the service names it. */
const ACTION_WORDS: Record<string, string> = {
  signed_in: 'Signed in',
  created: 'Created',
  updated: 'Updated',
  deleted: 'Deleted',
  exported: 'Exported',
  showed_original: 'Showed original text',
  rotated_key: 'Rotated a key',
  invited: 'Invited a member',
  invitation_resent: 'Resent an invitation',
  invitation_revoked: 'Revoked an invitation',
  joined: 'Joined the workspace',
  role_changed: 'Changed a role',
  removed: 'Removed a member',
  ownership_transferred: 'Transferred ownership',
  assigned: 'Assigned a ticket',
  unassigned: 'Unassigned a ticket',
  deleted_original: 'Deleted original text',
  replied: 'Replied to a ticket',
  resolved: 'Resolved a ticket',
  approved: 'Approved an FAQ',
  approved_all: 'Approved all FAQ candidates',
  rejected: 'Rejected an FAQ candidate',
  dismissed: 'Dismissed a gap',
  reactivated: 'Reactivated a gap',
}
const actionText = (a: string) => ACTION_WORDS[a] ?? a.replace(/[_.]/g, ' ')

const LIMIT = 50

/** A date field's day as the start of that day (from) or of the next day (to), in the browser's time zone. */
function dayBound(day: string, end: boolean): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined
  const d = new Date(`${day}T00:00:00`)
  if (end) d.setDate(d.getDate() + 1)
  return d.toISOString()
}

function Detail({ e }: { e: AuditEntry }) {
  const entries = Object.entries(e.detail ?? {}).slice(0, 6)
  if (entries.length === 0) return <span className="muted">–</span>
  return (
    <dl className="facts audit-detail">
      {entries.map(([k, v]) => (
        <div key={k} className="audit-pair">
          <dt>{k.replace(/_/g, ' ')}</dt>
          <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
        </div>
      ))}
    </dl>
  )
}

export default function AuditLog() {
  const members = useMembers()
  const [member, setMember] = useState('')
  const [action, setAction] = useState('')
  const [from, setFrom] = useState('')
  const [to, setTo] = useState('')
  const query = {
    ...(member ? { member } : {}),
    ...(action ? { action } : {}),
    ...(dayBound(from, false) ? { from: dayBound(from, false) } : {}),
    ...(dayBound(to, true) ? { to: dayBound(to, true) } : {}),
  }
  const log = useInfiniteQuery({
    queryKey: ['audit-log', query],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      call(api.GET('/tenants/me/audit-log', { params: { query: { ...query, limit: LIMIT, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  })
  const rows = log.data?.pages.flatMap((p) => p.items) ?? []
  const filtered = member || action || from || to
  const loadMore = async () => {
    const before = rows.length
    const r = await log.fetchNextPage()
    if ((r.data?.pages.flatMap((p) => p.items).length ?? 0) > before) focusSoon(`audit-row-${before}`)
  }
  return (
    <>
      <PageHeader title="Audit log" />
      <p className="hint">
        Who did what in this workspace, from which address. Entries cannot be changed or deleted; they are kept as long as the retention setting says.
      </p>
      <form className="filters" aria-label="Filter the audit log" onSubmit={(e) => e.preventDefault()}>
        <Select
          label="Member"
          value={member}
          options={[['', 'Anyone'] as const, ...(members.data?.items ?? []).map((m) => [m.user_id, m.email] as const)]}
          onChange={setMember}
        />
        <Select
          label="Action"
          value={action}
          options={[['', 'Any action'] as const, ...Object.entries(ACTION_WORDS).map(([k, v]) => [k, v] as const)]}
          onChange={setAction}
        />
        <Field label="From" type="date" value={from} max={to || undefined} onChange={(e) => setFrom(e.target.value)} />
        <Field label="To" type="date" value={to} min={from || undefined} onChange={(e) => setTo(e.target.value)} />
      </form>
      {log.isPending ? (
        <Loading />
      ) : log.isError && rows.length === 0 ? (
        <ErrorBox error={log.error} retry={() => log.refetch()} />
      ) : rows.length === 0 ? (
        <Empty title={filtered ? 'No entries match these filters' : 'Nothing recorded yet'}>
          <p>Sign-ins, changes, exports and views of original text appear here.</p>
        </Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Audit log entries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">Action</th>
                  <th scope="col">Item</th>
                  <th scope="col">IP</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((e, i) => (
                  <tr key={e.id} id={`audit-row-${i}`} tabIndex={-1}>
                    <td className="kc-nowrap">
                      <time dateTime={e.at}>{new Date(e.at).toLocaleString()}</time>
                    </td>
                    <td className="kc-url">{e.actor_email ?? <span className="muted">{e.actor_user_id ? 'A removed member' : 'System'}</span>}</td>
                    <td>{actionText(e.action)}</td>
                    <td className="kc-url">
                      {e.item_type.replace(/_/g, ' ')}
                      {e.item_id && (
                        <>
                          {' '}
                          <code title={e.item_id}>{e.item_id.length > 12 ? `${e.item_id.slice(0, 8)}…` : e.item_id}</code>
                        </>
                      )}
                    </td>
                    <td>{e.ip ? <code>{e.ip}</code> : <span className="muted">–</span>}</td>
                    <td>
                      <Detail e={e} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="pager">
            {log.hasNextPage ? (
              <Button busy={log.isFetchingNextPage} onClick={() => void loadMore()}>
                Load more
              </Button>
            ) : (
              <span className="muted">{rows.length === 1 ? 'One entry' : `All ${rows.length} entries`} shown.</span>
            )}
          </div>
          {log.isFetchNextPageError && <ErrorBox error={log.error} />}
        </>
      )}
    </>
  )
}
