import { h } from './dom.js'
import { fill, type UiLabels } from './labels.js'

/** `/widget/config` availability: someone answers now (and how fast, usually), or when the team is back. */
export interface Availability {
  online: boolean
  reply_eta_s: number | null
  next_open_at: string | null
}

/** A loose e-mail check (the service decides for good): something@something.tld, no spaces. */
export const looksLikeEmail = (s: string): boolean => /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,}$/.test(s.trim()) && s.trim().length <= 254

/** When the team is back, in the visitor's own time zone: the time alone today, else the weekday (and date past a week). */
export function backAt(iso: string, locale: string, now = new Date()): string {
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return ''
  const lang = safeLocale(locale)
  const time = new Intl.DateTimeFormat(lang, { hour: 'numeric', minute: '2-digit' }).format(at)
  if (at.toDateString() === now.toDateString()) return time
  const days = (at.getTime() - now.getTime()) / 86_400_000
  const day = new Intl.DateTimeFormat(lang, days < 6 ? { weekday: 'long' } : { weekday: 'long', day: 'numeric', month: 'long' }).format(at)
  return `${day} ${time}`
}

function safeLocale(locale: string): string {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([locale]).length ? locale : 'en'
  } catch {
    return 'en'
  }
}

/** The availability line the widget shows under its header; null when the service sent no availability. */
export function availabilityLine(a: Availability | null | undefined, ui: UiLabels, locale: string, now = new Date()): string | null {
  if (!a) return null
  if (a.online) return a.reply_eta_s == null ? ui.team_online : fill(ui.reply_eta, { n: Math.max(1, Math.round(a.reply_eta_s / 60)) })
  const when = a.next_open_at ? backAt(a.next_open_at, locale, now) : ''
  return when ? fill(ui.team_back, { when }) : ui.team_away
}

/**
 * The availability line under the header and the e-mail field of the offline form (inside the "talk to a
 * human" box). The line is plain text (a change is announced by the caller); the field is labelled and says
 * what is wrong through aria-invalid and an alert. It is optional: without it the team answers in the chat.
 */
export function availabilityView() {
  const line = h('p', { class: 'avail', id: 'scb-avail' })
  line.hidden = true
  const prompt = h('p', { class: 'offline-prompt', id: 'scb-offline-prompt' })
  const emailLabel = h('label', { for: 'scb-email' })
  const email = h('input', {
    id: 'scb-email',
    type: 'email',
    autocomplete: 'email',
    inputmode: 'email',
    maxlength: '254',
    'aria-describedby': 'scb-offline-prompt scb-email-error',
  })
  const error = h('p', { class: 'field-error', id: 'scb-email-error', role: 'alert' })
  const field = h('div', { class: 'field' }, emailLabel, email, error)
  let offline = false
  let last: Availability | null = null
  return {
    line,
    /** What goes into the escalate box when nobody is there (hidden otherwise). */
    offlineFields: [prompt, field] as HTMLElement[],
    email,
    get offline() {
      return offline
    },
    get current() {
      return last
    },
    /** Shows the line for `a`; returns true when the team went from online to offline or back (worth announcing). */
    update(a: Availability | null | undefined, ui: UiLabels, locale: string): boolean {
      const text = availabilityLine(a, ui, locale)
      line.textContent = text ?? ''
      line.hidden = !text
      const was = offline
      offline = Boolean(a && !a.online)
      last = a ?? null
      prompt.textContent = ui.offline_prompt
      emailLabel.textContent = ui.email_label
      for (const el of [prompt, field]) el.hidden = !offline
      return was !== offline && Boolean(a)
    },
    /** The address typed ('' when none: it is optional), or null after showing why it is not one. */
    validEmail(ui: UiLabels): string | null {
      const v = email.value.trim()
      if (!v || looksLikeEmail(v)) {
        error.textContent = ''
        email.removeAttribute('aria-invalid')
        return v
      }
      error.textContent = ui.email_invalid
      email.setAttribute('aria-invalid', 'true')
      email.focus()
      return null
    },
    clear() {
      email.value = ''
      error.textContent = ''
      email.removeAttribute('aria-invalid')
    },
  }
}
