/**
 * The confirmation card of a write action (contract "Actions"): the chat stream's `confirm` frame shows what
 * the bot is about to do, and the visitor approves or cancels it. A click posts once (both buttons are
 * disabled at once, so a double click is one request); the service's answer is shown as a bot message.
 */
export interface ConfirmFrame {
  type: 'confirm'
  call_id: string
  action: string
  summary: string
  arguments: Record<string, unknown>
}

export interface ConfirmDeps {
  apiBase: string
  botId: string
  sessionId: string
  /** the service's texts in the visitor's language (/widget/config `labels`, from the message catalogue) */
  labels: { confirm: string; cancel: string; failed: string; cancelled: string }
  /** Shows the outcome as a bot message. */
  say(text: string): void
  announce(text: string): void
}

export const CONFIRM_CSS = `.confirm{margin:4px 0 8px;padding:12px;border:1px solid var(--line);border-left:3px solid var(--a);border-radius:10px;background:var(--bg);max-width:100%;overflow-wrap:anywhere}
.confirm:focus{outline:2px solid var(--a);outline-offset:2px}
.confirm p{margin:0 0 6px;font-weight:600}
.confirm dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 10px;margin:0 0 10px;font-size:13px}
.confirm dt{color:var(--mute)}
.confirm dd{margin:0}
.confirm .btn:disabled{opacity:.5;cursor:default}`

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] => {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v)
  if (text !== undefined) e.textContent = text
  return e
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))

export const isConfirmFrame = (e: { type?: unknown }): e is ConfirmFrame => e.type === 'confirm' && typeof (e as ConfirmFrame).call_id === 'string'

/** Builds the card; the caller places it in the log and it takes the focus. */
export function confirmCard(frame: ConfirmFrame, given: ConfirmDeps): HTMLElement {
  const deps = given
  const headingId = `scb-confirm-${frame.call_id.replace(/[^\w-]/g, '')}`
  const card = el('div', { class: 'confirm', role: 'group', 'aria-labelledby': headingId, tabindex: '-1' })
  card.dataset.callId = frame.call_id
  card.append(el('style', {}, CONFIRM_CSS), el('p', { id: headingId }, frame.summary || frame.action))
  const list = el('dl')
  for (const [k, v] of Object.entries(frame.arguments ?? {})) list.append(el('dt', {}, k), el('dd', {}, show(v)))
  if (list.childElementCount) card.append(list)
  const cancel = el('button', { class: 'btn ghost', type: 'button' }, deps.labels.cancel)
  const ok = el('button', { class: 'btn', type: 'button' }, deps.labels.confirm)
  const status = el('p', { class: 'sr', role: 'status', 'aria-live': 'polite' })
  const row = el('div', { class: 'row' })
  row.append(cancel, ok)
  card.append(row, status)
  // Said once the card is in the page (a live region announces changes, not its first content).
  setTimeout(() => (status.textContent = `${frame.summary || frame.action}. ${deps.labels.confirm} / ${deps.labels.cancel}`), 100)

  let sent = false
  const decide = async (approve: boolean) => {
    if (sent) return
    sent = true
    ok.disabled = true
    cancel.disabled = true
    card.setAttribute('aria-busy', 'true')
    const q = new URLSearchParams({ bot_id: deps.botId, session_id: deps.sessionId })
    let text: string
    try {
      const res = await fetch(`${deps.apiBase}/widget/actions/${encodeURIComponent(frame.call_id)}/confirm?${q}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ approve }),
        credentials: 'omit',
      })
      const body = (await res.json().catch(() => ({}))) as { status?: string; text?: string }
      text = res.ok ? body.text || (approve ? '' : deps.labels.cancelled) : deps.labels.failed
    } catch {
      text = deps.labels.failed
    }
    card.removeAttribute('aria-busy')
    if (text) {
      deps.say(text)
      deps.announce(text)
    }
  }
  ok.addEventListener('click', () => void decide(true))
  cancel.addEventListener('click', () => void decide(false))
  return card
}
