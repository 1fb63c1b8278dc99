import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api/client'
import { Empty, ErrorBox, Loading, PageHeader, Pager, When } from '../ui/kit'
import { IdealAnswerEditor } from '../ui/knowledge-parts'
import { MakeTestFromSession } from './eval-from-session'

const LIMIT = 20

export default function BadAnswers() {
  const [offset, setOffset] = useState(0)
  const q = useQuery({
    queryKey: ['bad-answers', offset],
    queryFn: () => call(api.GET('/chat/bad-answers', { params: { query: { limit: LIMIT, offset } } })),
    placeholderData: keepPreviousData,
  })
  return (
    <>
      <p>
        <Link href="/conversations">← Conversations</Link>
      </p>
      <PageHeader title="Bad answers" />
      <p className="muted">Answers a visitor or you marked as bad. Write what the bot should have said; it helps the FAQ and your docs.</p>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : q.data.items.length === 0 && offset === 0 ? (
        <Empty title="No bad answers">
          <p>Answers marked with a thumbs down, by visitors or by you in a conversation, show up here.</p>
        </Empty>
      ) : (
        <>
          <ul className="bad-list">
            {q.data.items.map((b) => (
              <li key={b.message_id} className="card">
                <div className="msg-meta">
                  <When at={b.created_at} /> · <Link href={`/conversations/${b.session_id}`}>Open conversation</Link>
                </div>
                <h2 className="bad-q msg-text">{b.question?.trim() || 'Question not kept'}</h2>
                <div className="bad-answer">
                  <span className="ideal-label">Bot answered:</span> <span className="msg-text">{b.answer}</span>
                </div>
                <IdealAnswerEditor messageId={b.message_id} initial={b.ideal_answer} />
                <MakeTestFromSession sessionId={b.session_id} about={b.question ?? undefined} />
              </li>
            ))}
          </ul>
          <Pager offset={offset} limit={LIMIT} total={q.data.total} onChange={setOffset} label="Bad answer pages" />
        </>
      )}
    </>
  )
}
