import { parseHTML } from 'linkedom'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { labelsFor, SUPPORTED_LOCALES } from '../src/modules/widget/widget.i18n.js'
import { confirmCard } from '../widget/src/confirm-card.js'

/** The widget's confirmation card speaks the visitor's language, as the rest of the widget does. */
const frame = { type: 'confirm' as const, call_id: 'c-1', action: 'cancel_order', summary: 'Cancel order 55555', arguments: { order_number: '55555' } }

function mount(lang: string) {
  const { document } = parseHTML('<!doctype html><html><body></body></html>')
  vi.stubGlobal('document', document)
  const said: string[] = []
  // as widget/src/ui.ts calls it: the service's texts in the visitor's language (/widget/config labels)
  const ui = labelsFor(lang).ui
  const card = confirmCard(frame, {
    apiBase: 'https://api.example',
    botId: 'b',
    sessionId: 's',
    labels: { confirm: ui.confirm, cancel: ui.cancel, failed: ui.error_generic, cancelled: ui.cancelled },
    say: (t) => said.push(t),
    announce: () => {},
  })
  const buttons = Array.from(card.querySelectorAll('button'), (b) => b.textContent)
  return { card, buttons, said }
}

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('confirmation card texts', () => {
  it('has its texts in every language of the catalogue, translated', () => {
    for (const l of SUPPORTED_LOCALES) {
      const ui = labelsFor(l).ui
      expect(ui.confirm.trim(), l).not.toBe('')
      expect(ui.cancelled.trim(), l).not.toBe('')
      if (l !== 'en') expect(ui.confirm, l).not.toBe('Confirm')
    }
  })

  it('shows the buttons in the visitor’s language and says a cancel in it', async () => {
    const de = mount('de')
    expect(de.buttons).toEqual(['Abbrechen', 'Bestätigen'])
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ status: 'cancelled' }), { status: 200 }))
    ;(de.card.querySelectorAll('button')[0] as HTMLButtonElement).click()
    await vi.waitFor(() => expect(de.said).toEqual(['Abgebrochen.']))
    expect(mount('fr-CA').buttons).toEqual(['Annuler', 'Confirmer'])
    expect(mount('nl').buttons).toEqual(['Annuleren', 'Bevestigen'])
    // an unknown language falls back to English
    expect(mount('xx').buttons).toEqual(['Cancel', 'Confirm'])
  })
})
