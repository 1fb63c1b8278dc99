import { LlmUnavailableError, type LlmClient, type LlmMessage, type ToolCall, type ToolDef } from '../../llm/llm.js'
import { detectLanguage } from '../../shared/language.js'
import type { Turn, TurnDeps } from '../turn.context.js'
import { buildAnswerPrompt, type PromptInput } from './07-prompt.js'
import { citedSources, persistQuestionOnly, type CitableSource } from './10-persist.js'
import type { Speculation } from './08-speculate.js'
import { generateWithTools, type PendingAction, type ToolGeneration } from './08-tools.js'
import { createStreamCleaner, type LinkPolicy } from './links.js'
import { canned } from './messages.js'
import { createVerdictGate } from './verdict.fns.js'

/**
 * Stage 8: the answer, streamed from CHAT_MODEL. Deltas go to `onDelta` the moment they arrive. A first
 * token that does not come in time, or a transient failure before any token, gets exactly one retry;
 * after a token was shown nothing is retried silently (the visitor would see the answer twice): the
 * caller gets a PartialAnswerError with what arrived. A stream that stalls (no token for as long as the
 * first-token limit) is cut.
 */

export interface GenerateInput {
  apiKey: string
  model: string
  messages: LlmMessage[]
  maxTokens: number
  firstTokenTimeoutMs: number
  totalTimeoutMs: number
  signal?: AbortSignal
  onDelta?: (delta: string) => void
  /** functions the model may call (stages/08-tools.ts) */
  tools?: ToolDef[]
}

export interface Generation {
  text: string
  tokens: number
  attempts: number
  firstTokenMs: number | null
  toolCalls?: ToolCall[]
}

export class PartialAnswerError extends Error {
  override name = 'PartialAnswerError'
  constructor(
    readonly partial: string,
    readonly reason: LlmUnavailableError,
    readonly attempts: number,
  ) {
    super('the answer stream broke off')
  }
}

/** Worth one more try: our timeout, the network, a broken reply, or the provider's 408/429/5xx. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof LlmUnavailableError)) return false
  if (err.kind === 'aborted') return false
  if (err.kind === 'http') return err.status === undefined || err.status === 408 || err.status === 429 || err.status >= 500
  return true
}

export async function generateAnswer(llm: Pick<LlmClient, 'chatStream'>, input: GenerateInput): Promise<Generation> {
  const start = performance.now()
  for (let attempt = 1; ; attempt++) {
    const watchdog = new AbortController()
    const signal = input.signal ? AbortSignal.any([input.signal, watchdog.signal]) : watchdog.signal
    let timer: NodeJS.Timeout | undefined
    const arm = () => {
      clearTimeout(timer)
      timer = setTimeout(() => watchdog.abort(new Error('no token in time')), input.firstTokenTimeoutMs)
    }
    let text = ''
    let firstTokenMs: number | null = null
    arm()
    try {
      const stream = llm.chatStream({
        apiKey: input.apiKey,
        model: input.model,
        messages: input.messages,
        maxTokens: input.maxTokens,
        temperature: 0.2,
        timeoutMs: input.totalTimeoutMs,
        signal,
        ...(input.tools?.length ? { tools: input.tools } : {}),
      })
      for await (const delta of stream) {
        if (firstTokenMs === null) firstTokenMs = Math.round(performance.now() - start)
        text += delta
        arm()
        input.onDelta?.(delta)
      }
      clearTimeout(timer)
      const res = await stream.result()
      return { text, tokens: res.usage.total_tokens, attempts: attempt, firstTokenMs, ...(res.toolCalls?.length ? { toolCalls: res.toolCalls } : {}) }
    } catch (raw) {
      clearTimeout(timer)
      if (input.signal?.aborted) throw raw
      // our own watchdog surfaces as a caller abort inside the client: it is a timeout here
      const err =
        watchdog.signal.aborted || !(raw instanceof LlmUnavailableError)
          ? new LlmUnavailableError(
              watchdog.signal.aborted ? 'no token from the language model in time' : 'language model failed',
              undefined,
              watchdog.signal.aborted ? 'timeout' : 'network',
            )
          : raw
      if (text.length > 0) throw new PartialAnswerError(text, err, attempt)
      if (attempt < 2 && isTransient(err)) continue
      throw err
    }
  }
}

/** The generation settings of a turn's answer. */
export function answerOptions(config: TurnDeps['config'], apiKey: string, prompt: PromptInput, signal?: AbortSignal): Omit<GenerateInput, 'onDelta'> {
  return {
    apiKey,
    model: config.CHAT_MODEL,
    messages: buildAnswerPrompt(prompt),
    maxTokens: config.CHAT_MAX_ANSWER_TOKENS,
    firstTokenTimeoutMs: config.CHAT_FIRST_TOKEN_TIMEOUT_MS,
    totalTimeoutMs: config.CHAT_TIMEOUT_MS,
    signal,
  }
}

