import type { Attached } from './attachments.js'
import type { Client } from './api.js'
import type { Availability } from './availability.js'
import { fill, type UiLabels } from './labels.js'
import { type LiveEvent, type LiveLabels, type LiveStream, openLiveStream, type Owner, typingSignal } from './live.js'
import type { StoredSession } from './store.js'

const POLL_MS = 15_000

/** What the live conversation needs from the widget around it. */
export interface LiveChatHost {
  client: Client
  log: HTMLElement
  typingEl: HTMLElement
  session(): StoredSession | null
  /** The panel is open and the widget not destroyed: the stream is worth keeping. */
  active(): boolean
  /** A ticket exists: the fallback poll is worth running. */
  hasTicket(): boolean
  ui(): UiLabels
  lx(): LiveLabels
  addMessage(role: 'operator', content: string, id: string, author: string | null | undefined): HTMLElement
  addSystem(text: string): HTMLElement
  /** A message's files, as downloads */
  addFiles(el: HTMLElement, files: Attached[] | undefined): void
  announce(text: string): void
  markRead(): void
  setEnded(value: boolean): void
  refreshHistory(): Promise<void>
  /** An `availability` frame (the team came online or left): the widget shows the new promise. */
  availability(a: Availability): void
}

/**
 * The visitor's side of a person taking over: who owns the conversation (and the line that says so), the
 * team's messages and typing from the session's stream, the visitor's typing signal, and the history poll
 * that replaces the stream only when it keeps failing.
 */
export function createLiveChat(host: LiveChatHost) {
  let owner: Owner = 'bot'
  let stream: LiveStream | null = null
  let streamFailed = false
  let pollTimer: ReturnType<typeof setInterval> | undefined
  const typing = typingSignal((on) => {
    const s = host.session()
    return s ? host.client.typing(s.id, on) : Promise.resolve()
  })
  const shown = (id: string) => host.log.querySelector(`[data-id="${CSS.escape(id)}"]`)

  function setOwner(next: Owner, name: string | null): void {
    if (next === owner) return
    owner = next
    const lx = host.lx()
    const line =
      next === 'human'
        ? name
          ? fill(lx.operator_joined, { name })
          : lx.someone_joined
        : next === 'bot'
          ? lx.back_to_bot
          : next === 'queue'
            ? lx.waiting
            : lx.conversation_closed
    host.announce(host.addSystem(line).textContent ?? '')
    if (next !== 'human') host.typingEl.hidden = true
    host.setEnded(next === 'closed')
  }

  /** Adds the team's messages the stream did not carry (a resolution's reply), keeping what is on screen. */
  async function catchUp(): Promise<void> {
    const s = host.session()
    if (!s) return
    try {
      for (const m of (await host.client.history(s.id)).messages) {
        if (m.from_operator && !shown(m.id)) host.addFiles(host.addMessage('operator', m.content, m.id, m.author_name), m.attachments)
      }
      host.markRead()
    } catch {
      // the next owner change or the next open tries again
    }
  }

  function onLive(e: LiveEvent): void {
    if (e.type === 'owner') {
      setOwner(e.owner, e.assignee_name)
      void catchUp()
    } else if (e.type === 'typing' && e.from === 'operator') {
      host.typingEl.textContent = host.lx().someone_typing
      host.typingEl.hidden = !e.on
    } else if (e.type === 'availability') {
      if (typeof e.online === 'boolean') host.availability({ online: e.online, reply_eta_s: e.reply_eta_s ?? null, next_open_at: e.next_open_at ?? null })
    } else if (e.type === 'message') {
      // the visitor's own messages are on screen already; a bot answer comes with its own stream
      if (e.role === 'user' || !e.from_operator || shown(e.id)) return
      host.typingEl.hidden = true
      host.addFiles(host.addMessage('operator', e.content, e.id, e.author_name), e.attachments)
      const names = (e.attachments ?? []).map((f) => f.name).join(', ')
      host.announce(
        `${e.author_name ? fill(host.lx().operator_suffix, { name: e.author_name }) : host.ui().operator}: ${[e.content, names].filter(Boolean).join(' ')}`,
      )
      host.markRead()
    }
  }

  /** Live events while the panel is open and a session exists; the history poll only when the stream keeps failing. */
  function sync(): void {
    const s = host.session()
    const live = host.active() && Boolean(s) && !streamFailed
    if (live && !stream && s) {
      stream = openLiveStream(host.client.eventsUrl(s.id), null, onLive, () => {
        stream = null
        streamFailed = true
        sync()
      })
    }
    if (!live && stream) {
      stream.close()
      stream = null
    }
    const want = host.active() && Boolean(s && host.hasTicket()) && streamFailed
    if (want && !pollTimer) pollTimer = setInterval(() => void host.refreshHistory(), POLL_MS)
    if (!want && pollTimer) {
      clearInterval(pollTimer)
      pollTimer = undefined
    }
  }

  return {
    get owner() {
      return owner
    },
    /** The owner as the history says (no line: the history shows the conversation as it is). */
    set owner(o: Owner) {
      owner = o
    },
    setOwner,
    sync,
    typing,
    /** A new chat: no stream, no failures remembered. */
    reset(): void {
      owner = 'bot'
      streamFailed = false
      stream?.close()
      stream = null
      host.typingEl.hidden = true
    },
    /** The visitor typed: the team sees it only while a person has (or will have) the conversation. */
    input(hasText: boolean): void {
      if (owner === 'queue' || owner === 'human') typing.input(hasText)
    },
  }
}

export type LiveChat = ReturnType<typeof createLiveChat>
