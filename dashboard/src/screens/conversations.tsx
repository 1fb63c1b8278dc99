import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api/client'
import { Badge, Empty, ErrorBox, Field, Loading, PageHeader, Pager, Select, When } from '../ui/kit'
import { conversationStatus } from '../status-words'
import { MakeTestFromSession } from './eval-from-session'

/** Where a conversation stands: waiting for a person, with one, or ended; nothing while the bot has it. */
function ConversationBadge({ owner, name }: { owner: string; name?: string | null }) {
  const s = conversationStatus(owner, name)
  return s ? (
    <>
      {' '}
      <Badge tone={s.tone}>{s.word}</Badge>
    </>
  ) : null
}

const LIMIT = 20

/** Where conversations came in: the widget, the API (POST /chat) or e-mail (#38). */
const CHANNEL_WORDS = { widget: 'Widget', api: 'API', email: 'E-mail' } as const
type Channel = keyof typeof CHANNEL_WORDS
const CHANNEL_OPTIONS: readonly (readonly ['' | Channel, string])[] = [
  ['', 'All channels'],
  ...Object.entries(CHANNEL_WORDS).map(([k, v]) => [k as Channel, v] as const),
]

export default function Conversations() {
  const [offset, setOffset] = useState(0)
  const [search, setSearch] = useState('')
  const [channel, setChannel] = useState<'' | Channel>('')
  const term = search.trim().slice(0, 200)
  const q = useQuery({
    queryKey: ['sessions', offset, term, channel],
    queryFn: () =>
      call(api.GET('/chat/sessions', { params: { query: { limit: LIMIT, offset, ...(term ? { q: term } : {}), ...(channel ? { channel } : {}) } } })),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  })
  return (
    <>
      <PageHeader title="Conversations">
        <Link className="btn" href="/conversations/bad-answers">
          Bad answers
        </Link>
      </PageHeader>
      <div className="filters search-box">
        <Field
          label="Search conversations"
          type="search"
          maxLength={200}
          value={search}
          placeholder="Words, a ticket number or a visitor's e-mail"
          hint="An e-mail address is found exactly."
          onChange={(e) => {
            setSearch(e.target.value)
            setOffset(0)
          }}
        />
        <Select
          label="Channel"
          value={channel}
          options={CHANNEL_OPTIONS}
          onChange={(v) => {
            setChannel(v)
            setOffset(0)
          }}
        />
      </div>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : q.data.sessions.length === 0 && offset === 0 && (term || channel) ? (
        <Empty title="No conversation matches">
          <p>{term ? "Try other words, a whole ticket number (ESC-0042) or the visitor's whole e-mail address." : 'Choose another channel to see the rest.'}</p>
        </Empty>
      ) : q.data.sessions.length === 0 && offset === 0 ? (
        <Empty title="No conversations yet">
          <p>When visitors ask your bot something, the conversations show up here.</p>
        </Empty>
      ) : (
        <>
          <p
            className="muted"
            role="status"
          >{`${q.data.total} conversation${q.data.total === 1 ? '' : 's'}${term || channel ? ' found' : ''}, newest first.`}</p>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Last question</th>
                  <th scope="col">Last answer</th>
                  <th scope="col" className="num">
                    Messages
                  </th>
                  <th scope="col">Channel</th>
                  <th scope="col">Ticket</th>
                  <th scope="col">Last activity</th>
                </tr>
              </thead>
              <tbody>
                {q.data.sessions.map((s) => (
                  <tr key={s.session_id}>
                    <td className="kc-cell-wrap">
                      <Link href={`/conversations/${s.session_id}`}>{s.last_question?.trim() || 'Conversation without a question'}</Link>
                      <ConversationBadge owner={s.owner} name={s.assignee_name} />
                      {s.visitor_gone && (
                        <>
                          {' '}
                          <Badge tone="neutral">Visitor left</Badge>
                        </>
                      )}
                    </td>
                    <td className="kc-cell-wrap muted">
                      {s.last_answer_preview ?? '–'}
                      {s.last_question && <MakeTestFromSession sessionId={s.session_id} about={s.last_question} />}
                    </td>
                    <td className="num">{s.message_count}</td>
                    <td>{CHANNEL_WORDS[s.channel]}</td>
                    <td>{s.ticket_number ? <Badge tone="warn">{s.ticket_number}</Badge> : <span className="muted">none</span>}</td>
                    <td>
                      <When at={s.last_activity} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager offset={offset} limit={LIMIT} total={q.data.total} onChange={setOffset} label="Conversation pages" />
        </>
      )}
    </>
  )
}
