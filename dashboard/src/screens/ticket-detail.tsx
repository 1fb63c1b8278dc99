import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api/client'
import type { Ticket } from '../api/types'
import { Badge, Button, Check, Empty, ErrorBox, fieldError, Loading, TextArea, When } from '../ui/kit'
import { isReopened, PriorityBadge, score, StatusBadge, TRIGGER_WORDS } from '../ui/ops'
import { useMaySeeOriginal } from '../session'
import { useToast } from '../ui/toast'
import { SessionActionCalls } from './action-calls'
import { Assignment } from './ticket-assignee'
import { MakeTestFromSession } from './eval-from-session'
import { LanguageBadge } from '../ui/language-badge'
import { LiveChat, OwnerBadge, withoutSubject } from './ticket-live'
import { Thread, type ThreadLine } from './ticket-thread'

/** A ticket without a conversation (a server-to-server hand-off): the transcript it came with and the notes, as one thread. */
function TranscriptOnly({ t }: { t: Ticket }) {
  const lines: ThreadLine[] = [
    ...t.transcript.map((m, i) => ({
      id: `m-${i}`,
      role: m.role === 'operator' ? 'assistant' : m.role,
      content: m.content,
      created_at: m.created_at,
      from_operator: m.role === 'operator',
      author_name: null,
      internal: false,
      attachments: m.attachments,
    })),
    ...(t.notes ?? []).map((n) => ({ ...n, role: 'assistant', from_operator: true, internal: true })),
  ]
  return (
    <section className="card live-chat" aria-labelledby="thread-title">
      <h2 id="thread-title">Conversation</h2>
      {lines.length === 0 ? <Empty title="No messages yet" /> : <Thread lines={lines} handedAt={t.created_at} note={t.user_note} />}
    </section>
  )
}

function VisitorFacts({ t }: { t: Ticket }) {
  const id = t.identity
  const name = id?.name ?? t.user_name
  const email = id?.email ?? t.user_email
  const userId = id?.id ?? t.user_id
  return (
    <div className="card">
      <h2>Visitor</h2>
      {!name && !email && !userId ? (
        <p className="muted">Anonymous visitor: no name or e-mail was given.</p>
      ) : (
        <dl className="facts">
          {id && (
            <>
              <dt>Identity</dt>
              <dd>
                <Badge tone="ok">Verified by your site</Badge>
              </dd>
            </>
          )}
          {name && (
            <>
              <dt>Name</dt>
              <dd>{name}</dd>
            </>
          )}
          {email && (
            <>
              <dt>E-mail</dt>
              <dd>{email}</dd>
            </>
          )}
          {userId && (
            <>
              <dt>User ID</dt>
              <dd>
                <code>{userId}</code>
              </dd>
            </>
          )}
          {id?.plan && (
            <>
              <dt>Plan</dt>
              <dd>{id.plan}</dd>
            </>
          )}
        </dl>
      )}
    </div>
  )
}

/** "12.3 KB": an attachment's size in words a person reads. */
export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}

/**
 * An e-mail ticket's attachments, by name and size, from the mails of its thread (GET /escalations/{id}/email): those
 * stored with their message open as downloads (they are in the thread too); the rest are listed only.
 */
