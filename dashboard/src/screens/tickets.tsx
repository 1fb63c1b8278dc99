import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api/client'
import type { Ticket } from '../api/types'
import { Badge, Button, Empty, ErrorBox, Field, Loading, PageHeader, Pager, Select, When } from '../ui/kit'
import { isReopened, PriorityBadge, StatusBadge, TRIGGER_WORDS, Visitor } from '../ui/ops'
import { AlertPrefsForm, needsWords, useNeedsPersonCount } from '../ui/inbox-alerts'
import { useMembers } from '../ui/team'
import { MyDisplayName } from './my-name'
import { AssigneeName, AssignmentMailPref } from './ticket-assignee'
import { LanguageBadge } from '../ui/language-badge'
import { OwnerBadge, useTeamEvents, withoutSubject } from './ticket-live'

type StatusFilter = 'needs' | 'open' | 'in_progress' | 'resolved' | 'all'
type PriorityFilter = 'all' | Ticket['priority']
type AssigneeFilter = 'all' | 'me' | 'unassigned'
type OwnerFilter = 'all' | Ticket['owner']

const STATUS_OPTIONS = [
  ['needs', 'Needs a person'],
  ['open', 'Open'],
  ['in_progress', 'In progress'],
  ['resolved', 'Resolved'],
  ['all', 'All'],
] as const
const PRIORITY_OPTIONS = [
  ['all', 'Any priority'],
  ['critical', 'Critical'],
  ['high', 'High'],
  ['medium', 'Medium'],
  ['low', 'Low'],
] as const

const ASSIGNEE_OPTIONS = [
  ['all', 'All'],
  ['me', 'Mine'],
  ['unassigned', 'Unassigned'],
] as const

/** Who has the conversation; filtered on the page shown, as the priority. */
const OWNER_OPTIONS = [
  ['all', 'Anyone'],
  ['queue', 'Waiting for a person'],
  ['human', 'With a person'],
  ['bot', 'Back with the bot'],
  ['closed', 'Closed'],
] as const

const LIMIT = 50
/** New tickets show up while the inbox is open, without a reload. */
const POLL_MS = 5000

