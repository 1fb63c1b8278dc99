import type { LlmMessage } from '../../llm/llm.js'
import { CUT } from '../../retrieval/passages.fns.js'
import type { Turn, TurnDeps } from '../turn.context.js'
import { buildAnswerPrompt, type PromptInput, type PromptSource } from './07-prompt.js'
import { answerOptions, generateAnswer, type Generation } from './08-generate.js'

/**
 * Stage 8, started early: the answer is requested while the guards (and the query embedding) are still
 * in flight, from the evidence at hand, and every token it sends is held back. The turn adopts it only
 * when the guards let the question through and the final evidence builds the very same prompt (same
 * sources in the same order, same caveat), so the visitor gets what the sequential path would give; or,
 * for an answer started from the lexical evidence while a new question's embedding is in flight, when its
 * sources already hold the final evidence's lead (holdsLead). Otherwise the request is aborted and nothing
 * of it (token, source or status) is shown.
 */

/**
 * How many of the final evidence's first sources an answer started from the lexical evidence must already hold
 * to be kept (see holdsLead). Measured with bench:chat (fake model at 300 ms a call, 30 new SciFact claims, same
 * run's bare call as the yardstick): requiring the first 3 restarted 24 of 29 early answers (first token 2.08 x one
 * call), the first 2 restarted 21 (2.09 x), the first one 12, 2 of the 11 answered (1.29 x). The lead source is
 * the one the answer leans on; the ones after it were mostly reordered or swapped by the vectors, not missing.
 */
export const LEAD_SOURCES = 1

/**
 * Whether an answer started from preliminary evidence (the lexical one before the query embedding was back, or the
 * question as asked before its translation landed) serves the final prompt. What would make its answer differ:
 * - another question, history, language, business or instructions: always a restart;
 * - not the caveat: it says the sources the model was given only partly match, and the early answer's caveat was
 *   decided on its own sources' scores (a lexical score no higher than the hybrid one for the same passage): with a
 *   caveat, it is only more careful than the final evidence asks; without one, its sources matched well, and a final
 *   caveat came from other passages packed in their place (bench:chat: 5 of 17 restarts were this, all handed off);
 * - the translated question (#40): a reference line for the model, not evidence; an answer started before the
 *   translation landed stays when its sources agree;
 * - the sources: kept when they hold the final evidence's first LEAD_SOURCES passages (in any order; a passage given
 *   whole in one prompt and as its best window under the budget in the other is the same passage), or when they hold a passage of the final lead's document
 *   and the final sources still hold the early answer's own lead passage (the one it leans on): the vectors then
 *   promoted a sibling passage of a document the answer already reads, over one they still rank as evidence.
 * Anything else (the vectors or the translation brought a document the answer lacks into the lead) restarts it.
 */
export function holdsLead(early: PromptInput, final: PromptInput, lead = LEAD_SOURCES): boolean {
  return restartReason(early, final, lead) === null
}

/**
 * An answer started on the evidence for a question as asked in another language than the knowledge's, before its
 * translation landed (#40), must hold the fused evidence's first 3 passages (or siblings of them, as above): that
 * evidence shares few words with the pages, and holding the lead alone kept answers without the passage the
 * translation found lower (bench:languages, answer passage in the prompt: German 86.7 -> 63.3 %, French 86.7 ->
 * 70.0 %); with the first 3, every language's figure is as before (86.7 / 86.7 / 83.3 %).
 */
export const TRANSLATED_LEAD_SOURCES = 3

export type RestartReason = 'prompt' | 'text' | 'lead'

/** Why an answer from preliminary evidence does not serve the final prompt (see holdsLead); null when it does. */
export function restartReason(early: PromptInput, final: PromptInput, lead = LEAD_SOURCES): RestartReason | null {
  const rest = (p: PromptInput) => promptKey({ ...p, sources: [], caveat: false, translatedQuestion: undefined })
  if (rest(early) !== rest(final)) return 'prompt'
  const heads = final.sources.slice(0, lead)
  if (heads.every((f) => early.sources.some((e) => samePassage(e, f)))) return null
  if (!heads.every((f) => early.sources.some((e) => e.title === f.title))) return 'lead'
  const own = early.sources[0]
  return own && final.sources.some((f) => samePassage(own, f)) ? null : 'text'
}

/** One passage in two prompts: the same title, and the same text or one a window of the other (packPassages). */
function samePassage(a: PromptSource, b: PromptSource): boolean {
  if (a.title !== b.title) return false
  if (a.text === b.text) return true
  const core = (t: string) => t.split(CUT).join('').trim()
  const [short, long] = [core(a.text), core(b.text)].sort((x, y) => x.length - y.length) as [string, string]
  return short.length > 0 && long.includes(short)
}

/** A prompt's identity: two turns that would send the same messages get the same answer. */
export const promptKey = (prompt: PromptInput | LlmMessage[]): string =>
  // an image counts by its attachment id: its data URL or bytes (megabytes) need not be copied into every key
  JSON.stringify(Array.isArray(prompt) ? prompt : buildAnswerPrompt(prompt), (k, v) => (k === 'url' || k === 'bytes' ? undefined : v))

export interface Speculation {
  readonly key: string
  /**
   * Takes the answer over: the held tokens go to `onDelta` at once, later ones as they come. null when
   * the request already failed (the caller then asks afresh, as the sequential path would).
   */
  adopt(onDelta: (delta: string) => void): Promise<Generation> | null
  /** Aborts the request unless it was adopted; returns the tokens it cost (estimated when cut off). */
  cancel(): number
}

export function speculate(deps: Pick<TurnDeps, 'llm' | 'config'>, t: Turn, prompt: PromptInput): Speculation {
  const abort = new AbortController()
  const signal = t.input.signal ? AbortSignal.any([t.input.signal, abort.signal]) : abort.signal
  const opts = answerOptions(deps.config, t.apiKey, prompt, signal)
  const key = promptKey(opts.messages)
  let held = ''
  let sink: ((delta: string) => void) | null = null
  let state: 'running' | 'failed' | 'adopted' | 'cancelled' = 'running'
  let spent: number | null = null
  const run = generateAnswer(deps.llm, {
    ...opts,
    onDelta: (d) => {
      if (sink) sink(d)
      else held += d
    },
  })
  run.then(
    (g) => {
      spent = g.tokens
    },
    () => {
      if (state === 'running') state = 'failed'
    },
  )
  return {
    key,
    adopt(onDelta) {
      if (state !== 'running') return null
      state = 'adopted'
      if (held) onDelta(held)
      held = ''
      sink = onDelta
      return run
    },
    cancel() {
      if (state === 'adopted' || state === 'cancelled') return 0
      const failed = state === 'failed'
      state = 'cancelled'
      abort.abort(new Error('speculative answer not used'))
      // the provider bills the prompt it read and what it wrote; a cut-off stream reports no usage
      if (spent !== null) return spent
      if (failed) return 0
      const chars = opts.messages.reduce((n, m) => n + m.content.length, 0) + held.length
      return Math.ceil(chars / 4)
    },
  }
}
