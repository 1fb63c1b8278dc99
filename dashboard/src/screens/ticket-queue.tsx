import { Link } from 'wouter'
import type { Ticket } from '../api/types'
import { Badge } from '../ui/kit'
import { isReopened, StatusBadge, TRIGGER_WORDS } from '../ui/ops'
import { LanguageBadge } from '../ui/language-badge'
import { withoutSubject } from './ticket-live'

/** "4 min", "2 h", "3 d": how long a ticket has waited (or since it was resolved), short enough for a queue line. */
export function waitWords(from: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - new Date(from).getTime()) / 1000))
  if (s < 60) return 'just now'
  if (s < 3600) return `${Math.round(s / 60)} min`
  if (s < 86400) return `${Math.round(s / 3600)} h`
  return `${Math.round(s / 86400)} d`
}

/**
 * The queue's preview line: what the visitor left at the hand-off says most; else the last thing the visitor
 * wrote; else the question the ticket opened with (an e-mail's without its subject, which is the title).
 */
export function previewLine(t: Pick<Ticket, 'user_note' | 'transcript' | 'primary_question' | 'subject'>): { note: boolean; text: string } {
  if (t.user_note?.trim()) return { note: true, text: t.user_note.trim() }
  const last = [...t.transcript].reverse().find((m) => m.role === 'user' && m.content.trim())
  return { note: false, text: withoutSubject(last?.content ?? t.primary_question, t.subject) }
}

/** Who the visitor is, in one short phrase. */
function visitorWords(t: Ticket): string {
  const name = t.identity?.name ?? t.user_name
  const email = t.identity?.email ?? t.user_email
  return name ?? email ?? 'Anonymous visitor'
}

/**
 * The inbox's left pane (#52): one line per ticket, the open one marked, each a link that opens the ticket beside
 * the list; the conversation and details panes stay where they are.
 */
export function QueueList({ rows, selectedId }: { rows: Ticket[]; selectedId: string | null }) {
  return (
    <ul className="queue-list" aria-label="Tickets">
      {rows.map((t) => {
        const preview = previewLine(t)
        const current = t.id === selectedId
        return (
          <li key={t.id} className={current ? 'queue-item queue-current' : 'queue-item'}>
            <Link href={`/tickets/${t.id}`} className="queue-link" aria-current={current ? 'true' : undefined} data-ticket-id={t.id}>
              <span className="queue-top">
                <strong className="queue-number">{t.ticket_number}</strong>
                <StatusBadge ticket={t} />
                {t.channel === 'email' && <Badge tone="info">E-mail</Badge>}
                {isReopened(t) && <Badge tone="warn">Reopened</Badge>}
                {t.visitor_gone && <Badge tone="neutral">Visitor left</Badge>}
                {t.unread_count > 0 && (
                  <span className="unread">
                    <Badge tone="warn">
                      {t.unread_count} unread<span className="sr-only"> message{t.unread_count === 1 ? '' : 's'} from the visitor</span>
                    </Badge>
                  </span>
                )}
                <span className="queue-wait" title={new Date(t.resolved_at ?? t.created_at).toLocaleString()}>
                  {t.status === 'resolved' && t.resolved_at ? `resolved ${waitWords(t.resolved_at)} ago` : waitWords(t.created_at)}
                </span>
              </span>
              {t.subject && <span className="queue-title">{t.subject}</span>}
              <span className="queue-preview">
                {preview.note && <span className="queue-note-label">Note: </span>}
                {preview.text}
              </span>
              <span className="queue-meta">
                {visitorWords(t)} · {TRIGGER_WORDS[t.trigger] ?? t.trigger}
                {t.assignee_name ? ` · ${t.assignee_name}` : ''} <LanguageBadge language={t.language} />
              </span>
            </Link>
          </li>
        )
      })}
    </ul>
  )
}

const STATUS_WORDS: Record<Ticket['status'], string> = { open: 'Open', in_progress: 'In progress', resolved: 'Resolved' }

/** "1 match in Resolved", "3 matches: 2 in Open, 1 in Resolved" (the page's tickets; the total from the service). */
export function searchWords(total: number, tickets: Pick<Ticket, 'status'>[]): string {
  if (total === 0) return 'No matches in any status'
  const by = new Map<string, number>()
  for (const t of tickets) by.set(STATUS_WORDS[t.status], (by.get(STATUS_WORDS[t.status]) ?? 0) + 1)
  const parts = [...by].map(([s, n]) => `${n} in ${s}`)
  const head = `${total} ${total === 1 ? 'match' : 'matches'}`
  return parts.length === 1 && total === tickets.length ? `${head} in ${[...by.keys()][0]}` : `${head}: ${parts.join(', ')}`
}
