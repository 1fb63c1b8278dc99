import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api/client'
import type { Ticket } from '../api/types'
import { Badge, Button, Empty, ErrorBox, Field, Loading, Pager, Select } from '../ui/kit'
import { needsWords, useNeedsPersonCount } from '../ui/inbox-alerts'
import { useTeamEvents } from './ticket-live'
import { TicketPanes } from './ticket-detail'
import { KeyHelp, useInboxKeys } from './ticket-keys'
import { QueueList, searchWords } from './ticket-queue'

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

/**
 * The agent inbox (#52) in three panes at 1280 px and wider: the queue on the left, the open ticket's conversation
 * in the middle and its customer and ticket details on the right; moving from ticket to ticket keeps the panes
 * (keyboard too: j/k, r, e). Narrower, the details go under the conversation; on a phone, the list, then the
 * ticket with a way back.
 */
export default function Tickets({ params }: { params: Record<string, string> }) {
  const selectedId = params.id ?? null
  // the default view holds every ticket that needs a person (#39): open, or in progress with nobody on it
  const [status, setStatus] = useState<StatusFilter>('needs')
  const [search, setSearch] = useState('')
  const [priority, setPriority] = useState<PriorityFilter>('all')
  const [assignee, setAssignee] = useState<AssigneeFilter>('all')
  const [owner, setOwner] = useState<OwnerFilter>('all')
  const [offset, setOffset] = useState(0)
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
  // the service's order: the default view is the queue (a visitor who asked for a person before automatic
  // hand-offs, then who waited longest); the Queue button's view keeps it
  const rows = filtered
  const keys = useInboxKeys(rows, selectedId)
  const count = (
    <p className="muted" role="status" aria-live="polite">
      {needs.data !== undefined ? (
        <>
          <Badge tone={needs.data.total > 0 ? 'warn' : 'ok'}>{needs.data.total}</Badge> {needsWords(needs.data)}
        </>
      ) : null}
    </p>
  )
  return (
    <div className={selectedId ? 'inbox inbox-open' : 'inbox'}>
      <section className="inbox-list" aria-labelledby="inbox-title">
        <div className="inbox-list-head">
          {selectedId ? <h2 id="inbox-title">Tickets</h2> : <h1 id="inbox-title">Tickets</h1>}
          {count}
        </div>
        <div className="row queue-tabs" role="group" aria-label="View">
          <Button small variant={owner === 'queue' ? 'secondary' : 'primary'} aria-pressed={owner !== 'queue'} onClick={() => setOwner('all')}>
            All tickets
          </Button>
          <Button
            small
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
        <div className="inbox-filters">
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
            <QueueList rows={rows} selectedId={selectedId} />
            <Pager label="Ticket pages" offset={offset} limit={LIMIT} total={list.data.total} onChange={setOffset} />
          </>
        )}
        <KeyHelp open={keys.help} onToggle={keys.setHelp} />
      </section>
      {selectedId ? (
        <TicketPanes
          id={selectedId}
          back={
            <p className="inbox-back">
              <Link href="/tickets">← Tickets</Link>
            </p>
          }
        />
      ) : (
        <section className="inbox-conversation inbox-none" aria-label="No ticket open">
          <Empty title="Open a ticket from the list">
            <p>Its conversation opens here, the customer and the ticket beside it. Press j or k to move through the list.</p>
          </Empty>
        </section>
      )}
    </div>
  )
}
