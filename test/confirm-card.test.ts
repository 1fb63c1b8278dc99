import { parseHTML } from 'linkedom'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { labelsFor, SUPPORTED_LOCALES } from '../src/modules/widget/widget.i18n.js'
import { confirmCard } from '../widget/src/confirm-card.js'
import { CONFIRM_LOCALES, confirmTexts } from '../widget/src/confirm-labels.js'

/** The widget's confirmation card speaks the visitor's language, as the rest of the widget does. */
const frame = { type: 'confirm' as const, call_id: 'c-1', action: 'cancel_order', summary: 'Cancel order 55555', arguments: { order_number: '55555' } }

function mount(cancel: string, locale?: string) {
  const { document } = parseHTML('<!doctype html><html><body></body></html>')
  vi.stubGlobal('document', document)
  const said: string[] = []
  // as widget/src/ui.ts calls it: the service's cancel and error texts, English confirm / cancelled
  const card = confirmCard(frame, {
    apiBase: 'https://api.example',
    botId: 'b',
    sessionId: 's',
    labels: { confirm: 'Confirm', cancel, failed: 'error', cancelled: 'Cancelled.' },
    locale,
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
  it('has texts for every language of the widget, recognised by the service’s cancel label', () => {
    expect([...CONFIRM_LOCALES].sort()).toEqual([...SUPPORTED_LOCALES].sort())
    for (const l of SUPPORTED_LOCALES) {
      const byCancel = confirmTexts({ cancel: labelsFor(l).ui.cancel })
      expect(byCancel, l).toEqual(confirmTexts({ locale: l }))
      if (l !== 'en') expect(byCancel.confirm, l).not.toBe('Confirm')
    }
  })

  it('shows the buttons in the visitor’s language and says a cancel in it', async () => {
    const de = mount(labelsFor('de').ui.cancel)
    expect(de.buttons).toEqual(['Abbrechen', 'Bestätigen'])
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ status: 'cancelled' }), { status: 200 }))
    ;(de.card.querySelectorAll('button')[0] as HTMLButtonElement).click()
    await vi.waitFor(() => expect(de.said).toEqual(['Abgebrochen.']))
    expect(mount(labelsFor('fr').ui.cancel, 'fr-CA').buttons).toEqual(['Annuler', 'Confirmer'])
    expect(mount('Cancel').buttons).toEqual(['Cancel', 'Confirm'])
    // an unknown language falls back to English
    expect(mount('Cancel', 'xx').buttons).toEqual(['Cancel', 'Confirm'])
  })
})
