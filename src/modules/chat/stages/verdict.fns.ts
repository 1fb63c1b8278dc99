import { NOT_IN_SOURCES } from './07-prompt.js'

/**
 * The answer model's verdict, read from the start of its stream: a reply that begins with NOT_IN_SOURCES
 * (after blanks, quotes or markdown emphasis a model may wrap it in; in any case, with spaces or hyphens for its
 * underscores) says the sources do not hold the answer;
 * any other first characters make it an answer. Tokens are held back only while the reply could still be the
 * marker, so an answer's first token goes out as soon as it differs ("To ..." at once, "No, ..." after "No,").
 */
export type VerdictState = 'pending' | 'answer' | 'not_covered'

const WRAP = /^[\s*_`"'>]*/

export function readVerdict(text: string): VerdictState {
  // a smaller model may change the marker's case or write its underscores as spaces ("Not in sources")
  const rest = text.replace(WRAP, '').toUpperCase().replace(/[ -]/g, '_')
  if (rest.startsWith(NOT_IN_SOURCES)) return 'not_covered'
  if (rest.length === 0 || NOT_IN_SOURCES.startsWith(rest)) return 'pending'
  return 'answer'
}

/** The longest end of `text` that is a beginning of the marker (it may be completed by the next token). */
function markerStart(text: string): number {
  for (let n = Math.min(NOT_IN_SOURCES.length - 1, text.length); n > 0; n--) if (NOT_IN_SOURCES.startsWith(text.slice(-n))) return n
  return 0
}

/**
 * A stream filter: `push` returns what may be shown now ('' while held), `state` the verdict so far. A marker
 * written later in the reply ("I could not find this. NOT_IN_SOURCES", as some models do) is never shown; `late`
 * says it came, and the caller decides (an answer that cites nothing is then no answer).
 */
export function createVerdictGate() {
  let held = ''
  let state: VerdictState = 'pending'
  let late = false
  // after the verdict: a possible beginning of a late marker, held until the next token tells
  let tail = ''
  const pass = (delta: string): string => {
    let text = tail + delta
    tail = ''
    if (text.includes(NOT_IN_SOURCES)) {
      late = true
      text = text.split(NOT_IN_SOURCES).join('')
    }
    const keep = markerStart(text)
    tail = text.slice(text.length - keep)
    return text.slice(0, text.length - keep)
  }
  return {
    get state(): VerdictState {
      return state
    },
    /** The marker came after the reply had started as an answer. */
    get late(): boolean {
      return late
    },
    push(delta: string): string {
      if (state === 'answer') return pass(delta)
      if (state === 'not_covered') return ''
      held += delta
      state = readVerdict(held)
      if (state !== 'answer') return ''
      const out = held
      held = ''
      return pass(out)
    },
    /** The end of the stream: a reply that never left 'pending' (empty, or only a beginning of the marker) is no answer. */
    end(): VerdictState {
      if (state === 'pending') state = 'not_covered'
      held = ''
      return state
    },
    /** What is still held at the end of an answer (a beginning of the marker that was not one). */
    flush(): string {
      const out = state === 'answer' ? tail : ''
      tail = ''
      return out
    },
  }
}
