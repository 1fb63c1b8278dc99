import { describe, expect, it } from 'vitest'
import { availabilityLine, backAt, looksLikeEmail } from '../widget/src/availability.js'
import { FALLBACK_LABELS } from '../widget/src/labels.js'
import { labelsFor } from '../src/modules/widget/widget.i18n.js'

/** The widget's availability promise as text: what the visitor reads under the header. */
const ui = FALLBACK_LABELS.ui

describe('availability line', () => {
  it('online: the usual wait in whole minutes (at least 1), or a plain "online" before there is one', () => {
    expect(availabilityLine({ online: true, reply_eta_s: 250, next_open_at: null }, ui, 'en')).toBe('Usually replies in about 4 min')
    expect(availabilityLine({ online: true, reply_eta_s: 5, next_open_at: null }, ui, 'en')).toBe('Usually replies in about 1 min')
    expect(availabilityLine({ online: true, reply_eta_s: null, next_open_at: null }, ui, 'en')).toBe('Our team is online.')
  })

  it('offline: when the team is back, in the visitor zone; away without a next opening; nothing without availability', () => {
    const now = new Date(2026, 10, 26, 12, 0) // local time of the test process
    const later = new Date(2026, 10, 26, 15, 30)
    const line = availabilityLine({ online: false, reply_eta_s: 60, next_open_at: later.toISOString() }, ui, 'en', now)
    expect(line).toBe(`Our team is away. Back ${new Intl.DateTimeFormat('en', { hour: 'numeric', minute: '2-digit' }).format(later)} (your time).`)
    const monday = new Date(2026, 10, 30, 9, 0)
    expect(backAt(monday.toISOString(), 'en', now)).toMatch(/^Monday /)
    expect(availabilityLine({ online: false, reply_eta_s: null, next_open_at: null }, ui, 'en')).toBe('Our team is away right now.')
    expect(availabilityLine(undefined, ui, 'en')).toBeNull()
    // a locale the browser does not know falls back to English formats
    expect(backAt(monday.toISOString(), 'xx-invalid-!!', now)).toMatch(/Monday/)
  })

  it('every language has the availability texts, with their placeholders', () => {
    for (const lang of ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'ru']) {
      const l = labelsFor(lang).ui
      expect(l.reply_eta, lang).toContain('{n}')
      expect(l.team_back, lang).toContain('{when}')
      expect(l.offline_sent, lang).toContain('{email}')
      for (const k of ['team_online', 'team_away', 'offline_prompt', 'email_label', 'offline_note_label', 'offline_send', 'email_invalid'] as const) {
        expect(l[k], `${lang} ${k}`).toBeTruthy()
      }
    }
  })

  it('a loose e-mail check', () => {
    expect(looksLikeEmail('a.b@example.org')).toBe(true)
    expect(looksLikeEmail(' a@b.co ')).toBe(true)
    for (const bad of ['', 'a@b', 'a b@c.de', '@c.de', 'a@.de', `${'x'.repeat(250)}@c.de`]) expect(looksLikeEmail(bad), bad).toBe(false)
  })
})
