import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { api, call } from '../api/client'
import type { Faq } from '../api/types'
import { Badge, Button, Empty, ErrorBox, Field, fieldError, Loading, PageHeader, Pager, Select, TextArea, When } from '../ui/kit'
import { percent } from '../ui/ops'
import { useToast } from '../ui/toast'

type Approved = 'false' | 'true' | 'all'
type Source = 'all' | 'docs' | 'logs' | 'swagger'

const APPROVED_OPTIONS = [
  ['false', 'Waiting for review'],
  ['true', 'Approved'],
  ['all', 'All'],
] as const
const SOURCE_OPTIONS = [
  ['all', 'Any source'],
  ['docs', 'From documents'],
  ['logs', 'From visitor questions'],
  ['swagger', 'From API descriptions'],
] as const
const SOURCE_WORDS: Record<string, string> = { docs: 'From documents', logs: 'From visitor questions', swagger: 'From an API description' }
const LIMIT = 20

function FaqItem({ item }: { item: Faq }) {
  const [editing, setEditing] = useState(false)
  const [question, setQuestion] = useState(item.question)
  const [answer, setAnswer] = useState(item.answer)
  const qc = useQueryClient()
  const toast = useToast()
  const refresh = () => qc.invalidateQueries({ queryKey: ['faq'] })
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PUT('/knowledge/faq/{faq_id}', {
          params: { path: { faq_id: item.id } },
          body: {
            ...(question.trim() !== item.question ? { question: question.trim() } : {}),
            ...(answer.trim() !== item.answer ? { answer: answer.trim() } : {}),
          },
        }),
      ),
    onSuccess: async (f) => {
      setEditing(false)
      toast(item.approved && !f.approved ? 'Saved. The question changed, so it needs approving again.' : 'FAQ saved')
      await refresh()
    },
  })
  const act = useMutation({
    mutationFn: (what: 'approve' | 'reject' | 'delete'): Promise<unknown> =>
      what === 'approve'
        ? call(api.POST('/knowledge/faq/{faq_id}/approve', { params: { path: { faq_id: item.id } } }))
        : what === 'reject'
          ? call(api.POST('/knowledge/faq/{faq_id}/reject', { params: { path: { faq_id: item.id } } }))
          : call(api.DELETE('/knowledge/faq/{faq_id}', { params: { path: { faq_id: item.id } } })),
    onSuccess: async (_r, what) => {
      toast(what === 'approve' ? 'FAQ approved: the bot answers from it now' : what === 'reject' ? 'Candidate rejected' : 'FAQ deleted')
      await refresh()
    },
  })
  const qErr = fieldError(save.error, 'question')
  const aErr = fieldError(save.error, 'answer')
  return (
    <li className="card faq-item">
      <div className="row faq-meta">
        {item.approved ? <Badge tone="ok">Approved</Badge> : <Badge tone="warn">Waiting for review</Badge>}
        <Badge>{SOURCE_WORDS[item.source] ?? item.source}</Badge>
        {item.confidence !== null && <span className="muted">Confidence {percent(item.confidence)}</span>}
        <span className="muted">
          Updated <When at={item.updated_at} />
        </span>
      </div>
      {editing ? (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            save.mutate()
          }}
          noValidate
        >
          <Field
            label="Question"
            value={question}
            maxLength={1000}
            onChange={(e) => setQuestion(e.target.value)}
            error={qErr}
            hint={item.approved ? 'Changing the question takes the approval back.' : undefined}
          />
          <TextArea label="Answer" value={answer} onChange={(e) => setAnswer(e.target.value)} error={aErr} />
          <ErrorBox error={save.error && !qErr && !aErr ? save.error : null} />
          <div className="row">
            <Button type="submit" variant="primary" small busy={save.isPending}>
              Save
            </Button>
            <Button
              small
              onClick={() => {
                setEditing(false)
                setQuestion(item.question)
                setAnswer(item.answer)
                save.reset()
              }}
            >
              Cancel
            </Button>
          </div>
        </form>
      ) : (
        <>
          <h3 className="faq-q">{item.question}</h3>
          <p className="msg-text faq-a">{item.answer}</p>
          <div className="row">
            <Button small onClick={() => setEditing(true)} aria-label={`Edit: ${item.question}`}>
              Edit
            </Button>
            {!item.approved && (
              <Button
                small
                variant="primary"
                busy={act.isPending && act.variables === 'approve'}
                onClick={() => act.mutate('approve')}
                aria-label={`Approve: ${item.question}`}
              >
                Approve
              </Button>
            )}
            {!item.approved ? (
              <Button
                small
                variant="danger"
                busy={act.isPending && act.variables === 'reject'}
                onClick={() => act.mutate('reject')}
                aria-label={`Reject: ${item.question}`}
              >
                Reject
              </Button>
            ) : (
              <Button
                small
                variant="danger"
                busy={act.isPending && act.variables === 'delete'}
                onClick={() => confirm('Delete this FAQ? The bot stops answering from it.') && act.mutate('delete')}
                aria-label={`Delete: ${item.question}`}
              >
                Delete
              </Button>
            )}
          </div>
          <ErrorBox error={act.error} />
        </>
      )}
    </li>
  )
}

