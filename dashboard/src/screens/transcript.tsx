import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api/client'
import type { LogMessage } from '../api/types'
import { useMaySeeOriginal } from '../session'
import { Badge, Button, Empty, ErrorBox, Loading, PageHeader, When } from '../ui/kit'
import { IdealAnswerEditor } from '../ui/knowledge-parts'
import { useToast } from '../ui/toast'
import { TurnActionCalls } from './action-calls'
import { useDocumentTitles } from './document-titles'

function who(m: LogMessage): string {
  if (m.from_operator) return m.author_name ? `${m.author_name} (operator)` : 'Operator'
  return m.role === 'user' ? 'Visitor' : 'Assistant'
}

function Feedback({ value }: { value: LogMessage['feedback'] }) {
  if (value === 'up') return <Badge tone="ok">Visitor found it helpful</Badge>
  if (value === 'down') return <Badge tone="bad">Marked as a bad answer</Badge>
  return null
}

/** Why a turn handed off instead of answering, read from its debug record (what the pipeline decided and saw). */
function handOffReason(debug: LogMessage['debug']): { text: string; read: { id: string; title: string }[] } | null {
  const d = (debug ?? {}) as {
    decision?: { kind?: string; trigger?: string; by?: string }
    generation?: { verdict?: string }
    retrieval?: { hits?: { document_id?: string | null; title?: string }[] }
  }
  if (d.decision?.kind !== 'escalate') return null
  const read: { id: string; title: string }[] = []
  for (const h of d.retrieval?.hits ?? []) {
    if (h.document_id && !read.some((r) => r.id === h.document_id)) read.push({ id: h.document_id, title: (h.title ?? '').split(' — ')[0] || 'Untitled' })
  }
  switch (d.decision.trigger) {
    case 'user_request':
      return { text: 'The visitor asked for a person.', read: [] }
    case 'no_documents':
      return { text: 'The bot had no knowledge to answer from yet.', read: [] }
    case 'llm_unavailable':
      return { text: 'The language model could not be reached.', read: [] }
    case 'low_similarity':
      // turns logged before `by` was recorded: the marker at the start of the reply
      if (d.decision.by === 'answer_model' || d.generation?.verdict === 'not_covered')
        return { text: 'The bot read these pages and found no answer to the question in them:', read }
      return { text: 'No page of the knowledge speaks of what the question asks.', read: [] }
    default:
      return null
  }
}

function HandOffWhy({ m, titles }: { m: LogMessage; titles: Map<string, string> | null }) {
  const found = handOffReason(m.debug)
  if (!found) return null
  // the pages read come from the knowledge, which only roles that edit it may list (as the sources above)
  const why = titles ? found : { ...found, read: [], text: found.read.length ? 'The bot read the closest pages and found no answer in them.' : found.text }
  return (
    <div className="sources handoff-why">
      <span className="ideal-label">Why the bot handed off:</span> {why.text}
      {why.read.length > 0 && (
        <ul>
          {why.read.map((r) => (
            <li key={r.id}>{titles?.has(r.id) ? <Link href={`/knowledge/documents/${r.id}`}>{titles.get(r.id)}</Link> : r.title}</li>
          ))}
        </ul>
      )}
      {why.read.length > 0 && <p className="hint">Add the answer to one of these pages, or write the ideal answer below.</p>}
    </div>
  )
}