function MailAttachments({ t }: { t: Ticket }) {
  const q = useQuery({
    queryKey: ['ticket-email', t.id],
    enabled: t.channel === 'email',
    queryFn: () => call(api.GET('/escalations/{id}/email', { params: { path: { id: t.id } } })),
  })
  if (t.channel !== 'email') return null
  const files = (q.data?.messages ?? []).flatMap((m) => m.attachments.map((a, i) => ({ ...a, key: `${m.id}-${i}` })))
  return (
    <div className="card">
      <h2>Attachments</h2>
      {q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : q.isPending ? (
        <p className="muted">Loading…</p>
      ) : files.length === 0 ? (
        <p className="muted">The customer's mails carried no attachments.</p>
      ) : (
        <ul className="attachments" aria-label="Attachments">
          {files.map((f) => (
            <li key={f.key}>
              {f.attachment_id ? (
                <a href={`/attachments/${f.attachment_id}`} download={f.name}>
                  {f.name}
                </a>
              ) : (
                f.name
              )}{' '}
              <span className="muted">
                ({fileSize(f.size)}
                {f.attachment_id ? ', in the thread' : ', listed only'})
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

function Evidence({ t }: { t: Ticket }) {
  return (
    <div className="card">
      <h2>Retrieval evidence</h2>
      {t.evidence.length === 0 ? (
        <p className="muted">No knowledge was found for this question.</p>
      ) : (
        // focusable: on a phone the table scrolls sideways, and a keyboard must be able to scroll it
        <div className="table-wrap" role="region" aria-label="Retrieval evidence" tabIndex={0}>
          <table>
            <caption className="sr-only">What the search found for the question</caption>
            <thead>
              <tr>
                <th scope="col">Source</th>
                <th scope="col" className="num">
                  Confidence
                </th>
                <th scope="col" className="num">
                  Keyword (BM25)
                </th>
                <th scope="col" className="num">
                  Vector
                </th>
                <th scope="col">Failure</th>
              </tr>
            </thead>
            <tbody>
              {t.evidence.map((e, i) => (
                <tr key={`${e.chunk_id ?? e.faq_id ?? ''}-${i}`}>
                  <td>{e.title || <span className="muted">untitled</span>}</td>
                  <td className="num">{score(e.confidence)}</td>
                  <td className="num">{score(e.bm25 ?? e.lexical)}</td>
                  <td className="num">{score(e.vector)}</td>
                  <td>{e.failure_type ? e.failure_type.replace(/_/g, ' ') : <span className="muted">–</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  )
}

/**
 * The resolution once there is one. Replying and resolving happen in the live chat's one composer; a ticket
 * without a conversation (a server-to-server hand-off) keeps a reply form of its own here.
 */
function Resolve({ t }: { t: Ticket }) {
  const [text, setText] = useState('')
  const qc = useQueryClient()
  const toast = useToast()
  const resolve = useMutation({
    mutationFn: () => call(api.POST('/escalations/{ticket_id}/resolve', { params: { path: { ticket_id: t.id } }, body: { resolution_text: text.trim() } })),
    onSuccess: async () => {
      setText('')
      toast(`${t.ticket_number} resolved`)
      await qc.invalidateQueries({ queryKey: ['ticket', t.id] })
      void qc.invalidateQueries({ queryKey: ['tickets'] })
    },
  })
  if (t.status === 'resolved')
    return (
      <div className="card">
        <h2>Resolution</h2>
        <p>
          <StatusBadge ticket={{ status: 'resolved' }} /> <When at={t.resolved_at} />
        </p>
        {t.resolution_text ? <p className="msg-text resolution">{t.resolution_text}</p> : <p className="muted">No reply was recorded.</p>}
      </div>
    )
  if (t.session_id)
    return isReopened(t) ? (
      <div className="card">
        <h2>Earlier resolution</h2>
        <p className="muted">
          The visitor asked for help again after this earlier resolution: <span className="msg-text">{t.resolution_text}</span>
        </p>
      </div>
    ) : null
  const err = fieldError(resolve.error, 'resolution_text')
  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault()
        resolve.mutate()
      }}
      noValidate
    >
      <h2>Resolve</h2>
      <TextArea
        label="Resolution"
        hint="This ticket has no chat: the resolution is kept with the ticket."
        maxLength={8000}
        value={text}
        onChange={(e) => setText(e.target.value)}
        error={err}
      />
      <ErrorBox error={resolve.error && !err ? resolve.error : null} />
      <Button type="submit" variant="primary" busy={resolve.isPending}>
        Resolve
      </Button>
    </form>
  )
}

/**
 * The open ticket as the inbox's two right-hand panes (#52): the conversation (title, badges, thread, composer)
 * and beside it the customer and ticket details. The list stays on the left; `back` returns to it on a phone.
 */
export function TicketPanes({ id, back }: { id: string; back: ReactNode }) {
  const [original, setOriginal] = useState(false)
  const maySeeOriginal = useMaySeeOriginal()
  const qc = useQueryClient()
  const toast = useToast()
  const q = useQuery({
    queryKey: ['ticket', id, original],
    queryFn: () => call(api.GET('/escalations/{ticket_id}', { params: { path: { ticket_id: id }, query: { include_original: original } } })),
    // Switching "Show original" keeps the screen in place while the other version loads.
    placeholderData: (prev) => prev,
  })
  const delOriginal = useMutation({
    mutationFn: () => call(api.POST('/escalations/{ticket_id}/delete-original', { params: { path: { ticket_id: id } } })),
    onSuccess: async (r) => {
      setOriginal(false)
      toast(r.deleted_count ? `Original text deleted (${r.deleted_count})` : 'There was no original text to delete')
      await qc.invalidateQueries({ queryKey: ['ticket', id] })
    },
  })
  if (q.isPending || q.isError || q.data.id !== id)
    return (
      <section className="inbox-conversation" aria-label="Ticket">
        {back}
        {q.isError ? <ErrorBox error={q.error} retry={() => q.refetch()} /> : <Loading />}
      </section>
    )
  const t = q.data
  const hasOriginal = maySeeOriginal && t.primary_question_original_available
  return (
    <>
      <section className="inbox-conversation" aria-labelledby="ticket-title">
        {back}
        <div className="page-header ticket-head">
          <h1 id="ticket-title">{t.subject ? t.subject : `Ticket ${t.ticket_number}`}</h1>
          {hasOriginal && (
            <Button
              variant="danger"
              small
              busy={delOriginal.isPending}
              onClick={() => confirm('Delete the original (unredacted) text of this ticket for good? Only the redacted text stays.') && delOriginal.mutate()}
            >
              Delete original text
            </Button>
          )}
        </div>
        <ErrorBox error={delOriginal.error} />
        <div className="row ticket-badges">
          {t.subject && <Badge>{t.ticket_number}</Badge>}
          {t.channel === 'email' && <Badge tone="info">E-mail</Badge>}
          <StatusBadge ticket={t} />
          {isReopened(t) && <Badge tone="warn">Reopened</Badge>}
          <PriorityBadge priority={t.priority} />
          <OwnerBadge owner={t.owner} name={t.assignee_name} />
          {t.visitor_gone && <Badge tone="neutral">Visitor left</Badge>}
          <LanguageBadge language={t.language} />
        </div>
        {t.session_id ? <LiveChat key={t.id} t={t} /> : <TranscriptOnly t={t} />}
        <Resolve key={`resolve-${t.id}`} t={t} />
      </section>
      <aside className="inbox-details" aria-label="Customer and ticket details">
        <VisitorFacts t={t} />
        <Assignment key={t.id} t={t} />
        <div className="card">
          <h2>Ticket</h2>
          <dl className="facts">
            <dt>Number</dt>
            <dd>{t.ticket_number}</dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge ticket={t} />
            </dd>
            <dt>Trigger</dt>
            <dd>{TRIGGER_WORDS[t.trigger] ?? t.trigger}</dd>
            <dt>Channel</dt>
            <dd>{t.channel === 'email' ? 'E-mail' : t.channel === 'widget' ? 'Chat widget' : 'API'}</dd>
            <dt>Language</dt>
            <dd>{t.language ? languageName(t.language) : <span className="muted">not known yet</span>}</dd>
            <dt>Opened</dt>
            <dd>
              <When at={t.created_at} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <When at={t.updated_at} />
            </dd>
          </dl>
          <h3>Question</h3>
          <p className="msg-text">{original && t.primary_question_original ? t.primary_question_original : withoutSubject(t.primary_question, t.subject)}</p>
          {hasOriginal && (
            <Check
              label="Show original"
              hint="Shows what the visitor typed before personal data was masked. Every view is recorded in the privacy audit trail."
              checked={original}
              onChange={setOriginal}
            />
          )}
          {t.user_note && (
            <>
              <h3>Visitor's note</h3>
              <p className="msg-text">{t.user_note}</p>
            </>
          )}
          {t.session_id && (
            <p className="row">
              <Link href={`/conversations/${t.session_id}`}>Open the conversation</Link>
              <MakeTestFromSession sessionId={t.session_id} about={t.primary_question ?? undefined} />
            </p>
          )}
        </div>
        <MailAttachments t={t} />
        <Evidence t={t} />
        {t.session_id && <SessionActionCalls sessionId={t.session_id} />}
      </aside>
    </>
  )
}

/** "de" -> "German (de)". */
function languageName(code: string): string {
  try {
    return `${new Intl.DisplayNames(['en'], { type: 'language' }).of(code) ?? code} (${code})`
  } catch {
    return code
  }
}
