import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { api, call } from '../api/client'
import { useRole } from '../session'
import { Badge, Button, Check, CopyButton, ErrorBox, Field, fieldError, Loading, Select, TextArea, When } from '../ui/kit'
import { useToast } from '../ui/toast'

/** A URL no mail provider can reach: localhost, a loopback address or a bare host name without a dot. */
function isLocalUrl(url: string): boolean {
  try {
    const h = new URL(url).hostname.toLowerCase()
    return h === 'localhost' || h.endsWith('.localhost') || h.startsWith('127.') || h === '[::1]' || h === '0.0.0.0' || !h.includes('.')
  } catch {
    return false
  }
}

const MODES = [
  ['answer', 'Answer: the bot mails its answer in the thread'],
  ['draft', 'Draft: the answer waits on a ticket for a person'],
] as const

/** Reasons said in words where the code alone would mislead (#52: a test opens nothing). */
const REASONS: Record<string, string> = {
  test_mail: 'test mail: answered in your inbox, no conversation or ticket kept',
  test_mail_no_ticket: "test mail: a customer's mail would open a ticket; this one opened none",
  test_mail_model_unavailable: 'test mail: the model did not answer',
}

const WHAT: Record<string, [string, 'neutral' | 'ok' | 'warn' | 'bad' | 'info']> = {
  queued: ['waiting', 'info'],
  answered: ['answered', 'ok'],
  handed_off: ['handed off', 'warn'],
  delivered: ['to the team', 'info'],
  drafted: ['draft on ticket', 'info'],
  ignored: ['ignored', 'neutral'],
  failed: ['failed', 'bad'],
}