function Message({ m, showOriginal, titles }: { m: LogMessage; showOriginal: boolean; titles: Map<string, string> | null }) {
  const kind = m.from_operator ? 'operator' : m.role
  const isAnswer = m.role === 'assistant' && !m.from_operator
  return (
    <li className={`msg msg-${kind}`}>
      <div className="msg-meta">
        <strong>{who(m)}</strong> · <When at={m.created_at} />
      </div>
      {/* Visitor and model text is shown as plain text only, never as HTML. */}
      <div className="msg-text">{m.content}</div>
      {showOriginal && m.content_original !== null && m.content_original !== m.content && (
        <div className="msg-original">
          <span className="ideal-label">Original (before redaction):</span> <span className="msg-text">{m.content_original}</span>
        </div>
      )}
      {(m.sources.length > 0 || m.source_documents.length > 0) && (
        <div className="sources">
          <span className="ideal-label">Sources:</span>
          <ul>
            {m.sources.map((s) => (
              <li key={`u-${s.url}`}>
                <a href={s.url} target="_blank" rel="noopener noreferrer">
                  {s.title || s.url}
                </a>
              </li>
            ))}
            {m.source_documents.map((id) => (
              <li key={`d-${id}`}>
                {!titles ? (
                  <span className="muted">a document of the knowledge</span>
                ) : titles.has(id) ? (
                  <Link href={`/knowledge/documents/${id}`}>{titles.get(id)}</Link>
                ) : (
                  <span className="muted">a deleted document</span>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
      <TurnActionCalls calls={m.action_calls} />
      {isAnswer && <HandOffWhy m={m} titles={titles} />}
      {isAnswer && (
        <div className="msg-foot">
          <Feedback value={m.feedback} />
          <IdealAnswerEditor messageId={m.id} initial={m.ideal_answer} />
        </div>
      )}
    </li>
  )
}

export default function Transcript({ params }: { params: Record<string, string> }) {
  const id = params.id!
  const [showOriginal, setShowOriginal] = useState(false)
  const maySeeOriginal = useMaySeeOriginal()
  const qc = useQueryClient()
  const toast = useToast()
  const log = useQuery({
    queryKey: ['transcript', id, showOriginal],
    queryFn: () => call(api.GET('/chat/logs/session/{session_id}', { params: { path: { session_id: id }, query: { include_original: showOriginal } } })),
    placeholderData: keepPreviousData,
  })
  // Titles of the documents answers were drawn from; roles that may not list the knowledge (agents) see none.
  const titles = useDocumentTitles()
  const delOriginal = useMutation({
    mutationFn: () => call(api.POST('/chat/logs/session/{session_id}/delete-original', { params: { path: { session_id: id } } })),
    onSuccess: async (r) => {
      setShowOriginal(false)
      await qc.invalidateQueries({ queryKey: ['transcript', id] })
      toast(
        r.deleted_count === 0
          ? 'There was no original text to delete'
          : `Original text deleted from ${r.deleted_count} message${r.deleted_count === 1 ? '' : 's'}`,
      )
    },
  })
  const hasOriginal = (maySeeOriginal && log.data?.messages.some((m) => m.content_original_available)) ?? false
  return (
    <>
      <p>
        <Link href="/conversations">← Conversations</Link>
      </p>
      <PageHeader title="Conversation">
        {hasOriginal && (
          <>
            <Button aria-pressed={showOriginal} onClick={() => setShowOriginal((v) => !v)}>
              {showOriginal ? 'Hide original' : 'Show original'}
            </Button>
            <Button
              variant="danger"
              busy={delOriginal.isPending}
              onClick={() => confirm('Delete the original (unredacted) text of this conversation for good? The redacted text stays.') && delOriginal.mutate()}
            >
              Delete original text
            </Button>
          </>
        )}
      </PageHeader>
      {hasOriginal && !showOriginal && (
        <p className="hint">Personal data was redacted in this conversation. The original text is kept for a limited time; viewing it is logged.</p>
      )}
      <ErrorBox error={delOriginal.error} />
      {log.isPending ? (
        <Loading />
      ) : log.isError ? (
        <ErrorBox error={log.error} retry={() => log.refetch()} />
      ) : log.data.messages.length === 0 ? (
        <Empty title="No messages in this conversation" />
      ) : (
        <ol className="transcript" aria-label="Messages">
          {log.data.messages.map((m) => (
            <Message key={m.id} m={m} showOriginal={showOriginal} titles={titles} />
          ))}
        </ol>
      )}
    </>
  )
}
