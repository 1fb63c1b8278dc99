import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState } from 'react'
import { api, call } from '../api/client'
import type { Ticket } from '../api/types'
import { Badge, Button, Check, ErrorBox, fieldError, TextArea } from '../ui/kit'
import { useTeamEvents } from '../ui/team-events'
import { useToast, useToastDismiss } from '../ui/toast'
import { AssistSummary, SuggestReply } from './ticket-assist'
import { useReplyFiles } from './reply-files'
import { useReplyPicker } from './ticket-reply-picker'
import { clockTime, Thread, type ThreadLine } from './ticket-thread'

type Owner = Ticket['owner']

type LiveLine = ThreadLine

/** Who answers the conversation, in a word. */
export function OwnerBadge({ owner, name }: { owner: Owner; name?: string | null }) {
  if (owner === 'queue') return <Badge tone="warn">Waiting</Badge>
  if (owner === 'human') return <Badge tone="info">{name ? `With ${name}` : 'With a person'}</Badge>
  if (owner === 'closed') return <Badge>Closed</Badge>
  return <Badge tone="ok">Bot</Badge>
}

export { useTeamEvents }

/** The operator's typing signal: on at the first key, repeated at most every 4 s, off after 5 s of quiet or on send. */
function useTypingSignal(ticketId: string) {
  const state = useRef({ on: false, at: 0, internal: false, idle: undefined as ReturnType<typeof setTimeout> | undefined })
  const post = (on: boolean, internal: boolean) => {
    state.current.on = on
    state.current.at = Date.now()
    state.current.internal = internal
    void api.POST('/escalations/{ticket_id}/typing', { params: { path: { ticket_id: ticketId } }, body: { on, internal } }).catch(() => {})
  }
  const stop = () => {
    const s = state.current
    clearTimeout(s.idle)
    if (s.on) post(false, s.internal)
  }
  useEffect(() => stop, [])
  return {
    typed(hasText: boolean, internal: boolean) {
      const s = state.current
      if (!hasText) return stop()
      if (!s.on || s.internal !== internal || Date.now() - s.at > 4000) post(true, internal)
      clearTimeout(s.idle)
      s.idle = setTimeout(stop, 5000)
    },
    stop,
  }
}

/**
 * The ticket's conversation as one live thread (#39): the chat with the bot, the hand-off, the live messages and
 * the team's notes in time order; the summary above it, the composer, the owner and its controls below.
 */
