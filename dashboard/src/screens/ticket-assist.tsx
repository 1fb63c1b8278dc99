import { useMutation, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { api, ApiError, call } from '../api/client'
import { Badge, Button, ErrorBox, Field, When } from '../ui/kit'

/** A suggested reply as POST /escalations/{id}/suggest answers it. */
export interface Suggestion {
  id: string
  text: string
  cited: { n: number; document_id: string | null; title: string; url: string | null }[]
  language: string
  based_on_message_id: string | null
}

const MOVED_ON = 'The conversation moved on — suggest again.'
const isStale = (err: unknown) => err instanceof ApiError && err.status === 409 && err.code === 'stale'

/**
 * "Suggest reply" beside the composer: the model's draft from the conversation and the knowledge, with its sources.
 * Nothing is sent: "Insert" puts it into the composer to edit and send. A draft the conversation has moved past
 * (the server's 409 stale, or a message shown here after it arrived) is never inserted: it says so instead.
 */
export function SuggestReply({ ticketId, headId, onInsert }: { ticketId: string; headId: string | null; onInsert: (s: Suggestion) => void }) {
  const [instruction, setInstruction] = useState('')
  const [draft, setDraft] = useState<{ s: Suggestion; head: string | null } | null>(null)
  const suggest = useMutation({
    mutationFn: () =>
      call(
        api.POST('/escalations/{id}/suggest', {
          params: { path: { id: ticketId } },
          body: instruction.trim() ? { instruction: instruction.trim() } : {},
        }),
      ),
    onMutate: () => setDraft(null),
    onSuccess: (s) => setDraft({ s, head: headId }),
  })
  const outdated = draft !== null && draft.head !== headId
  // an e-mail bot in draft mode: its answer, never sent, waits here (issue 52, item 4)
  const waiting = useQuery({
    queryKey: ['ticket-draft', ticketId],
    queryFn: () => call(api.GET('/escalations/{id}/draft', { params: { path: { id: ticketId } } })),
  })
  const [dismissed, setDismissed] = useState<string | null>(null)
  const botDraft = !draft && waiting.data?.draft && waiting.data.draft.id !== dismissed ? waiting.data.draft : null
  return (
    <aside className="assist-panel" aria-label="Suggested reply">
      <div className="assist-ask">
        <Field
          label="Instruction (optional)"
          placeholder="e.g. shorter, more formal"
          maxLength={500}
          value={instruction}
          onChange={(e) => setInstruction(e.target.value)}
        />
        <Button small busy={suggest.isPending} onClick={() => suggest.mutate()}>
          Suggest reply
        </Button>
      </div>
      {isStale(suggest.error) && (
        <p className="assist-stale" role="alert">
          {MOVED_ON}
        </p>
      )}
      {!isStale(suggest.error) && <ErrorBox error={suggest.error} />}
      {botDraft && (
        <div className="assist-draft" data-testid="bot-draft">
          <p className="assist-label">
            <strong>The bot's answer</strong> <Badge tone="warn">draft, not sent</Badge>
          </p>
          <p className="assist-text">{botDraft.text}</p>
          <Sources cited={botDraft.cited} label="Sources of the draft" />
          <div className="row">
            <Button
              small
              variant="primary"
              onClick={() => {
                onInsert(botDraft)
                setDismissed(botDraft.id)
              }}
            >
              Insert into reply
            </Button>
            <Button small onClick={() => setDismissed(botDraft.id)}>
              Dismiss
            </Button>
          </div>
        </div>
      )}
      {draft && (
        <div className="assist-draft" data-testid="suggestion">
          <p className="assist-text">{draft.s.text}</p>
          <Sources cited={draft.s.cited} label="Sources of the suggestion" />
          {outdated ? (
            <p className="assist-stale" role="alert">
              {MOVED_ON}
            </p>
          ) : (
            <div className="row">
              <Button
                small
                variant="primary"
                onClick={() => {
                  onInsert(draft.s)
                  setDraft(null)
                }}
              >
                Insert into reply
              </Button>
              <Button small onClick={() => setDraft(null)}>
                Dismiss
              </Button>
            </div>
          )}
        </div>
      )}
    </aside>
  )
}

function Sources({ cited, label }: { cited: Suggestion['cited']; label: string }) {
  if (cited.length === 0) return null
  return (
    <ol className="assist-sources" aria-label={label}>
      {cited.map((c) => (
        <li key={c.n}>
          [{c.n}]{' '}
          {c.url ? (
            <a href={c.url} target="_blank" rel="noreferrer noopener">
              {c.title}
            </a>
          ) : (
            c.title
          )}
        </li>
      ))}
    </ol>
  )
}

/** The conversation in three lines for the person taking it over; kept by the service until a new message. */
export function AssistSummary({ ticketId }: { ticketId: string }) {
  const summarize = useMutation({
    mutationFn: () => call(api.POST('/escalations/{id}/summary', { params: { path: { id: ticketId } } })),
  })
  const s = summarize.data
  return (
    <div className="assist-summary" aria-label="Summary of the conversation">
      {s ? (
        <>
          <p className="assist-summary-text">{s.summary}</p>
          <p className="muted small">
            Summary of {s.message_count} messages · <When at={s.generated_at} />{' '}
            <Button small busy={summarize.isPending} onClick={() => summarize.mutate()}>
              Refresh
            </Button>
          </p>
        </>
      ) : (
        <Button small busy={summarize.isPending} onClick={() => summarize.mutate()}>
          Summarize
        </Button>
      )}
      <ErrorBox error={summarize.error} />
    </div>
  )
}
