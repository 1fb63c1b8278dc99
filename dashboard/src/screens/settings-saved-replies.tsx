import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'wouter'
import { api, ApiError, call } from '../api/client'
import { useRole } from '../session'
import { Button, Empty, ErrorBox, Field, fieldError, Loading, PageHeader, TextArea } from '../ui/kit'
import { SAVED_REPLIES_KEY, type SavedReply, useSavedReplies } from '../ui/saved-replies'
import { slugShortcut } from '../ui/saved-replies.fns'
import { useToast } from '../ui/toast'

interface Draft {
  title: string
  shortcut: string
  content: string
}
const EMPTY: Draft = { title: '', shortcut: '', content: '' }

/** The shortcut's error: the 422 naming it, or the 409 `shortcut_exists` of a shortcut another reply has. */
function shortcutError(err: unknown, shortcut: string, taken: (s: string) => boolean): string | undefined {
  if (err instanceof ApiError && err.status === 409 && (err.code === 'shortcut_exists' || taken(slugShortcut(shortcut) || shortcut.trim())))
    return 'Another saved reply has this shortcut.'
  return fieldError(err, 'shortcut')
}

/** One saved reply's fields, new or edited; the service's 422s and 409 shown at their fields. */
function ReplyForm({ initial, id, onDone }: { initial: Draft; id?: string; onDone: () => void }) {
  const [d, setD] = useState<Draft>(initial)
  const qc = useQueryClient()
  const toast = useToast()
  const list = useSavedReplies()
  const taken = (s: string) => (list.data?.items ?? []).some((r) => r.shortcut === s && r.id !== id)
  const save = useMutation({
    mutationFn: () => {
      // "Refund Time" is saved as refund-time (the field shows it so on leaving it)
      const body = { title: d.title.trim(), shortcut: slugShortcut(d.shortcut) || d.shortcut.trim(), content: d.content }
      return id ? call(api.PATCH('/tenants/me/saved-replies/{id}', { params: { path: { id } }, body })) : call(api.POST('/tenants/me/saved-replies', { body }))
    },
    onSuccess: async (r) => {
      toast(id ? `Saved reply /${r.shortcut} changed` : `Saved reply /${r.shortcut} added`)
      // emptied at once, not after the list's refetch: what is typed meanwhile is the next reply
      if (!id) setD(EMPTY)
      await qc.invalidateQueries({ queryKey: SAVED_REPLIES_KEY })
      onDone()
    },
  })
  const errs = { title: fieldError(save.error, 'title'), shortcut: shortcutError(save.error, d.shortcut, taken), content: fieldError(save.error, 'content') }
  const named = errs.title || errs.shortcut || errs.content
  const set = (k: keyof Draft) => (e: { target: { value: string } }) => {
    const v = e.target.value
    setD((prev) => ({ ...prev, [k]: v }))
  }
  return (
    <form
      className="saved-reply-form"
      aria-label={id ? `Edit /${initial.shortcut}` : 'New saved reply'}
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
      noValidate
    >
      <Field label="Title" maxLength={120} value={d.title} onChange={set('title')} error={errs.title} />
      <Field
        label="Shortcut"
        maxLength={32}
        value={d.shortcut}
        onChange={set('shortcut')}
        onBlur={() => setD((prev) => ({ ...prev, shortcut: slugShortcut(prev.shortcut) || prev.shortcut }))}
        error={errs.shortcut}
        hint={'Typed after / in the reply box: lower-case letters, digits and hyphens, e.g. refund-time ("Refund Time" becomes refund-time).'}
      />
      <TextArea
        label="Text"
        maxLength={8000}
        rows={4}
        value={d.content}
        onChange={set('content')}
        error={errs.content}
        hint="{{visitor.name}}, {{agent.name}} and {{ticket.number}} are filled in when it is inserted (left empty when not known)."
      />
      <ErrorBox error={save.error && !named ? save.error : null} />
      <div className="row">
        <Button type="submit" variant="primary" busy={save.isPending}>
          {id ? 'Save changes' : 'Add saved reply'}
        </Button>
        {id && <Button onClick={onDone}>Cancel</Button>}
      </div>
    </form>
  )
}

function ReplyRow({ r, canManage }: { r: SavedReply; canManage: boolean }) {
  const [editing, setEditing] = useState(false)
  const qc = useQueryClient()
  const toast = useToast()
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/tenants/me/saved-replies/{id}', { params: { path: { id: r.id } } })),
    onSuccess: async () => {
      toast(`Saved reply /${r.shortcut} deleted`)
      await qc.invalidateQueries({ queryKey: SAVED_REPLIES_KEY })
    },
  })
  return (
    <li className="card saved-reply">
      {editing ? (
        <ReplyForm id={r.id} initial={{ title: r.title, shortcut: r.shortcut, content: r.content }} onDone={() => setEditing(false)} />
      ) : (
        <>
          <h3>
            <code>/{r.shortcut}</code> {r.title}
          </h3>
          <p className="msg-text">{r.content}</p>
          {canManage && (
            <div className="row">
              <Button small onClick={() => setEditing(true)} aria-label={`Edit /${r.shortcut}`}>
                Edit
              </Button>
              <Button
                small
                variant="danger"
                busy={remove.isPending}
                aria-label={`Delete /${r.shortcut}`}
                onClick={() => confirm(`Delete the saved reply /${r.shortcut}?`) && remove.mutate()}
              >
                Delete
              </Button>
            </div>
          )}
          <ErrorBox error={remove.error} />
        </>
      )}
    </li>
  )
}

/**
 * Settings › Saved replies (#39): answers the team gives often, inserted by typing `/` and the shortcut in a
 * ticket's reply box. Owners, admins and editors add, change and delete them; agents read them here and use them.
 */
export default function SavedReplies() {
  const { may } = useRole()
  const canManage = may('saved_replies')
  const list = useSavedReplies()
  return (
    <>
      <PageHeader title="Saved replies" />
      <p className="hint">
        Type <kbd>/</kbd> in a ticket's reply box to insert one: the list narrows as you type its shortcut or title.
        {may('settings') && (
          <>
            {' '}
            <Link href="/settings">All settings</Link>
          </>
        )}
      </p>
      {canManage ? (
        <section className="card" aria-labelledby="sr-new">
          <h2 id="sr-new">New saved reply</h2>
          <ReplyForm initial={EMPTY} onDone={() => {}} />
        </section>
      ) : (
        <p className="muted">Owners, admins and editors add and change saved replies; you can use them in the reply box.</p>
      )}
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorBox error={list.error} retry={() => list.refetch()} />
      ) : list.data.items.length === 0 ? (
        <Empty title="No saved replies yet" />
      ) : (
        <ul className="saved-replies" aria-label="Saved replies">
          {list.data.items.map((r) => (
            <ReplyRow key={r.id} r={r} canManage={canManage} />
          ))}
        </ul>
      )}
    </>
  )
}
