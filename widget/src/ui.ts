import { type Attached, CLIP, createAttachments } from './attachments.js'
import { ApiError, createClient, type History, type StreamEvent, type WidgetConfig } from './api.js'
import { type Availability, availabilityView } from './availability.js'
import { confirmCard, isConfirmFrame } from './confirm-card.js'
import { h, icon } from './dom.js'
import { FALLBACK_LABELS, fill, type LinkLabels, type UiLabels } from './labels.js'
import { liveLabels } from './live.js'
import { createLiveChat } from './live-chat.js'
import { renderMarkdown } from './markdown.js'
import { createStore, type Source, type StoredSession } from './store.js'
import { CSS as STYLES } from './styles.js'

export interface WidgetOptions {
  botId: string
  apiBase: string
  position?: string
  color?: string
  locale?: string
  mode?: string
  target?: string
}

export interface WidgetInstance {
  open(): void
  close(): void
  identify(token: string | null): void
  destroy(): void
}

const MAX_CHARS = 1000
const CHAT_ICON = 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2zm3 6h10V8H7zm0 4h7v-2H7z'
const CLOSE_ICON = 'M18.3 5.7 12 12l6.3 6.3-1.4 1.4L10.6 13.4 4.3 19.7 2.9 18.3 9.2 12 2.9 5.7l1.4-1.4 6.3 6.3 6.3-6.3z'
const SEND_ICON = 'M2 21 23 12 2 3v7l15 2-15 2z'
const PERSON_ICON = 'M12 12a4.5 4.5 0 1 0 0-9 4.5 4.5 0 0 0 0 9zm0 2c-4.4 0-8 2.2-8 5v2h16v-2c0-2.8-3.6-5-8-5z'
/** The languages every fixed text of the widget exists in (src/modules/shared/messages, #40). */
const CATALOGUE = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'ru']

/** The user id claim of an identity token, read without verifying (only to notice a change of visitor). */
function tokenUid(token: string | null): string | undefined {
  if (!token) return undefined
  try {
    const body = token.slice(0, token.lastIndexOf('.')).replace(/-/g, '+').replace(/_/g, '/')
    const uid = JSON.parse(atob(body)).user_id
    return uid == null ? undefined : String(uid)
  } catch {
    return undefined
  }
}

/** A language's name in itself ("Deutsch"), for the language menu; the code when the browser does not know it. */
function languageName(code: string): string {
  try {
    const name = new Intl.DisplayNames([code], { type: 'language' }).of(code) ?? code
    return name.charAt(0).toLocaleUpperCase(code) + name.slice(1)
  } catch {
    return code
  }
}

/**
 * The language the widget starts in before the conversation has one (#52): the site's explicit data-locale, else
 * the visitor's browser language when the widget's texts exist in it (a German browser on an English page is
 * greeted in German), else the page's language.
 */
function pageLocale(opt?: string): string {
  if (opt) return opt.slice(0, 35)
  const wanted = navigator.languages?.length ? navigator.languages : [navigator.language]
  const browser = wanted.find((l) => l && CATALOGUE.includes(l.slice(0, 2).toLowerCase()))
  return (browser || document.documentElement.lang || 'en').slice(0, 35)
}

interface AssistantView {
  el: HTMLElement
  stage(text: string | null): void
  stream(text: string): void
  finish(text: string, sources: Source[] | undefined): void
  fail(text: string, retry?: () => void): void
}

