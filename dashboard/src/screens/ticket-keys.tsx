import { useEffect, useRef, useState } from 'react'
import { useLocation } from 'wouter'
import type { Ticket } from '../api/types'

/** Keys typed into a field are the agent's words, never a command. */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false
  if (target.isContentEditable) return true
  const tag = target.tagName
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || Boolean(target.closest('[role="listbox"]'))
}

/** The open ticket's reply box (the composer of its conversation). */
const composer = () => document.querySelector<HTMLTextAreaElement>('.inbox-conversation .composer textarea')

/**
 * The inbox's keys (#52), as in Chatwoot, Intercom and Zendesk: j or ↓ opens the next ticket of the list, k or ↑
 * the previous one, r puts the cursor in the reply, e resolves (with the reply written), ? shows the keys. Inside
 * a field they are plain letters; Escape leaves the reply box so the keys work again.
 */
export function useInboxKeys(rows: readonly Ticket[], selectedId: string | null) {
  const [, navigate] = useLocation()
  const [help, setHelp] = useState(false)
  const latest = useRef({ rows, selectedId })
  latest.current = { rows, selectedId }
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return
      if (typing(e.target)) {
        if (e.key === 'Escape' && e.target === composer()) (e.target as HTMLElement).blur()
        return
      }
      const { rows, selectedId } = latest.current
      const move = (step: number) => {
        if (rows.length === 0) return
        const at = rows.findIndex((t) => t.id === selectedId)
        const next = at < 0 ? (step > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, at + step))
        if (rows[next] && rows[next].id !== selectedId) navigate(`/tickets/${rows[next].id}`)
      }
      const key = e.key
      if (key === 'j' || key === 'ArrowDown') move(1)
      else if (key === 'k' || key === 'ArrowUp') move(-1)
      else if (key === 'r') {
        const box = composer()
        if (!box) return
        box.focus()
      } else if (key === 'e') {
        const resolve = document.querySelector<HTMLButtonElement>('[data-inbox-resolve]')
        if (!resolve || resolve.disabled) return
        resolve.click()
      } else if (key === '?') setHelp((h) => !h)
      else if (key === 'Escape' && help) setHelp(false)
      else return
      e.preventDefault()
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [navigate, help])
  // the open ticket's line stays in sight while j and k move through a long list
  useEffect(() => {
    if (selectedId) document.querySelector('.queue-link[aria-current="true"]')?.scrollIntoView({ block: 'nearest' })
  }, [selectedId, rows])
  return { help, setHelp }
}

/** The keys, in a small help under the list (also toggled with ?). */
export function KeyHelp({ open, onToggle }: { open: boolean; onToggle: (open: boolean) => void }) {
  return (
    <details className="key-help" open={open} onToggle={(e) => onToggle((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Keyboard shortcuts</summary>
      <dl className="facts">
        <dt>
          <kbd>j</kbd> or <kbd>↓</kbd>
        </dt>
        <dd>Next ticket</dd>
        <dt>
          <kbd>k</kbd> or <kbd>↑</kbd>
        </dt>
        <dd>Previous ticket</dd>
        <dt>
          <kbd>r</kbd>
        </dt>
        <dd>Write a reply</dd>
        <dt>
          <kbd>e</kbd>
        </dt>
        <dd>Send the reply and resolve</dd>
        <dt>
          <kbd>Esc</kbd>
        </dt>
        <dd>Leave the reply box (the keys work again)</dd>
        <dt>
          <kbd>?</kbd>
        </dt>
        <dd>Show or hide these keys</dd>
      </dl>
    </details>
  )
}