/**
 * A reply that cites no source (nor shares half its words with one: citedSources' fallback) is no answer from the
 * knowledge when the model also wrote the NOT_IN_SOURCES marker late in it (`late`), or when it is written in the
 * sources' own language, where that word test means something: an answer translated for the visitor shares no
 * words with its sources whether it is grounded or not, so it is not judged by them.
 */
export function uncitedNoAnswer(text: string, cited: CitableSource[], citable: CitableSource[], late: boolean): boolean {
  if (cited.length > 0) return false
  if (late) return true
  if (citable.length === 0) return false
  const mine = detectLanguage(text)
  return mine !== null && mine === detectLanguage(citable[0]!.text.slice(0, 1500))
}

export type Written =
  /** `byActions`: grounded in action results (not checked against the knowledge's sources) */
  | { kind: 'answer'; text: string; cited: CitableSource[]; byActions?: boolean }
  | { kind: 'interrupted'; text: string }
  | { kind: 'not_covered' }
  /** what the bot said instead of an answer: a write to approve, or a failed call with a person offered */
  | { kind: 'said'; text: string; pending?: PendingAction }

/**
 * The turn's answer, streamed through the link cleaner (stage 9b) so no invented URL is ever shown. An
 * answer that broke off after the visitor saw part of it ends with a note instead of pretending it is
 * whole; any other failure keeps the visitor's question in the log and goes to the caller.
 */
export async function writeAnswer(
  deps: Pick<TurnDeps, 'llm' | 'config' | 'clock' | 'repo' | 'log' | 'actions' | 'cipher'>,
  t: Turn,
  prompt: PromptInput,
  policy: LinkPolicy,
  citable: CitableSource[],
  early?: Speculation | null,
): Promise<Written> {
  const cleaner = createStreamCleaner(policy)
  // with tools, the last filter: an action secret (or its start) is held until it is masked (stage 8, tools)
  const masker = t.answerMask?.stream()
  const show = (piece: string) => {
    const out = masker ? masker.push(piece) : piece
    if (out) t.reply(out)
  }
  const flush = () => {
    const tail = cleaner.end()
    if (tail) show(tail)
    const last = masker?.end()
    if (last) t.reply(last)
  }
  t.input.evaluation?.offered.push(...citable)
  let actions: CitableSource[] = []
  // the model's "not in the sources" verdict comes first: nothing is shown while the reply could still be it
  const gate = createVerdictGate()
  const onDelta = (d: string) => {
    const shown = gate.push(d)
    const piece = shown && cleaner.push(shown)
    if (piece) show(piece)
  }
  try {
    // a speculative request for this very prompt (08-speculate.ts) is taken over, held tokens first
    const options = { ...answerOptions(deps.config, t.apiKey, prompt, t.input.signal), onDelta }
    const gen: Generation & Partial<ToolGeneration> = await t.sw.time(
      'generation',
      () =>
        early?.adopt(onDelta) ?? (t.tools.length ? generateWithTools(deps, t, options, (i) => generateAnswer(deps.llm, i)) : generateAnswer(deps.llm, options)),
    )
    t.tokens += gen.tokens
    if (gen.said) {
      t.reply(gen.said.text)
      return { kind: 'said', text: gen.said.text, pending: gen.said.pending }
    }
    actions = gen.actions ?? []
    const verdict = gate.end()
    const rest = gate.flush()
    const piece = rest && cleaner.push(rest)
    if (piece) show(piece)
    t.debug.generation = { attempts: gen.attempts, first_token_ms: gen.firstTokenMs, verdict, ...(gate.late ? { late_verdict: true } : {}) }
    if (verdict === 'not_covered') return { kind: 'not_covered' }
    flush()
  } catch (err) {
    if (err instanceof PartialAnswerError && t.input.onEvent) {
      flush()
      const note = `\n\n${canned('interrupted_note', t.language)}`
      t.reply(note)
      t.debug.generation = { attempts: err.attempts, interrupted: err.reason.kind }
      return { kind: 'interrupted', text: cleaner.result.text + note }
    }
    if (!t.input.evaluation) await persistQuestionOnly(deps, t.tenantId, t.session, t.stored ?? t.question, t.lang?.store)
    if (err instanceof PartialAnswerError) throw err.reason
    throw err
  }
  if (cleaner.result.removed.length) t.debug.links_removed = cleaner.result.removed.length
  const text = cleaner.result.text
  const cited = citedSources(text, cleaner.result.cited, citable)
  // an answer from action results stands on them; offered tools, none used, and no source: no answer
  if (actions.length) return { kind: 'answer', text, cited: [...cited, ...actions], byActions: true }
  if (t.tools.length && cited.length === 0 && citable.length === 0) return { kind: 'not_covered' }
  // A reply that cites no source and shares no source's words is no answer from the knowledge: the verdict
  // written after some words ("Sorry, I can't find that. NOT_IN_SOURCES"), or a model that says so in its own
  // words without the marker. It takes the not-covered hand-off (a ticket), not the place of an answer.
  if (uncitedNoAnswer(text, cited, citable, gate.late)) {
    if (!gate.late) t.debug.uncited = true
    return { kind: 'not_covered' }
  }
  return { kind: 'answer', text, cited }
}
