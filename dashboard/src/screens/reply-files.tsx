import { useId, useRef, useState } from 'react'
import { ApiError, messageOf, toApiError } from '../api/client'
import type { Res } from '../api/types'
import { Button } from '../ui/kit'

type Uploaded = Res<'/escalations/{ticket_id}/attachments', 'post'>
/** A file in the composer: uploading, uploaded (its stored form), or refused (the service's words). */
type Item =
  | { key: string; name: string; state: 'uploading' }
  | { key: string; name: string; state: 'ready'; file: Uploaded }
  | { key: string; name: string; state: 'failed'; error: string }

/** A reply's most files (as a visitor's message). */
const MAX_FILES = 5

/** POST /escalations/{id}/attachments (multipart `file`): openapi-fetch does not send a file, so this is a plain fetch. */
async function uploadFile(ticketId: string, file: File): Promise<Uploaded> {
  const form = new FormData()
  form.append('file', file, file.name)
  let r: Response
  try {
    r = await fetch(`/escalations/${encodeURIComponent(ticketId)}/attachments`, {
      method: 'POST',
      body: form,
      credentials: 'same-origin',
      headers: { Accept: 'application/json' },
    })
  } catch {
    throw new ApiError(0, 'Cannot reach the service. Check your connection and try again.')
  }
  const body = await r.json().catch(() => null)
  if (!r.ok) throw toApiError(r.status, body)
  return body as Uploaded
}

/**
 * The composer's files (issue 54): an Attach button (a real button: keyboard and screen readers reach it) opens the
 * file picker; each file is uploaded as it is picked and listed with its state and a Remove button. `ids` are the
 * uploaded ones, sent with the reply as `attachment_ids`; `clear` empties the list once the reply is sent.
 */
export function useReplyFiles(ticketId: string) {
  const [items, setItems] = useState<Item[]>([])
  const input = useRef<HTMLInputElement>(null)
  const id = useId()
  const seq = useRef(0)
  const set = (key: string, next: Item) => setItems((prev) => prev.map((i) => (i.key === key ? next : i)))

  function add(list: FileList | null) {
    const picked = [...(list ?? [])].slice(0, Math.max(0, MAX_FILES - items.length))
    for (const f of picked) {
      const key = `f${seq.current++}`
      setItems((prev) => [...prev, { key, name: f.name, state: 'uploading' }])
      uploadFile(ticketId, f).then(
        (file) => set(key, { key, name: f.name, state: 'ready', file }),
        (err) => set(key, { key, name: f.name, state: 'failed', error: messageOf(err) }),
      )
    }
    if (input.current) input.current.value = ''
  }

  const ids = items.flatMap((i) => (i.state === 'ready' ? [i.file.id] : []))
  const uploading = items.some((i) => i.state === 'uploading')
  const node = (
    <div className="reply-files">
      <input
        ref={input}
        id={id}
        type="file"
        multiple
        hidden
        accept="image/png,image/jpeg,image/webp,image/gif,application/pdf,.docx,text/plain"
        onChange={(e) => add(e.target.files)}
      />
      <Button onClick={() => input.current?.click()} disabled={items.length >= MAX_FILES} aria-describedby={`${id}-hint`}>
        Attach files
      </Button>
      <span id={`${id}-hint`} className="muted">
        {' '}
        Images, PDF, Word or text; at most {MAX_FILES}.
      </span>
      {items.length > 0 && (
        <ul className="attachments" aria-label="Files to send" aria-live="polite">
          {items.map((i) => (
            <li key={i.key}>
              {i.name}{' '}
              <span className={i.state === 'failed' ? 'error' : 'muted'}>
                {i.state === 'uploading' ? '(uploading…)' : i.state === 'failed' ? `(not attached: ${i.error})` : `(${size(i.file.size)})`}
              </span>{' '}
              <Button variant="ghost" onClick={() => setItems((prev) => prev.filter((x) => x.key !== i.key))} aria-label={`Remove ${i.name}`}>
                Remove
              </Button>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
  return { ids, uploading, node, clear: () => setItems([]) }
}

const size = (n: number) => (n >= 1048576 ? `${(n / 1048576).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1024))} KB`)