export default function Tickets() {
  // the default view holds every ticket that needs a person (#39): open, or in progress with nobody on it
  const [status, setStatus] = useState<StatusFilter>('needs')
  const [search, setSearch] = useState('')
  const [priority, setPriority] = useState<PriorityFilter>('all')
  const [assignee, setAssignee] = useState<AssigneeFilter>('all')
  const [owner, setOwner] = useState<OwnerFilter>('all')
  const [offset, setOffset] = useState(0)
  const members = useMembers()
  // a search from the default view looks in every status (#52): a customer on the phone quotes a resolved ticket's number
  const q = search.trim().slice(0, 200)
  const everywhere = q !== '' && status === 'needs'
  const list = useQuery({
    queryKey: ['tickets', status, assignee, offset, q],
    queryFn: () =>
      call(
        api.GET('/escalations', {
          params: {
            query: {
              ...(status === 'all' || everywhere ? {} : status === 'needs' ? { needs_person: true } : { status }),
              ...(assignee === 'all' ? {} : { assignee }),
              ...(q ? { q } : {}),
              include_original: false,
              limit: LIMIT,
              offset,
            },
          },
        }),
      ),
    refetchInterval: POLL_MS,
  })
  // the badge counts the default view (Needs a person), the same count as the tab title's "(N) waiting"
  const needs = useNeedsPersonCount()
  // the team's stream: a visitor writing, a hand-off or a takeover shows at once (unread counts, owners)
  const qc = useQueryClient()
  useTeamEvents((e) => {
    // the list and the open count together, so they never disagree
    if (e.type === 'message' || e.type === 'owner') void qc.invalidateQueries({ queryKey: ['tickets'] })
  })
  // the Queue (#52) is the "Needs a person" view without the visitors who left: the count on its button is the
  // service's (needs a person, less those who left), the same as the tab title's "(N) waiting"
  const inQueue = (t: Ticket) => !t.visitor_gone && ((status === 'needs' && !everywhere) || t.owner === 'queue')
  const filtered =
    list.data?.tickets.filter(
      (t) => (priority === 'all' || t.priority === priority) && (owner === 'all' || (owner === 'queue' ? inQueue(t) : t.owner === owner)),
    ) ?? []
  // the queue: who has waited longest comes first
  const rows = owner === 'queue' ? [...filtered].sort((a, b) => a.created_at.localeCompare(b.created_at)) : filtered
  return (
    <>
      <PageHeader title="Tickets">
        <p className="muted" role="status" aria-live="polite">
          {needs.data !== undefined ? (
            <>
              <Badge tone={needs.data.total > 0 ? 'warn' : 'ok'}>{needs.data.total}</Badge> {needsWords(needs.data)}
            </>
          ) : null}
        </p>
      </PageHeader>
      <p className="hint">Visitors' hand-offs to a human. The list refreshes itself every few seconds.</p>
      <AssignmentMailPref />
      <MyDisplayName />
      <AlertPrefsForm />
      <div className="row queue-tabs" role="group" aria-label="View">
        <Button variant={owner === 'queue' ? 'secondary' : 'primary'} aria-pressed={owner !== 'queue'} onClick={() => setOwner('all')}>
          All tickets
        </Button>
        <Button
          variant={owner === 'queue' ? 'primary' : 'secondary'}
          aria-pressed={owner === 'queue'}
          onClick={() => {
            setOwner('queue')
            setStatus('needs')
            setOffset(0)
          }}
        >
          Queue ({needs.data?.waiting ?? 0} waiting)
        </Button>
      </div>
      <div className="filters">
        <Field
          label="Search tickets"
          type="search"
          maxLength={200}
          value={search}
          placeholder="Ticket number, e-mail or words"
          onChange={(e) => {
            setSearch(e.target.value)
            setOffset(0)
          }}
        />
        <Select
          label="Status"
          value={status}
          options={STATUS_OPTIONS}
          onChange={(v) => {
            setStatus(v)
            setOffset(0)
          }}
        />
        <Select
          label="Assignee"
          value={assignee}
          options={ASSIGNEE_OPTIONS}
          onChange={(v) => {
            setAssignee(v)
            setOffset(0)
          }}
        />
        <Select label="Priority" value={priority} options={PRIORITY_OPTIONS} onChange={setPriority} />
        <Select label="Conversation" value={owner} options={OWNER_OPTIONS} onChange={setOwner} />
      </div>
      {everywhere && list.data && (
        <p className="muted search-summary" role="status" aria-live="polite">
          {searchWords(list.data.total, list.data.tickets)}
        </p>
      )}
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorBox error={list.error} retry={() => list.refetch()} />
      ) : rows.length === 0 && q ? (
        <Empty title={`No ticket matches “${q}”`}>
          <p>
            {status === 'needs'
              ? 'Search looks in every status: ticket numbers, e-mail addresses and the words of the whole conversation.'
              : 'Only this status was searched; choose “Needs a person” or “All” to search every status.'}
          </p>
        </Empty>
      ) : rows.length === 0 ? (
        <Empty
          title={
            owner === 'queue'
              ? 'Nobody is waiting for a person'
              : list.data.tickets.length > 0
                ? 'No tickets with this priority or conversation state'
                : assignee === 'me'
                  ? 'No tickets assigned to you'
                  : assignee === 'unassigned'
                    ? 'No unassigned tickets'
                    : status === 'open'
                      ? 'No open tickets'
                      : status === 'needs'
                        ? 'No ticket needs a person'
                        : 'No tickets here'
          }
        >
          <p>When a visitor asks for a human or the bot cannot answer, a ticket appears here.</p>
        </Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Tickets</caption>
              <thead>
                <tr>
                  <th scope="col">Ticket</th>
                  <th scope="col">Priority</th>
                  <th scope="col">Status</th>
                  <th scope="col">Conversation</th>
                  <th scope="col">Trigger</th>
                  <th scope="col">Visitor's message</th>
                  <th scope="col">Visitor</th>
                  <th scope="col">Assignee</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((t) => (
                  <tr key={t.id}>
                    <td>
                      <Link href={`/tickets/${t.id}`}>{t.ticket_number}</Link> <LanguageBadge language={t.language} />
                      {t.channel === 'email' && <Badge tone="info">E-mail</Badge>}
                      {t.unread_count > 0 && (
                        <span className="unread">
                          <Badge tone="warn">
                            {t.unread_count} unread<span className="sr-only"> message{t.unread_count === 1 ? '' : 's'} from the visitor</span>
                          </Badge>
                        </span>
                      )}
                    </td>
                    <td>
                      <PriorityBadge priority={t.priority} />
                    </td>
                    <td>
                      <StatusBadge ticket={t} /> {isReopened(t) && <Badge tone="warn">Reopened</Badge>}
                    </td>
                    <td>
                      <OwnerBadge owner={t.owner} name={t.assignee_name} /> {t.visitor_gone && <Badge tone="neutral">Visitor left</Badge>}
                    </td>
                    <td>{TRIGGER_WORDS[t.trigger] ?? t.trigger}</td>
                    <td className="cell-clip" title={t.user_note ?? t.primary_question}>
                      {/* an e-mail's subject is its title; what the visitor left at the hand-off says more than the earlier question to the bot */}
                      {t.subject && <strong className="ticket-subject">{t.subject} </strong>}
                      {t.user_note ? (
                        <>
                          <span className="queue-note-label">Note: </span>
                          {t.user_note}
                        </>
                      ) : (
                        withoutSubject(t.primary_question, t.subject)
                      )}
                    </td>
                    <td>
                      <Visitor t={t} />
                    </td>
                    <td>
                      <AssigneeName id={t.assignee_user_id} members={members.data?.items} />
                    </td>
                    <td>
                      <When at={t.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label="Ticket pages" offset={offset} limit={LIMIT} total={list.data.total} onChange={setOffset} />
        </>
      )}
    </>
  )
}

const STATUS_WORDS: Record<Ticket['status'], string> = { open: 'Open', in_progress: 'In progress', resolved: 'Resolved' }

/** "1 match in Resolved", "3 matches: 2 in Open, 1 in Resolved" (the page's tickets; the total from the service). */
export function searchWords(total: number, tickets: Pick<Ticket, 'status'>[]): string {
  if (total === 0) return 'No matches in any status'
  const by = new Map<string, number>()
  for (const t of tickets) by.set(STATUS_WORDS[t.status], (by.get(STATUS_WORDS[t.status]) ?? 0) + 1)
  const parts = [...by].map(([s, n]) => `${n} in ${s}`)
  const head = `${total} ${total === 1 ? 'match' : 'matches'}`
  return parts.length === 1 && total === tickets.length ? `${head} in ${[...by.keys()][0]}` : `${head}: ${parts.join(', ')}`
}