export function LiveChat({ t }: { t: Ticket }) {
  const sid = t.session_id
  // an e-mail customer has no chat: a reply is mailed at once (#52)
  const byEmail = t.channel === 'email' && Boolean(t.user_email)
  const qc = useQueryClient()
  const toast = useToast()
  const [lines, setLines] = useState<LiveLine[]>([])
  const [owner, setOwner] = useState<{ owner: Owner; name: string | null }>({ owner: t.owner, name: t.assignee_name })
  const [visitorTyping, setVisitorTyping] = useState(false)
  const [text, setText] = useState('')
  const [internal, setInternal] = useState(false)
  // send the message in the visitor's language (#40); the original stays with the team as a note
  const [translate, setTranslate] = useState(false)
  // the suggested reply inserted into the composer (sent with the message: counted as used)
  const [suggestionId, setSuggestionId] = useState<string | null>(null)
  const typing = useTypingSignal(t.id)
  const area = useRef<HTMLTextAreaElement>(null)
  const picker = useReplyPicker({ t, text, setText, area })
  // the reply's files (not a note's): uploaded as they are picked, sent as attachment_ids
  const files = useReplyFiles(t.id)
  const dismissToast = useToastDismiss()
  // a "resolved" toast is no longer true once the ticket is reopened (the visitor wrote again)
  useEffect(() => {
    if (t.status !== 'resolved') dismissToast(`resolved:${t.id}`)
  }, [t.status, t.id, dismissToast])

  useEffect(() => setOwner({ owner: t.owner, name: t.assignee_name }), [t.owner, t.assignee_name])

  const log = useQuery({
    queryKey: ['ticket-live', sid],
    enabled: Boolean(sid),
    queryFn: () => call(api.GET('/chat/logs/session/{session_id}', { params: { path: { session_id: sid! }, query: { include_original: false } } })),
  })
  const add = (m: LiveLine) => setLines((prev) => (prev.some((p) => p.id === m.id) ? prev : [...prev, m]))

  useTeamEvents((e) => {
    if (!sid || e.session_id !== sid) return
    if (e.type === 'message' && e.id && typeof e.content === 'string') {
      add({
        id: e.id,
        role: e.role ?? 'user',
        content: e.content,
        created_at: e.created_at ?? new Date().toISOString(),
        from_operator: Boolean(e.from_operator),
        author_name: e.author_name ?? null,
        internal: Boolean(e.internal),
        ...(Array.isArray(e.attachments) ? { attachments: e.attachments } : {}),
      })
      if (e.role === 'user') {
        setVisitorTyping(false)
        // the visitor writing after a resolution reopens the ticket: the "resolved" toast goes at once
        dismissToast(`resolved:${t.id}`)
      }
    } else if (e.type === 'owner') {
      setOwner({ owner: e.owner, name: e.assignee_name })
      void qc.invalidateQueries({ queryKey: ['ticket', t.id] })
    } else if (e.type === 'typing' && e.from === 'visitor') setVisitorTyping(e.on)
  })

  // the whole conversation and the team's notes (the ticket carries them); Thread puts them in time order
  const earlier: LiveLine[] = [
    ...(log.data?.messages ?? []).map((m, i) => ({
      id: m.id,
      role: m.role,
      content: m.content,
      created_at: m.created_at,
      from_operator: m.from_operator,
      author_name: m.author_name,
      internal: false,
      mailed_at: m.mailed_at ?? null,
      // an e-mail's subject is the ticket's title: not repeated at the head of the first mail
      ...(i === 0 && m.role === 'user' ? { content: withoutSubject(m.content, t.subject) } : {}),
      attachments: m.attachments,
    })),
    ...(t.notes ?? []).map((n) => ({ ...n, role: 'assistant', from_operator: true, internal: true })),
  ]
  const shown = [...earlier, ...lines.filter((l) => !earlier.some((e) => e.id === l.id))]

  const send = useMutation({
    mutationFn: () =>
      call(
        api.POST('/escalations/{ticket_id}/messages', {
          params: { path: { ticket_id: t.id } },
          body: {
            content: text.trim(),
            internal,
            ...(suggestionId && !internal ? { suggestion_id: suggestionId } : {}),
            ...(translate && !internal && t.language ? { translate: true } : {}),
            ...(!internal && files.ids.length ? { attachment_ids: files.ids } : {}),
          },
        }),
      ),
    onSuccess: (m) => {
      typing.stop()
      setText('')
      setSuggestionId(null)
      files.clear()
      add({ ...m, internal: m.internal })
      if (m.mailed_at && byEmail) toast(`Mailed to ${t.user_email} at ${clockTime(m.mailed_at)}`, 'ok')
      // the model gave the words back unchanged: they went as written, and nothing claims a translation (#52)
      if (m.translated === false && t.language)
        toast(`Sent as written: the model returned it untranslated, so no ${languageLabel(t.language)} version was made`, 'error')
    },
  })
  const resolve = useMutation({
    mutationFn: () => call(api.POST('/escalations/{ticket_id}/resolve', { params: { path: { ticket_id: t.id } }, body: { resolution_text: text.trim() } })),
    onSuccess: async (r) => {
      typing.stop()
      setText('')
      toast(
        r.reply_mailed_at
          ? `${t.ticket_number} resolved; the reply was mailed to ${t.user_email} at ${clockTime(r.reply_mailed_at)}`
          : `${t.ticket_number} resolved; the reply is in the visitor's chat`,
        'ok',
        `resolved:${t.id}`,
      )
      await qc.invalidateQueries({ queryKey: ['ticket', t.id] })
      void qc.invalidateQueries({ queryKey: ['ticket-live', sid] })
      void qc.invalidateQueries({ queryKey: ['tickets'] })
    },
  })
  const after = (words: string) => async () => {
    toast(words)
    await qc.invalidateQueries({ queryKey: ['ticket', t.id] })
    void qc.invalidateQueries({ queryKey: ['tickets'] })
  }
  // the bot answering again usually means the request is done: resolving is offered at once (#52)
  const [offerResolve, setOfferResolve] = useState(false)
  const toBot = useMutation({
    mutationFn: () => call(api.POST('/escalations/{ticket_id}/return-to-bot', { params: { path: { ticket_id: t.id } } })),
    onSuccess: async () => {
      setOfferResolve(true)
      await after('The bot answers this conversation again')()
    },
  })
  const close = useMutation({
    mutationFn: () => call(api.POST('/escalations/{ticket_id}/close', { params: { path: { ticket_id: t.id } } })),
    onSuccess: after('Conversation closed'),
  })

  if (!sid) return null
  const err = fieldError(send.error, 'content') ?? fieldError(resolve.error, 'resolution_text')
  const resolvable = !internal && t.status !== 'resolved'
  // a reply may be files alone; nothing goes while a file is still uploading
  const sendable = !files.uploading && (Boolean(text.trim()) || (!internal && files.ids.length > 0))
  return (
    <section className="card live-chat" aria-labelledby="live-chat-title">
      <div className="row live-head">
        <h2 id="live-chat-title">Conversation</h2>
        <span role="status" aria-live="polite">
          <OwnerBadge owner={owner.owner} name={owner.name} />
        </span>
      </div>
      <AssistSummary ticketId={t.id} />
      {log.isError ? (
        <ErrorBox error={log.error} retry={() => log.refetch()} />
      ) : log.isPending ? (
        <p className="muted">Loading the conversation…</p>
      ) : (
        <Thread lines={shown} handedAt={t.created_at} label="Conversation" note={t.user_note} />
      )}
      <p className="muted typing-line" role="status" aria-live="polite">
        {visitorTyping ? 'The visitor is typing…' : ''}
      </p>
      {owner.owner !== 'closed' && (
        <form
          className={internal ? 'composer composer-note' : 'composer'}
          onSubmit={(e) => {
            e.preventDefault()
            if (sendable) send.mutate()
          }}
          noValidate
        >
          <TextArea
            ref={area}
            {...picker.areaProps}
            label={internal ? 'Note for your team' : byEmail ? `Reply by e-mail to ${t.user_email}` : 'Reply to the visitor'}
            hint={
              internal
                ? 'Only your team sees this; it stays with the ticket.'
                : byEmail
                  ? 'Mailed at once in the customer’s thread, as you write it, signed with your name and the bot’s signature. Type / for a saved reply; Ctrl+Enter sends.'
                  : 'Appears in the visitor’s chat at once, and is mailed to them if they do not read it there. Type / for a saved reply; Ctrl+Enter sends.'
            }
            maxLength={8000}
            rows={3}
            value={text}
            onChange={(e) => {
              setText(e.target.value)
              picker.track(e.target)
              typing.typed(Boolean(e.target.value.trim()), internal)
            }}
            onSelect={(e) => picker.track(e.currentTarget)}
            onBlur={() => picker.close()}
            onKeyDown={(e) => {
              if (picker.onKey(e)) return
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && sendable) {
                e.preventDefault()
                send.mutate()
              }
            }}
            error={err}
          />
          {picker.list}
          {!internal && files.node}
          {!internal && (
            <SuggestReply
              ticketId={t.id}
              headId={shown.filter((m) => !m.internal).at(-1)?.id ?? null}
              onInsert={(s) => {
                setText(s.text)
                setSuggestionId(s.id)
              }}
            />
          )}
          {/* the team writes in English (the dashboard's language): translating an English ticket is no translation */}
          {!internal && t.language && !t.language.toLowerCase().startsWith('en') && (
            <Check
              label={`Translate into ${languageLabel(t.language)}`}
              hint="The visitor gets the model's translation; your original is kept as a note for the team"
              checked={translate}
              onChange={setTranslate}
            />
          )}
          <Check
            label="Internal note"
            hint="A note for your team: never shown to the visitor"
            checked={internal}
            onChange={(on) => {
              setInternal(on)
              send.reset()
              resolve.reset()
            }}
          />
          <ErrorBox error={(send.error ?? resolve.error) && !err ? (send.error ?? resolve.error) : null} />
          <div className="row">
            <Button type="submit" variant="primary" busy={send.isPending} disabled={!sendable}>
              {internal ? 'Add note' : 'Send'}
            </Button>
            {resolvable && (
              <Button busy={resolve.isPending} onClick={() => resolve.mutate()} data-inbox-resolve="">
                Send reply and resolve
              </Button>
            )}
          </div>
        </form>
      )}
      {offerResolve && owner.owner === 'bot' && t.status !== 'resolved' && (
        <div className="notice resolve-offer" role="status">
          <p>
            The bot answers {t.ticket_number}’s conversation again. Is the request done? Write a last line to the visitor in the reply box and resolve the
            ticket.
          </p>
          <div className="row">
            <Button
              variant="primary"
              small
              busy={resolve.isPending}
              onClick={() => {
                if (text.trim()) resolve.mutate()
                else area.current?.focus()
              }}
            >
              {text.trim() ? 'Resolve with this reply' : 'Write the last line'}
            </Button>
            <Button small onClick={() => setOfferResolve(false)}>
              Keep it open
            </Button>
          </div>
        </div>
      )}
      <div className="row live-actions">
        {owner.owner !== 'bot' && owner.owner !== 'closed' && (
          <Button busy={toBot.isPending} onClick={() => toBot.mutate()}>
            Return to bot
          </Button>
        )}
        {owner.owner !== 'closed' && (
          <Button
            variant="danger"
            busy={close.isPending}
            onClick={() => confirm('Close this conversation? The visitor cannot write in it any more.') && close.mutate()}
          >
            Close conversation
          </Button>
        )}
      </div>
      <ErrorBox error={toBot.error ?? close.error} />
    </section>
  )
}

/** "de" -> "German", for the composer's translate toggle. */
function languageLabel(code: string): string {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language' }).of(code) ?? code
  } catch {
    return code
  }
}

/** An e-mail's first message is its subject and body (the bot reads both); the ticket shows the subject as its title. */
export function withoutSubject(content: string, subject: string | null | undefined): string {
  const s = subject?.trim()
  if (!s || !content.startsWith(s)) return content
  const rest = content.slice(s.length).replace(/^\n+/, '')
  return rest || content
}