/** The bot page's E-mail section: the address to forward to, the webhook URL, the mode, a test mail and the last messages. */
export function BotEmail({ botId }: { botId: string }) {
  const { may, me } = useRole()
  const qc = useQueryClient()
  const toast = useToast()
  const allowed = may('settings')
  const q = useQuery({
    queryKey: ['bot-email', botId],
    queryFn: () => call(api.GET('/bots/{bot_id}/email', { params: { path: { bot_id: botId } } })),
    enabled: allowed,
  })
  const messages = useQuery({
    queryKey: ['bot-email-messages', botId],
    queryFn: () => call(api.GET('/bots/{bot_id}/email/messages', { params: { path: { bot_id: botId }, query: { limit: 10 } } })),
    enabled: allowed,
    refetchInterval: (query) => (query.state.data?.items.some((m) => m.status === 'queued') ? 2000 : false),
  })
  const [enabled, setEnabled] = useState(false)
  const [mode, setMode] = useState<'answer' | 'draft'>('answer')
  const [replyFrom, setReplyFrom] = useState('')
  const [signature, setSignature] = useState('')
  const [question, setQuestion] = useState('')
  useEffect(() => {
    if (!q.data) return
    setEnabled(q.data.enabled)
    setMode(q.data.mode)
    setReplyFrom(q.data.reply_from ?? '')
    setSignature(q.data.signature ?? '')
  }, [q.data])
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PUT('/bots/{bot_id}/email', {
          params: { path: { bot_id: botId } },
          body: { enabled, mode, reply_from: replyFrom.trim() || null, signature: signature.trim() || null },
        }),
      ),
    onSuccess: (d) => {
      qc.setQueryData(['bot-email', botId], d)
      toast('E-mail settings saved')
    },
  })
  const rotate = useMutation({
    mutationFn: () => call(api.POST('/bots/{bot_id}/email/rotate', { params: { path: { bot_id: botId } } })),
    onSuccess: (d) => {
      qc.setQueryData(['bot-email', botId], d)
      toast('New webhook URL: update it at your provider')
    },
  })
  const resend = useMutation({
    mutationFn: () => call(api.POST('/bots/{bot_id}/email/verify-sender', { params: { path: { bot_id: botId } } })),
    onSuccess: (d) => {
      qc.setQueryData(['bot-email', botId], d)
      toast('Confirmation link sent: open it from that mailbox')
    },
  })
  // the service writes the test mail from the member's own address and answers it as a dry run: answered and cited
  // in the member's inbox, no conversation and no ticket left behind (#52)
  const test = useMutation({
    mutationFn: () => call(api.POST('/bots/{bot_id}/email/test', { params: { path: { bot_id: botId } }, body: { question: question.trim() } })),
    onSuccess: () => {
      toast('Test mail sent: the reply appears below and in your inbox; a test opens no ticket')
      void qc.invalidateQueries({ queryKey: ['bot-email-messages', botId] })
    },
  })
  if (!allowed) return null
  return (
    <div className="card" id="email">
      <h2>E-mail</h2>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : (
        <>
          <p className="hint">Forward your support mailbox to this address, or paste the webhook URL into SendGrid, Mailgun or Postmark.</p>
          <p>
            <code className="secret-value">{q.data.inbound_address}</code> <CopyButton text={q.data.inbound_address} label="Copy address" />
          </p>
          {q.data.inbound_smtp === false && (
            <p className="hint" data-testid="smtp-hint">
              Nothing here receives mail for this address yet: set <code>INBOUND_SMTP_PORT</code> (port 25 for mail from the internet) and point the domain's MX
              record at this server, or forward the mail through a provider to the webhook URL below.
            </p>
          )}
          <p>
            <code className="secret-value">{q.data.inbound_url}</code> <CopyButton text={q.data.inbound_url} label="Copy webhook URL" />{' '}
            <Button small busy={rotate.isPending} onClick={() => confirm('Make a new webhook URL? The old one stops working at once.') && rotate.mutate()}>
              New URL
            </Button>
          </p>
          {isLocalUrl(q.data.inbound_url) && (
            <p className="hint" data-testid="public-url-hint">
              This webhook URL points at this machine ({new URL(q.data.inbound_url).host}): a mail provider cannot reach it. Set <code>PUBLIC_BASE_URL</code> to
              the service's public address.
            </p>
          )}
          <form
            onSubmit={(e) => {
              e.preventDefault()
              save.mutate()
            }}
            noValidate
          >
            <Check label="Answer e-mail" checked={enabled} onChange={setEnabled} />
            <Select label="Mode" value={mode} options={MODES} onChange={(v) => setMode(v)} />
            <Field
              label="Reply from"
              hint="e.g. Acme Support <support@acme.com>; empty: the service's sender. A new address gets a confirmation link."
              maxLength={320}
              value={replyFrom}
              onChange={(e) => setReplyFrom(e.target.value)}
              error={fieldError(save.error, 'reply_from')}
            />
            {q.data.reply_from ? (
              <p data-testid="reply-from-status">
                <Badge tone={q.data.reply_from_verified ? 'ok' : 'warn'}>{q.data.reply_from_verified ? 'confirmed' : 'not confirmed'}</Badge>{' '}
                <span className="hint">
                  {q.data.reply_from_verified
                    ? `Mail goes out as ${q.data.sender}.`
                    : `Until the link mailed to that address is opened, mail goes out as ${q.data.sender}${q.data.reply_from_pending ? ' (a link is waiting, valid 48 hours)' : ''}.`}
                </span>{' '}
                {q.data.reply_from_verified ? null : (
                  <Button small busy={resend.isPending} onClick={() => resend.mutate()}>
                    Resend confirmation
                  </Button>
                )}
              </p>
            ) : null}
            <TextArea
              label="Signature"
              maxLength={2000}
              value={signature}
              onChange={(e) => setSignature(e.target.value)}
              error={fieldError(save.error, 'signature')}
            />
            <Button variant="primary" type="submit" busy={save.isPending}>
              Save e-mail settings
            </Button>
          </form>
          <ErrorBox error={save.error ?? rotate.error ?? resend.error} />
          <h3>Send a test mail</h3>
          <form
            onSubmit={(e) => {
              e.preventDefault()
              if (question.trim()) test.mutate()
            }}
            noValidate
          >
            <Field
              label="Question"
              hint={`Mailed from ${(me as { email?: string } | null | undefined)?.email ?? 'your address'} to the bot and answered in that inbox. A test opens no conversation and no ticket.`}
              maxLength={2000}
              value={question}
              onChange={(e) => setQuestion(e.target.value)}
            />
            <Button type="submit" busy={test.isPending} disabled={!q.data.enabled || !question.trim()}>
              Send test mail
            </Button>
          </form>
          <ErrorBox error={test.error} />
        </>
      )}
      <h3>Last messages</h3>
      {messages.isPending ? (
        <Loading />
      ) : messages.isError ? (
        <ErrorBox error={messages.error} retry={() => messages.refetch()} />
      ) : messages.data.items.length === 0 ? (
        <p className="hint">No mail received yet.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Received</th>
                <th>From / subject</th>
                <th>What happened</th>
              </tr>
            </thead>
            <tbody>
              {messages.data.items.map((m) => {
                const [label, tone] = WHAT[m.status] ?? [m.status, 'neutral']
                return (
                  <tr key={m.id}>
                    <td>
                      <When at={m.received_at} />
                    </td>
                    <td className="kc-cell-wrap">
                      {m.from ?? '(no sender)'}
                      <br />
                      <span className="hint">{m.subject}</span>
                    </td>
                    <td>
                      <Badge tone={tone}>{label}</Badge>
                      {m.reason ? <span className="hint"> {REASONS[m.reason] ?? m.reason.replaceAll('_', ' ')}</span> : null}
                      {m.ticket_number ? <span> {m.ticket_number}</span> : null}
                      {m.reply ? <pre>{m.reply}</pre> : null}
                      {m.draft ? (
                        <>
                          <span className="hint"> draft, not sent</span>
                          <pre>{m.draft}</pre>
                        </>
                      ) : null}
                      {m.confirmation_link ? (
                        <p>
                          Gmail asks to confirm forwarding to this bot (the bot never answers it):{' '}
                          <a href={m.confirmation_link} target="_blank" rel="noreferrer noopener">
                            confirm forwarding
                          </a>
                        </p>
                      ) : null}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  )
}