export function mountWidget(opts: WidgetOptions): WidgetInstance {
  const target = opts.mode === 'inline' && opts.target ? document.querySelector(opts.target) : null
  if (opts.mode === 'inline' && !target) console.warn('[SupportChat] data-target not found; showing the chat bubble instead')
  const inline = Boolean(target)
  const client = createClient(opts.apiBase, opts.botId)
  const store = createStore(opts.botId)
  /** The language the visitor chose in the header's menu (#40); sent with each message, so the session keeps it. */
  let chosen: string | null = store.loadLanguage()
  let session: StoredSession | null = store.load()
  /**
   * The widget's texts' language: the chosen one, else the session's once known (kept with the session, so a
   * reload stays in it, #52), else the browser's or the page's.
   */
  let locale = chosen ?? session?.lang ?? pageLocale(opts.locale)

  let ui: UiLabels = FALLBACK_LABELS.ui
  let linkLabels: LinkLabels = FALLBACK_LABELS.link
  let config: WidgetConfig | null = null
  let sessionPromise: Promise<string> | null = null
  let identityToken: string | null = null
  let isOpen = inline
  let busy = false
  let ended = false
  let ticket: string | null = null
  let lastReadSent: string | null = null
  let lastHistoryKey = ''
  let lx = liveLabels(undefined)
  let inflight: AbortController | null = null
  let destroyed = false
  let dialogReturn: HTMLElement | null = null

  // --- DOM -----------------------------------------------------------------------------------------
  const host = document.createElement('div')
  host.setAttribute('data-support-chat', opts.botId)
  // Hidden (inline style: the page's CSS cannot undo it) until the bot's configuration has loaded.
  host.style.cssText = inline ? 'display:none;height:100%' : 'display:none'
  const root = host.attachShadow({ mode: 'open' })
  const wrap = h('div', { class: `scb ${inline ? 'inline' : 'floating'} ${opts.position === 'left' ? 'left' : 'right'}` })
  if (opts.color && window.CSS?.supports?.('color', opts.color)) wrap.style.setProperty('--a', opts.color)

  const launcher = h('button', { class: 'launcher', type: 'button', 'aria-expanded': 'false', 'aria-controls': 'scb-panel' })
  launcher.append(icon(CHAT_ICON))
  const title = h('h2', { id: 'scb-title' })
  // on a phone the header keeps the bot's name: the button is its icon, its words for screen readers (#52)
  const humanLabel = h('span', { class: 'hlabel' })
  const humanBtn = h('button', { class: 'hbtn human', type: 'button' }, icon(PERSON_ICON), humanLabel)
  const langSelect = h('select', { class: 'lang', id: 'scb-lang' })
  const langLabel = h('label', { class: 'sr', for: 'scb-lang' })
  langSelect.hidden = true
  const closeBtn = h('button', { class: 'hbtn x', type: 'button' })
  closeBtn.append(icon(CLOSE_ICON))
  closeBtn.querySelector('svg')!.setAttribute('style', 'width:16px;height:16px;fill:currentColor')
  const log = h('div', { class: 'log', role: 'log', 'aria-live': 'off', tabindex: '0' })
  const live = h('div', { class: 'sr', role: 'status', 'aria-live': 'polite' })

  const escNote = h('textarea', { maxlength: '2000', rows: '2' })
  const escPrompt = h('p')
  const escConfirm = h('button', { class: 'btn', type: 'button' })
  const escCancel = h('button', { class: 'btn ghost', type: 'button' })
  const avail = availabilityView()
  const escBox = h('div', { class: 'box escalate', hidden: '' }, escPrompt, ...avail.offlineFields, escNote, h('div', { class: 'row' }, escCancel, escConfirm))

  const endedText = h('p')
  const newChatBtn = h('button', { class: 'btn', type: 'button' })
  const endedBox = h('div', { class: 'box ended', hidden: '' }, endedText, h('div', { class: 'row' }, newChatBtn))

  const input = h('textarea', { rows: '1', maxlength: String(MAX_CHARS), enterkeyhint: 'send' })
  const sendBtn = h('button', { class: 'send', type: 'submit' })
  sendBtn.append(icon(SEND_ICON))
  // the files sent with the next message (attachments.ts): uploaded as they are picked, pasted or dropped
  const files = createAttachments({
    labels: () => ui,
    upload: async (file) => client.upload(await ensureSession(), file),
    say: (text) => {
      addSystem(text)
      announce(text)
    },
    changed: () => updateControls(),
    maxMb: 10,
  })
  const composer = h('form', { class: 'composer' }, files.picker, files.button, input, sendBtn)
  const foot = h('div', { class: 'foot' })
  const typingEl = h('div', { class: 'system typing', role: 'status', 'aria-live': 'polite', hidden: '' })

  const dlgTitle = h('h3', { id: 'scb-dlg-title' })
  const dlgBody = h('p', { id: 'scb-dlg-body' })
  const dlgCancel = h('button', { class: 'btn ghost', type: 'button' })
  const dlgOpen = h('button', { class: 'btn', type: 'button' })
  const dialog = h(
    'div',
    { class: 'dialog', role: 'alertdialog', 'aria-modal': 'true', 'aria-labelledby': 'scb-dlg-title', 'aria-describedby': 'scb-dlg-body' },
    dlgTitle,
    dlgBody,
    h('div', { class: 'row' }, dlgCancel, dlgOpen),
  )
  const veil = h('div', { class: 'veil', hidden: '' }, dialog)

  const header = h('header', {}, title, langLabel, langSelect, humanBtn, !inline && closeBtn)
  const panel = h(
    'section',
    { class: 'panel', id: 'scb-panel', role: 'dialog', 'aria-labelledby': 'scb-title' },
    header,
    avail.line,
    log,
    typingEl,
    escBox,
    endedBox,
    files.tray,
    composer,
    foot,
    live,
    veil,
  )
  if (!inline) panel.hidden = true
  wrap.append(...(inline ? [panel] : [launcher, panel]))
  root.append(h('style', {}, STYLES), wrap)
  ;(target ?? document.body).appendChild(host)

  function applyLabels(): void {
    launcher.setAttribute('aria-label', isOpen ? ui.close_chat : ui.open_chat)
    launcher.querySelector('path')!.setAttribute('d', isOpen ? CLOSE_ICON : CHAT_ICON)
    title.textContent = config?.name || ui.assistant
    humanLabel.textContent = ui.talk_to_human
    humanBtn.title = ui.talk_to_human
    langLabel.textContent = ui.language
    closeBtn.setAttribute('aria-label', ui.close_chat)
    input.placeholder = ui.placeholder
    input.setAttribute('aria-label', ui.placeholder)
    sendBtn.setAttribute('aria-label', ui.send)
    files.labels()
    escPrompt.textContent = ui.escalate_prompt
    escConfirm.textContent = avail.offline ? ui.offline_send : ui.escalate_confirm
    escNote.placeholder = avail.offline ? ui.offline_note_label : ui.escalate_note_placeholder
    escNote.setAttribute('aria-label', escNote.placeholder)
    escPrompt.hidden = avail.offline
    escCancel.textContent = ui.cancel
    // the answer that settled the language was shown before its texts came: its "Sources" line follows them too
    log.querySelectorAll('.sources > span').forEach((label) => {
      label.textContent = ui.sources
    })
    endedText.textContent = ui.chat_ended
    newChatBtn.textContent = ui.new_chat
    foot.textContent = ui.powered_by
    dlgTitle.textContent = linkLabels.title
    dlgCancel.textContent = linkLabels.cancel_label
    dlgOpen.textContent = linkLabels.continue_label
  }
  applyLabels()

  // --- messages ------------------------------------------------------------------------------------
  const nearBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 80
  const scrollDown = (force = false) => {
    if (force || nearBottom()) log.scrollTop = log.scrollHeight
  }
  const announce = (text: string) => {
    live.textContent = ''
    setTimeout(() => (live.textContent = text.slice(0, 600)), 50)
  }

  function addMessage(role: 'user' | 'assistant' | 'operator', content: string, id?: string, author?: string | null): HTMLElement {
    const bubble = h('div', { class: 'bubble' })
    if (role === 'user') bubble.textContent = content
    else bubble.append(renderMarkdown(content))
    const el = h('div', { class: `msg ${role === 'user' ? 'user' : role === 'operator' ? 'assistant operator' : 'assistant'}` })
    const who = author ? fill(lx.operator_suffix, { name: author }) : ui.operator
    if (role === 'operator') el.append(h('div', { class: 'who', 'aria-hidden': 'true' }, who))
    el.append(h('span', { class: 'sr' }, `${role === 'user' ? ui.you : role === 'operator' ? who : ui.assistant}: `), bubble)
    if (id) el.dataset.id = id
    log.append(el)
    scrollDown(true)
    return el
  }

  function addSystem(text: string): HTMLElement {
    const el = h('div', { class: 'system' }, text)
    log.append(el)
    scrollDown(true)
    return el
  }

  function addSources(el: HTMLElement, sources: Source[] | undefined): void {
    el.querySelector('.sources')?.remove()
    if (!sources?.length) return
    const list = h('ul')
    for (const s of sources.slice(0, 8)) {
      const a = renderMarkdown(`[${(s.title || s.url).replace(/[[\]\\]/g, '')}](${s.url})`).querySelector('a')
      list.append(h('li', {}, a ?? (s.title || '')))
    }
    el.append(h('div', { class: 'sources' }, h('span', {}, ui.sources), list))
  }

  function greet(): void {
    if (!log.childElementCount) addMessage('assistant', ui.greeting)
  }

  function assistantView(): AssistantView {
    const el = addMessage('assistant', '')
    const bubble = el.querySelector('.bubble') as HTMLElement
    const stageEl = h('div', { class: 'stage' }, h('span', { class: 'dots', 'aria-hidden': 'true' }, h('i'), h('i'), h('i')), h('span'))
    el.append(stageEl)
    bubble.hidden = true
    let text = ''
    let scheduled = false
    let finished = false
    const paint = () => {
      scheduled = false
      if (finished) return
      bubble.replaceChildren(renderMarkdown(text))
      bubble.hidden = !text
      scrollDown()
    }
    return {
      el,
      stage(label) {
        stageEl.hidden = !label
        ;(stageEl.lastChild as HTMLElement).textContent = label ?? ''
      },
      stream(chunk) {
        text += chunk
        if (!scheduled) {
          scheduled = true
          // One paint per frame however fast chunks arrive; a hidden tab catches up on `finish`.
          requestAnimationFrame(paint)
        }
      },
      finish(full, sources) {
        finished = true
        stageEl.remove()
        bubble.hidden = false
        bubble.replaceChildren(renderMarkdown(full || text))
        addSources(el, sources)
        scrollDown()
      },
      fail(message, retry) {
        finished = true
        stageEl.remove()
        bubble.hidden = false
        bubble.classList.add('err')
        bubble.replaceChildren(h('p', { role: 'alert' }, message))
        if (retry) {
          const b = h('button', { class: 'retry', type: 'button' }, ui.retry)
          b.addEventListener('click', retry)
          bubble.append(b)
        }
        scrollDown(true)
      },
    }
  }

  const stageLabel = (stage: string) => (stage === 'searching' ? ui.searching : stage === 'writing' ? ui.writing : ui.thinking)

  function errorText(err: unknown): string {
    if (err instanceof ApiError) {
      if (err.status === 429) return ui.error_rate_limited
      if (err.status === 0) return ui.error_offline
      if (err.code === 'message_too_long') return fill(ui.error_too_long, { max: MAX_CHARS })
    }
    return ui.error_generic
  }

  // --- state ---------------------------------------------------------------------------------------
  function setEnded(value: boolean): void {
    ended = value
    endedBox.hidden = !value
    // an open hand-off box keeps the composer hidden: a history refresh that lands after the visitor opened it
    // (on opening the panel, slow under load) showed both, the message box under the hand-off form
    composer.hidden = value || !escBox.hidden
    if (value) escBox.hidden = true
    updateControls()
  }

  function updateControls(): void {
    humanBtn.hidden = Boolean(ticket) || ended
    sendBtn.disabled = busy || (!input.value.trim() && !files.count())
    input.disabled = ended
  }

  function saveSession(): void {
    if (session) store.save(session)
  }

  function ensureSession(): Promise<string> {
    if (session) return Promise.resolve(session.id)
    sessionPromise ??= client
      .initSession(identityToken, locale)
      .then((r) => {
        session = { id: r.session_id, at: Date.now(), mode: r.mode, uid: tokenUid(identityToken), src: {} }
        saveSession()
        return r.session_id
      })
      .finally(() => (sessionPromise = null))
    return sessionPromise
  }

  function applyHistory(hist: History): void {
    const key = `${hist.messages.length}:${hist.messages[hist.messages.length - 1]?.id ?? ''}:${hist.chat_ended}:${hist.ticket_number ?? ''}`
    if (key === lastHistoryKey) return
    lastHistoryKey = key
    log.replaceChildren()
    greet()
    for (const m of hist.messages) {
      const el = addMessage(m.role === 'user' ? 'user' : m.from_operator ? 'operator' : 'assistant', m.content, m.id, m.author_name)
      addFiles(el, m.attachments)
      if (m.role === 'assistant') addSources(el, session?.src?.[m.id])
    }
    ticket = hist.ticket_number ?? null
    // one line for one hand-off: the bot's own words already name the ticket (issue 52)
    const named = ticket !== null && hist.messages.some((m) => m.role === 'assistant' && m.content.includes(ticket!))
    if (ticket && !named) addSystem(fill(ui.ticket_opened, { ticket }))
    const owner = hist.owner ?? (hist.chat_ended ? 'closed' : 'bot')
    liveChat.owner = owner
    if (owner === 'queue') addSystem(lx.waiting)
    // chat_ended is also true while a person has the conversation: only a closed one ends the chat
    setEnded(owner === 'closed')
    markRead()
    // the conversation has a language (#52): a reload shows the widget, its greeting too, in it
    if (hist.language && !chosen) keepSessionLanguage(hist.language, hist)
  }

  /** The session's language, kept with it; the texts switch to it, and the history is shown again in it. */
  function keepSessionLanguage(code: string, hist?: History): void {
    if (session && session.lang !== code) {
      session.lang = code
      saveSession()
    }
    if (code === config?.locale || code === locale) return
    void switchLanguage(code).then(() => {
      if (!hist || destroyed || locale !== code) return
      lastHistoryKey = ''
      applyHistory(hist)
    })
  }

  async function refreshHistory(): Promise<void> {
    if (!session || busy) return
    try {
      applyHistory(await client.history(session.id))
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) resetChat(false)
    }
  }

  /** Tells the service which message the visitor has seen: the newest assistant or operator message shown. */
  function markRead(): void {
    if (!session || !isOpen || document.hidden) return
    const items = log.querySelectorAll<HTMLElement>('.msg.assistant[data-id]')
    const last = items[items.length - 1]?.dataset.id
    if (!last || last === lastReadSent) return
    lastReadSent = last
    client.markRead(session.id, last).catch(() => {
      lastReadSent = null
    })
  }

  function resetChat(focus: boolean): void {
    inflight?.abort()
    session = null
    store.clear()
    ticket = null
    lastReadSent = null
    lastHistoryKey = ''
    liveChat.reset()
    log.replaceChildren()
    greet()
    escBox.hidden = true
    setEnded(false)
    if (focus) input.focus()
  }

  // --- live conversation (live-chat.ts) and the availability promise (availability.ts) -------------
  const liveChat = createLiveChat({
    client,
    log,
    typingEl,
    session: () => session,
    active: () => isOpen && !destroyed,
    hasTicket: () => Boolean(ticket),
    ui: () => ui,
    lx: () => lx,
    addMessage,
    addSystem,
    addFiles,
    announce,
    markRead,
    setEnded,
    refreshHistory,
    availability: showAvailability,
  })
  const syncPolling = () => liveChat.sync()

  function showAvailability(a: Availability | null | undefined): void {
    if (avail.update(a, ui, locale) && avail.line.textContent) announce(avail.line.textContent)
    applyLabels()
  }

  // --- sending -------------------------------------------------------------------------------------
  async function send(text: string): Promise<void> {
    text = text.trim()
    if ((!text && !files.count()) || busy || ended) return
    if ([...text].length > MAX_CHARS) {
      addSystem(fill(ui.error_too_long, { max: MAX_CHARS }))
      return
    }
    busy = true
    input.value = ''
    liveChat.typing.stop()
    autosize()
    updateControls()
    const sent = await files.take()
    if (!text && !sent.length) {
      busy = false
      updateControls()
      return
    }
    addFiles(addMessage('user', text), sent)
    await turn(
      text,
      true,
      sent.map((f) => f.id),
    )
  }

  /** The files under a message (the visitor's or a person's), each a download of the conversation's file. */
  function addFiles(el: HTMLElement, sent: Attached[] | undefined): void {
    if (!sent?.length) return
    // An image is shown small in the conversation (the visitor's own screenshot, a person's picture); any file is a
    // download under its name. The paperclip is drawn, not a character: a page's fonts may have no emoji.
    const link = (f: Attached) => {
      if (!session) return h('span', {}, icon(CLIP), f.name)
      const href = client.fileUrl(session.id, f.id)
      const thumb = f.kind === 'image' && h('img', { class: 'thumb', src: href, alt: '', loading: 'lazy', decoding: 'async' })
      return h('a', { href, download: f.name, target: '_blank', rel: 'noopener' }, thumb, icon(CLIP), f.name)
    }
    el.append(h('ul', { class: 'files' }, ...sent.map((f) => h('li', {}, link(f)))))
  }

  async function turn(text: string, mayRetrySession: boolean, attachmentIds: string[] = []): Promise<void> {
    busy = true
    updateControls()
    const view = assistantView()
    view.stage(ui.thinking)
    const abort = new AbortController()
    inflight = abort
    const retry = () => {
      if (busy) return
      view.el.remove()
      void turn(text, true, attachmentIds)
    }
    try {
      const sid = await ensureSession()
      await client.chat(sid, text, locale, (e: StreamEvent) => onFrame(e, view, retry), abort.signal, chosen, attachmentIds)
    } catch (err) {
      if ((err as Error).name === 'AbortError' || destroyed) return
      if (err instanceof ApiError && err.code === 'session_not_found' && mayRetrySession) {
        // The stored session is gone on the service: start a new one and ask again.
        session = null
        store.clear()
        view.el.remove()
        busy = false
        return turn(text, false, [])
      }
      if (err instanceof ApiError && err.code === 'session_closed') {
        view.el.remove()
        setEnded(true)
        return
      }
      view.fail(errorText(err), err instanceof ApiError && err.status !== 422 ? retry : undefined)
      announce(errorText(err))
    } finally {
      if (inflight === abort) inflight = null
      busy = false
      updateControls()
      syncPolling()
    }
  }

  function onFrame(e: StreamEvent, view: AssistantView, retry: () => void): void {
    if (e.type === 'delivered') {
      // a person has the conversation: the message is sent, no bot answer is coming
      view.el.remove()
      const mine = log.querySelectorAll<HTMLElement>('.msg.user:not([data-id])')
      const el = mine[mine.length - 1]
      if (el) {
        el.dataset.id = e.message_id
        el.classList.add('sent')
      }
      return
    }
    if (e.type === 'done' && e.owner && e.owner !== 'bot' && !e.text) {
      // taken over while the bot was writing: its partial answer was not kept
      view.el.remove()
      liveChat.setOwner(e.owner, null)
      saveSession()
      updateControls()
      return
    }
    if (e.type === 'status') view.stage(stageLabel(e.stage))
    else if (e.type === 'chunk') {
      view.stage(ui.writing)
      view.stream(e.text)
    } else if (e.type === 'done') {
      view.finish(e.text, e.sources)
      if (e.message_id) view.el.dataset.id = e.message_id
      if (session && e.message_id && e.sources?.length) {
        session.src = { ...session.src, [e.message_id]: e.sources }
      }
      saveSession()
      announce(e.text)
      if (e.ticket_number) {
        ticket = e.ticket_number
        // the answer that hands off already says the number: no second line saying the same
        if (!e.text.includes(ticket)) addSystem(fill(ui.ticket_opened, { ticket }))
      }
      if (e.owner) liveChat.setOwner(e.owner, null)
      else if (e.chat_ended) setEnded(true)
      updateControls()
      markRead()
      // the session's language is known now: the widget's own texts follow it (a visitor's choice stays)
      if (e.language && !chosen) keepSessionLanguage(e.language)
    } else if (e.type === 'error') {
      view.fail(e.code === 'rate_limited' ? ui.error_rate_limited : ui.error_generic, retry)
      announce(ui.error_generic)
    } else if (isConfirmFrame(e as { type?: unknown }) && session) {
      // A write action waits for the visitor's approval (confirm-card.ts).
      const card = confirmCard(e as never, {
        apiBase: opts.apiBase,
        botId: opts.botId,
        sessionId: session.id,
        labels: { confirm: ui.confirm, cancel: ui.cancel, failed: ui.error_generic, cancelled: ui.cancelled },
        say: (text) => addMessage('assistant', text),
        announce,
      })
      view.el.after(card)
      scrollDown(true)
      card.focus()
    }
  }

  /**
   * Hands the chat to the team. Nobody there (the offline form): the address is required, and it goes to the
   * team as the visitor's next message, which the hand-off keeps as the ticket's e-mail (no route takes an
   * e-mail field; a note would be redacted).
   */
  async function escalate(): Promise<void> {
    const email = avail.offline ? avail.validEmail(ui) : ''
    if (email === null) return
    escConfirm.disabled = true
    try {
      const sid = await ensureSession()
      const r = await client.escalate(sid, escNote.value.trim())
      if (email) await client.chat(sid, email, locale, () => {}, new AbortController().signal)
      escBox.hidden = true
      composer.hidden = ended
      escNote.value = ''
      avail.clear()
      ticket = r.ticket_number
      const note = addSystem(fill(ui.ticket_opened, { ticket }))
      updateControls()
      saveSession()
      await refreshHistory()
      // after the history: it redraws the log
      announce((email ? addSystem(fill(ui.offline_sent, { email })) : note).textContent ?? '')
      syncPolling()
      // Focus never stays on a control that was just hidden.
      ;(ended ? newChatBtn : input).focus()
    } catch (err) {
      addSystem(errorText(err)).classList.add('err')
    } finally {
      escConfirm.disabled = false
    }
  }

  // --- link safety ---------------------------------------------------------------------------------
  function linkIsSafe(url: URL): boolean {
    if (!config?.link_safety_enabled || url.protocol === 'mailto:' || url.protocol === 'tel:') return true
    const hn = url.hostname.toLowerCase()
    const domains = [...config.allowed_domains, location.hostname.toLowerCase()]
    return domains.some((d) => d && (hn === d || hn.endsWith(`.${d}`)))
  }

  function openDialog(url: URL, from: HTMLElement): void {
    dialogReturn = from
    dlgBody.textContent = fill(linkLabels.body, { hostname: url.hostname })
    dlgOpen.onclick = () => {
      closeDialog()
      window.open(url.href, '_blank', 'noopener,noreferrer')
    }
    veil.hidden = false
    dlgCancel.focus()
  }

  function closeDialog(): void {
    if (veil.hidden) return
    veil.hidden = true
    dialogReturn?.focus()
    dialogReturn = null
  }

  // --- open / close --------------------------------------------------------------------------------
  function open(): void {
    if (destroyed || inline || isOpen) return
    isOpen = true
    panel.hidden = false
    wrap.classList.add('open')
    launcher.setAttribute('aria-expanded', 'true')
    applyLabels()
    scrollDown(true)
    input.focus()
    markRead()
    void refreshHistory()
    syncPolling()
    // the promise is kept fresh: who is there may have changed since the page loaded
    if (config)
      client.config(locale).then(
        (c) => showAvailability(c.availability),
        () => {},
      )
  }

  function close(): void {
    if (destroyed || inline || !isOpen) return
    isOpen = false
    closeDialog()
    panel.hidden = true
    wrap.classList.remove('open')
    launcher.setAttribute('aria-expanded', 'false')
    applyLabels()
    syncPolling()
    launcher.focus()
  }

  function autosize(): void {
    input.style.height = 'auto'
    input.style.height = `${Math.min(input.scrollHeight + 2, 120)}px`
  }

  // --- events --------------------------------------------------------------------------------------
  launcher.addEventListener('click', () => (isOpen ? close() : open()))
  closeBtn.addEventListener('click', close)
  composer.addEventListener('submit', (e) => {
    e.preventDefault()
    void send(input.value)
  })
  input.addEventListener('input', () => {
    autosize()
    updateControls()
    liveChat.input(Boolean(input.value.trim()))
  })
  // a pasted screenshot or a dropped file joins the tray
  input.addEventListener('paste', (e) => {
    if (!ended && files.fromTransfer(e.clipboardData)) e.preventDefault()
  })
  panel.addEventListener('dragover', (e) => {
    if (!ended && e.dataTransfer?.types.includes('Files')) e.preventDefault()
  })
  panel.addEventListener('drop', (e) => {
    if (!ended && files.fromTransfer(e.dataTransfer)) e.preventDefault()
  })
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault()
      void send(input.value)
    }
  })
  humanBtn.addEventListener('click', () => {
    escBox.hidden = false
    composer.hidden = true
    ;(avail.offline ? avail.email : escNote).focus()
  })
  escCancel.addEventListener('click', () => {
    escBox.hidden = true
    composer.hidden = ended
    humanBtn.focus()
  })
  escConfirm.addEventListener('click', () => void escalate())
  // Enter in the e-mail field sends the offline form, as in any one-line form
  avail.email.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.isComposing) {
      e.preventDefault()
      void escalate()
    }
  })
  newChatBtn.addEventListener('click', () => resetChat(true))
  dlgCancel.addEventListener('click', closeDialog)
  log.addEventListener('click', (e) => {
    const a = (e.target as Element).closest?.('a')
    if (!a) return
    let url: URL
    try {
      url = new URL(a.getAttribute('href') ?? '')
    } catch {
      e.preventDefault()
      return
    }
    if (!linkIsSafe(url)) {
      e.preventDefault()
      openDialog(url, a)
    }
  })
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      if (!veil.hidden) closeDialog()
      else if (!escBox.hidden) escCancel.click()
      else close()
      e.stopPropagation()
    } else if (e.key === 'Tab' && !veil.hidden) {
      // Keep focus inside the dialog while it is open.
      e.preventDefault()
      ;(root.activeElement === dlgCancel ? dlgOpen : dlgCancel).focus()
    }
  })
  const onVisible = () => markRead()
  document.addEventListener('visibilitychange', onVisible)

  // --- language -----------------------------------------------------------------------------------
  /** The service's texts in `c.locale`, and the language menu (shown when there is a choice). */
  function takeConfig(c: WidgetConfig): void {
    config = c
    ui = { ...FALLBACK_LABELS.ui, ...c.labels }
    lx = liveLabels(c.labels)
    linkLabels = { ...FALLBACK_LABELS.link, ...c.link_safety_labels }
    avail.update(c.availability, ui, locale)
    const codes = c.languages ?? []
    langSelect.replaceChildren(...codes.map((code) => h('option', { value: code, lang: code }, languageName(code))))
    langSelect.value = codes.includes(c.locale) ? c.locale : (codes[0] ?? '')
    langSelect.hidden = codes.length < 2
    // with the language menu beside it the header has no room for the button's words: its icon, words for screen readers (#52)
    header.classList.toggle('crowded', codes.length >= 2)
    applyLabels()
  }

  /** The widget's texts in another language; the greeting too while nothing else was said. */
  async function switchLanguage(code: string): Promise<void> {
    locale = code
    let c: WidgetConfig
    try {
      c = await client.config(code)
    } catch {
      return
    }
    if (destroyed || locale !== code) return
    const onlyGreeting = log.childElementCount === 1 && log.firstElementChild?.querySelector('.bubble')?.textContent === ui.greeting
    // the widget's own greeting at the top of a conversation whose first answer settled another language: the
    // greeting is the widget's text, not the bot's, and follows (#52: "Hi! How can I help" above a German answer)
    const greeting = log.firstElementChild?.querySelector('.bubble')
    const greeted = greeting?.textContent === ui.greeting ? greeting : null
    takeConfig(c)
    if (onlyGreeting) {
      log.replaceChildren()
      greet()
    } else if (greeted) greeted.textContent = ui.greeting
  }

  langSelect.addEventListener('change', () => {
    chosen = langSelect.value
    store.saveLanguage(chosen)
    void switchLanguage(chosen)
  })

  // --- boot ----------------------------------------------------------------------------------------
  void (async () => {
    try {
      config = await client.config(locale)
    } catch (err) {
      console.warn('[SupportChat] the chat is unavailable for this page', err instanceof ApiError ? err.status : '')
      return
    }
    if (destroyed) return
    takeConfig(config)
    host.style.display = inline ? 'block' : ''
    greet()
    updateControls()
    if (session) await refreshHistory()
    syncPolling()
  })()

  return {
    open,
    close,
    identify(token) {
      identityToken = typeof token === 'string' && token ? token : null
      if (session && session.uid !== tokenUid(identityToken)) resetChat(false)
    },
    destroy() {
      destroyed = true
      inflight?.abort()
      syncPolling()
      document.removeEventListener('visibilitychange', onVisible)
      host.remove()
    },
  }
}
