import { describe, expect, it } from 'vitest'
import { createVerdictGate, readVerdict } from './verdict.fns.js'
import { uncitedNoAnswer } from './08-generate.js'

const run = (pieces: string[]) => {
  const g = createVerdictGate()
  const shown = pieces.map((p) => g.push(p))
  return { shown, state: g.end() }
}

describe('the answer model verdict', () => {
  it('reads the marker at the start, wrapped or not', () => {
    expect(readVerdict('NOT_IN_SOURCES')).toBe('not_covered')
    expect(readVerdict('**NOT_IN_SOURCES**')).toBe('not_covered')
    expect(readVerdict(' `NOT_IN_SOURCES`\n')).toBe('not_covered')
    expect(readVerdict('NOT_IN')).toBe('pending')
    expect(readVerdict('')).toBe('pending')
    expect(readVerdict('No, refunds')).toBe('answer')
    expect(readVerdict('To remove')).toBe('answer')
    expect(readVerdict('Not in sources.')).toBe('not_covered')
    expect(readVerdict('not_in_sources')).toBe('not_covered')
    expect(readVerdict('Not sure')).toBe('answer')
    expect(readVerdict('Not in the')).toBe('answer')
    expect(readVerdict('Note')).toBe('answer')
  })

  it('holds tokens only while the reply could still be the marker', () => {
    expect(run(['To ', 'remove ', 'it [1]'])).toEqual({ shown: ['To ', 'remove ', 'it [1]'], state: 'answer' })
    expect(run(['N', 'o, ', 'refunds'])).toEqual({ shown: ['', 'No, ', 'refunds'], state: 'answer' })
    expect(run(['NOT_', 'IN_', 'SOURCES'])).toEqual({ shown: ['', '', ''], state: 'not_covered' })
    // nothing after the marker is shown either
    expect(run(['NOT_IN_SOURCES', ' sorry'])).toEqual({ shown: ['', ''], state: 'not_covered' })
  })

  it('never shows a marker written later in the reply, and says it came', () => {
    const g = createVerdictGate()
    const shown = ['I could not ', 'find this. NOT_', 'IN_SOURCES', '\n'].map((p) => g.push(p))
    expect(g.end()).toBe('answer')
    expect(shown.join('') + g.flush()).toBe('I could not find this. \n')
    expect(g.late).toBe(true)
    // a beginning of the marker that turns out to be other text is shown, only later
    const h = createVerdictGate()
    const out = ['Use NOT', '_NULL here [1]'].map((p) => h.push(p))
    h.end()
    expect(out).toEqual(['Use ', 'NOT_NULL here [1]'])
    expect(h.flush()).toBe('')
    expect(h.late).toBe(false)
    const e = createVerdictGate()
    expect(e.push('Done [1]. NOT')).toBe('Done [1]. ')
    e.end()
    expect(e.flush()).toBe('NOT')
  })

  it('takes an empty or cut-off marker as no answer', () => {
    expect(run([]).state).toBe('not_covered')
    expect(run(['NOT_I']).state).toBe('not_covered')
  })
})

describe('a reply that cites nothing', () => {
  const refunds = [
    { n: 1, documentId: 'd1', title: 'Refunds', url: null, text: 'Refunds are processed within 5 business days after we receive the returned item.' },
  ]
  it('is no answer when written in the sources language and sharing no words with them', () => {
    expect(uncitedNoAnswer("I'm sorry, but I couldn't find anything about that. Please reach out to our team.", [], refunds, false)).toBe(true)
  })
  it('is not judged by words when the visitor reads it in another language than the sources', () => {
    expect(uncitedNoAnswer('Rückerstattungen werden innerhalb von fünf Werktagen nach Eingang der Ware bearbeitet.', [], refunds, false)).toBe(false)
  })
  it('is an answer when it cites a source', () => {
    expect(uncitedNoAnswer('Within 5 business days.', refunds, refunds, false)).toBe(false)
  })
})
