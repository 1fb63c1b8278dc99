import { type KeyboardEvent, type RefObject, useId, useState } from 'react'
import type { Ticket } from '../api/types'
import { useBots, useRole } from '../session'
import { useSavedReplies } from '../ui/saved-replies'
import { agentName, fillReply, insertReply, matchReplies, type ReplyVars, slashQuery } from '../ui/saved-replies.fns'

/** Where the `/query` under the caret starts and what it says; null: no picker. */
type Query = { start: number; query: string } | null

/** The values a saved reply is filled with on this ticket: the visitor's name, the member as visitors see them, the ticket number. */
function useReplyVars(t: Ticket): ReplyVars {
  const { me } = useRole()
  const bots = useBots()
  const bot = bots.data?.items.find((b) => b.public_id === t.bot_public_id)
  return {
    'visitor.name': t.user_name ?? t.identity?.name ?? null,
    'agent.name': agentName(me?.display_name, bot?.name),
    'ticket.number': t.ticket_number,
  }
}

/**
 * The composer's `/` picker (#39): typing `/` at the start of the reply or after a space opens a list of the saved
 * replies whose shortcut or title matches what follows it; ArrowUp/Down move, Enter or Tab (or a click) insert
 * the reply with its variables filled in, Escape closes it. The reply box stays a text box (a textarea may not
 * be a combobox) that owns the listbox through aria-controls and aria-activedescendant.
 */
export function useReplyPicker(opts: { t: Ticket; text: string; setText: (s: string) => void; area: RefObject<HTMLTextAreaElement | null> }) {
  const { t, text, setText, area } = opts
  const { may } = useRole()
  const usable = may('saved_replies_read')
  const replies = useSavedReplies(usable)
  const vars = useReplyVars(t)
  const id = useId()
  const [q, setQ] = useState<Query>(null)
  const [active, setActive] = useState(0)
  // Escape closes the picker for this `/` until another one is typed
  const [closedAt, setClosedAt] = useState<number | null>(null)

  const matches = q && usable ? matchReplies(replies.data?.items ?? [], q.query) : []
  const open = q !== null && closedAt !== q.start && usable && replies.isSuccess
  const current = Math.min(active, Math.max(0, matches.length - 1))
  const optionId = (i: number) => `${id}-opt-${i}`

  /** Reads the `/query` at the caret after the text or the caret changed. */
  const track = (el: HTMLTextAreaElement) => {
    const next = el.selectionStart === el.selectionEnd ? slashQuery(el.value, el.selectionStart) : null
    if (next?.start !== q?.start || next?.query !== q?.query) setActive(0)
    if (!next || next.start !== closedAt) setClosedAt(null)
    setQ(next)
  }

  const choose = (i: number) => {
    const r = matches[i]
    const el = area.current
    if (!r || !q || !el) return
    const done = insertReply(text, q.start, el.selectionStart, fillReply(r.content, vars))
    setText(done.text)
    setQ(null)
    requestAnimationFrame(() => {
      el.focus()
      el.setSelectionRange(done.caret, done.caret)
    })
  }

  /** The composer's key handler first: true when the picker used the key. */
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (!open) return false
    if (e.key === 'Escape') {
      setClosedAt(q.start)
      e.preventDefault()
      return true
    }
    if (matches.length === 0) return false
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const step = e.key === 'ArrowDown' ? 1 : -1
      setActive((current + step + matches.length) % matches.length)
      e.preventDefault()
      return true
    }
    if ((e.key === 'Enter' && !e.ctrlKey && !e.metaKey && !e.shiftKey) || e.key === 'Tab') {
      choose(current)
      e.preventDefault()
      return true
    }
    return false
  }

  const listId = `${id}-list`
  const areaProps = {
    'aria-autocomplete': 'list' as const,
    'aria-controls': open && matches.length > 0 ? listId : undefined,
    'aria-activedescendant': open && matches.length > 0 ? optionId(current) : undefined,
  }

  const list = open ? (
    <div className="reply-picker">
      {matches.length > 0 && (
        <span className="sr-only" role="status">
          {matches.length === 1 ? '1 saved reply' : `${matches.length} saved replies`}: arrow keys to choose, Enter to insert
        </span>
      )}
      {matches.length === 0 ? (
        <p className="muted small" role="status">
          {replies.data?.items.length ? `No saved reply matches /${q.query}` : 'No saved replies yet: add them under Settings › Saved replies.'}
        </p>
      ) : (
        <div id={listId} role="listbox" aria-label="Saved replies">
          {matches.map((r, i) => (
            // biome-ignore lint/a11y/useKeyWithClickEvents: the keys are the reply box's (it keeps the focus and points here by aria-activedescendant)
            <div
              key={r.id}
              id={optionId(i)}
              role="option"
              tabIndex={-1}
              aria-selected={i === current}
              className={i === current ? 'reply-option active' : 'reply-option'}
              // keep the focus in the reply box: the click inserts
              onMouseDown={(e) => e.preventDefault()}
              onMouseEnter={() => setActive(i)}
              onClick={() => choose(i)}
            >
              <code>/{r.shortcut}</code> <span>{r.title}</span>
            </div>
          ))}
        </div>
      )}
    </div>
  ) : null

  return { track, onKey, areaProps, list, open, close: () => setQ(null) }
}