export default function FaqScreen() {
  const [approved, setApproved] = useState<Approved>('false')
  const [source, setSource] = useState<Source>('all')
  const [offset, setOffset] = useState(0)
  const qc = useQueryClient()
  const toast = useToast()
  const q = useQuery({
    queryKey: ['faq', approved, source, offset],
    queryFn: () => call(api.GET('/knowledge/faq', { params: { query: { approved, source, limit: LIMIT, offset } } })),
    placeholderData: (prev) => prev,
  })
  const approveAll = useMutation({
    mutationFn: () => call(api.POST('/knowledge/faq/approve-all')),
    onSuccess: async (r) => {
      toast(`${r.approved_count} FAQ${r.approved_count === 1 ? '' : 's'} approved`)
      await qc.invalidateQueries({ queryKey: ['faq'] })
    },
  })
  const pending = q.data?.pending_count ?? 0
  // The current page can be emptied by approving or rejecting its last items: step back a page.
  const emptyPage = !!q.data && q.data.items.length === 0 && offset > 0 && !q.isFetching
  useEffect(() => {
    if (emptyPage) setOffset((o) => Math.max(0, o - LIMIT))
  }, [emptyPage])
  return (
    <>
      <PageHeader title="FAQ">
        {pending > 0 && (
          <Button
            variant="primary"
            busy={approveAll.isPending}
            onClick={() => confirm(`Approve all ${pending} waiting FAQ candidates? The bot answers from them at once.`) && approveAll.mutate()}
          >
            Approve all
          </Button>
        )}
      </PageHeader>
      <p className="muted" role="status">
        {q.data ? `${pending} candidate${pending === 1 ? '' : 's'} waiting for review.` : ''}
      </p>
      <p className="hint">Questions and answers found in your knowledge and in visitors' questions. Approved ones are answered directly.</p>
      <ErrorBox error={approveAll.error} />
      <div className="filters">
        <Select
          label="Review state"
          value={approved}
          options={APPROVED_OPTIONS}
          onChange={(v) => {
            setApproved(v)
            setOffset(0)
          }}
        />
        <Select
          label="Source"
          value={source}
          options={SOURCE_OPTIONS}
          onChange={(v) => {
            setSource(v)
            setOffset(0)
          }}
        />
      </div>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : q.data.items.length === 0 ? (
        <Empty title={approved === 'false' ? 'Nothing waiting for review' : 'No FAQs here'}>
          <p>Candidates appear after documents are indexed and as visitors ask questions.</p>
        </Empty>
      ) : (
        <>
          <ul className="faq-list">
            {q.data.items.map((item) => (
              <FaqItem key={`${item.id}-${item.updated_at}`} item={item} />
            ))}
          </ul>
          <Pager label="FAQ pages" offset={offset} limit={LIMIT} total={q.data.total} onChange={setOffset} />
        </>
      )}
    </>
  )
}
