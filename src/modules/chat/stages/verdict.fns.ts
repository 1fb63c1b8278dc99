import { NOT_IN_SOURCES } from './07-prompt.js'

/**
 * The answer model's verdict, read from the start of its stream: a reply that begins with NOT_IN_SOURCES
 * (after blanks, quotes or markdown emphasis a model may wrap it in) says the sources do not hold the answer;
 * any other first characters make it an answer. Tokens are held back only while the reply could still be the
 * marker, so an answer's first token goes out as soon as it differs ("To ..." at once, "No, ..." after "No,").
 */
export type VerdictState = 'pending' | 'answer' | 'not_covered'

const WRAP = /^[\s*_`"'>]*/

export function readVerdict(text: string): VerdictState {
  const rest = text.replace(WRAP, '')
  if (rest.startsWith(NOT_IN_SOURCES)) return 'not_covered'
  if (rest.length === 0 || NOT_IN_SOURCES.startsWith(rest)) return 'pending'
  return 'answer'
}

/** A stream filter: `push` returns what may be shown now ('' while held), `state` the verdict so far. */
export function createVerdictGate() {
  let held = ''
  let state: VerdictState = 'pending'
  return {
    get state(): VerdictState {
      return state
    },
    push(delta: string): string {
      if (state === 'answer') return delta
      if (state === 'not_covered') return ''
      held += delta
      state = readVerdict(held)
      if (state !== 'answer') return ''
      const out = held
      held = ''
      return out
    },
    /** The end of the stream: a reply that never left 'pending' (empty, or only a beginning of the marker) is no answer. */
    end(): VerdictState {
      if (state === 'pending') state = 'not_covered'
      held = ''
      return state
    },
  }
}
