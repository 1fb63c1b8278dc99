import { Fragment, useEffect, useRef } from 'react'
import { When } from '../ui/kit'

/** One line of a ticket's thread: a visitor, bot or operator message, or an internal note. */
export interface ThreadLine {
  id: string
  role: string
  content: string
  created_at: string
  from_operator: boolean
  author_name: string | null
  internal: boolean
  /** an operator's message: when its mail left for the visitor (null: not mailed) */
  mailed_at?: string | null
  /** the files a visitor's message sent (issue 54) */
  attachments?: { id: string; name: string; content_type: string; size: number; kind: 'image' | 'document' }[]
}

const size = (n: number) => (n >= 1048576 ? `${(n / 1048576).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1024))} KB`)

/** A message's files: a thumbnail for an image, name and size, each opened as a download (GET /attachments/{id}). */
function Files({ files }: { files: NonNullable<ThreadLine['attachments']> }) {
  return (
    <ul className="msg-files">
      {files.map((f) => (
        <li key={f.id}>
          <a href={`/attachments/${f.id}`} download={f.name}>
            {f.kind === 'image' && <img src={`/attachments/${f.id}`} alt="" width={64} height={64} style={{ objectFit: 'cover', borderRadius: 4 }} />}
            <span>
              {f.name} · {size(f.size)}
            </span>
          </a>
        </li>
      ))}
    </ul>
  )
}

/** "14:05:09": when a reply was mailed, to the second (a relative "now" says too little in a toast). */
export const clockTime = (at: string) => new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' })

const WHO: Record<string, string> = { user: 'Visitor', assistant: 'Bot', operator: 'Operator', system: 'System' }

function Line({ m }: { m: ThreadLine }) {
  const who = m.from_operator ? (m.author_name ?? 'Operator') : (WHO[m.role] ?? m.role)
  const cls = m.internal ? 'msg msg-note' : m.role === 'user' ? 'msg msg-user' : m.from_operator ? 'msg msg-operator' : 'msg msg-assistant'
  return (
    <li className={cls} data-kind={m.internal ? 'note' : m.from_operator ? 'operator' : m.role}>
      <div className="msg-meta">
        {m.internal && <span className="note-tag">Internal note · </span>}
        {who} · <When at={m.created_at} />
        {m.internal && <span className="note-tag"> · only your team sees this</span>}
      </div>
      {/* Visitor and model text is shown as plain text only, never as HTML. */}
      <div className="msg-text">{m.content}</div>
      {m.from_operator && !m.internal && m.mailed_at && (
        <div className="msg-meta msg-mailed">
          mailed at <time dateTime={m.mailed_at}>{clockTime(m.mailed_at)}</time>
        </div>
      )}
      {m.attachments && m.attachments.length > 0 && <Files files={m.attachments} />}
    </li>
  )
}

/**
 * The ticket's one thread (#39): the conversation with the bot, a "Handed to the team" divider at the
 * hand-off, then the live messages and the team's internal notes, all in time order. Follows the newest
 * line while the reader is at the bottom.
 */
export function Thread({
  lines,
  handedAt,
  label = 'Conversation',
  note,
}: {
  lines: ThreadLine[]
  handedAt: string
  label?: string
  /** the visitor's hand-off note (why they asked for a person), shown at the divider */
  note?: string | null
}) {
  const list = useRef<HTMLOListElement>(null)
  const sorted = [...lines].sort((a, b) => a.created_at.localeCompare(b.created_at) || Number(a.internal) - Number(b.internal))
  const at = new Date(handedAt).getTime()
  const firstAfter = sorted.findIndex((m) => new Date(m.created_at).getTime() >= at)
  const dividerAt = firstAfter === -1 ? sorted.length : firstAfter
  useEffect(() => {
    const el = list.current
    if (el) el.scrollTop = el.scrollHeight
  }, [sorted.length])
  const divider = (
    <li className="handoff-divider" key="handoff">
      <span>
        Handed to the team · <When at={handedAt} />
        {note?.trim() && <span className="handoff-note">Visitor's note: “{note.trim()}”</span>}
      </span>
    </li>
  )
  return (
    // focusable: the thread scrolls, and a keyboard must be able to scroll it
    <ol className="transcript thread" aria-label={label} ref={list} tabIndex={0}>
      {sorted.map((m, i) => (
        <Fragment key={m.id}>
          {i === dividerAt && divider}
          <Line m={m} />
        </Fragment>
      ))}
      {dividerAt === sorted.length && divider}
    </ol>
  )
}
