import type { ReactNode } from 'react'
import type { Ticket } from '../api/types'
import { type TicketLike, ticketStatus } from '../status-words'
import { Badge, Button, CopyButton } from './kit'

/** Helpers shared by the tickets, FAQ, gaps, profile and settings screens. */

export type Tone = 'neutral' | 'ok' | 'warn' | 'bad' | 'info'

export const PRIORITY_TONE: Record<string, Tone> = { low: 'neutral', medium: 'info', high: 'warn', critical: 'bad' }
export const STATUS_WORDS: Record<string, string> = { open: 'Open', in_progress: 'In progress', resolved: 'Resolved' }
export const STATUS_TONE: Record<string, Tone> = { open: 'warn', in_progress: 'info', resolved: 'ok' }
export const TRIGGER_WORDS: Record<string, string> = {
  user_request: 'Visitor asked for a human',
  answer_rejected: 'Visitor rejected the answer',
  llm_unavailable: 'Model unavailable',
  low_similarity: 'No good match in the knowledge',
  no_documents: 'No documentation yet',
  email_draft: 'E-mail in draft mode',
}

export function PriorityBadge({ priority }: { priority: string }) {
  return <Badge tone={PRIORITY_TONE[priority] ?? 'neutral'}>{priority[0]!.toUpperCase() + priority.slice(1)}</Badge>
}

/** A ticket's status: "In progress" only once someone took it (see status-words.ts). */
export function StatusBadge({ ticket }: { ticket: TicketLike }) {
  const s = ticketStatus(ticket)
  return <Badge tone={s.tone}>{s.word}</Badge>
}

/** Open again after a resolution (the conversation asked for help again within 7 days): its earlier resolution stays on record. */
export const isReopened = (t: { status: string; resolution_text?: string | null }) => t.status !== 'resolved' && !!t.resolution_text

/** A score with two decimals, or a dash when the service gave none. */
export function score(n: number | null | undefined): string {
  return typeof n === 'number' && Number.isFinite(n) ? n.toFixed(2) : '–'
}

export function percent(n: number | null | undefined): string {
  return typeof n === 'number' && Number.isFinite(n) ? `${Math.round(n * 100)} %` : '–'
}

/** A secret shown exactly once, with a copy button and a dismiss. */
export function SecretOnce({ title, value, children, onDone }: { title: string; value: string; children?: ReactNode; onDone: () => void }) {
  return (
    <div className="secret" role="region" aria-label={title}>
      <p>
        <strong>{title}</strong> It is shown only now: copy it and keep it safe.
      </p>
      <p>
        <code className="secret-value">{value}</code>
      </p>
      {children}
      <div className="row">
        <CopyButton text={value} />
        <Button small onClick={onDone}>
          I saved it
        </Button>
      </div>
    </div>
  )
}

/** Who the visitor is, from the verified identity or what they typed. */
export function Visitor({ t }: { t: Pick<Ticket, 'identity' | 'user_email' | 'user_name' | 'user_id'> }) {
  const name = t.identity?.name ?? t.user_name
  const email = t.identity?.email ?? t.user_email
  const id = t.identity?.id ?? t.user_id
  if (!name && !email && !id) return <span className="muted">Anonymous</span>
  return (
    <span className="visitor">
      {name && <span>{name}</span>}
      {email && <span className="muted">{email}</span>}
      {!name && !email && id && <span className="muted">ID {id}</span>}
    </span>
  )
}
