import { createHash } from 'node:crypto'
import { EmbeddingRejectedError, LlmUnavailableError, type LlmClient } from './llm.js'
import type { QuirkMemory } from './quirks.js'

/**
 * What the server at LLM_BASE_URL can do, tried with the workspace's key (contract: Model servers): a streamed
 * chat, a JSON-mode call, a tool call and an embedding (width, finite values, the same text twice gives the
 * same vector). Each check says what to change when it fails; what the server cannot do is switched off with
 * the reason (no tools: actions are not offered; no JSON mode: a plain call read as JSON).
 */
export type CheckName = 'chat_stream' | 'json_mode' | 'tool_call' | 'embedding' | 'vision'

export interface Check {
  name: CheckName
  ok: boolean
  detail: string
}

export interface Capabilities {
  /** false: the chat model refuses tools, so actions are not offered to it */
  tools: boolean | null
  json_mode: 'json_schema' | 'json_object' | 'plain' | null
  embedding_width: number | null
  /** false: the chat model refuses image parts, so a visitor's images reach it as their names (issue 54) */
  vision: boolean | null
}

export interface CheckReport {
  checks: Check[]
  capabilities: Capabilities
  ran_at: Date
}

export interface CheckSettings {
  chatModel: string
  embeddingModel: string
  dimensions?: number
}

const CALL_MS = 15_000
/** A 1 x 1 PNG, the smallest image a vision check can send. */
const ONE_PIXEL_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
/** A workspace's checks are run again at most this often (each run costs five small model calls). */
export const CHECKS_TTL_MS = 10 * 60_000
/** `probe=true` runs them again, but not more often than this. */
export const CHECKS_MIN_INTERVAL_MS = 30_000

const why = (err: unknown): string => {
  if (err instanceof EmbeddingRejectedError) return err.detail
  if (err instanceof LlmUnavailableError) return err.status ? `HTTP ${err.status} (${err.kind})` : err.kind
  return 'unexpected failure'
}

const fixFor = (err: unknown, model: string, variable: string): string => {
  const status = err instanceof LlmUnavailableError ? err.status : undefined
  if (status === 401 || status === 403) return 'the model key was refused: set a working key in the workspace settings'
  if (status === 404) return `the server does not serve ${model}: set ${variable} to a model it serves (LLM_BASE_URL usually ends in /v1)`
  if (err instanceof LlmUnavailableError && (err.kind === 'network' || err.kind === 'timeout'))
    return 'the server did not answer: check LLM_BASE_URL and that the server is running'
  return `check that LLM_BASE_URL is an OpenAI-compatible /v1 API and ${variable} a model it serves`
}

const noToolsCheck = (chat: string): Check => ({
  name: 'tool_call',
  ok: false,
  detail: `the server refuses tools for ${chat}: actions are switched off (not offered to the model). Set CHAT_MODEL to a model with tool support (e.g. llama3.1, qwen2.5 on Ollama; vLLM needs --enable-auto-tool-choice and --tool-call-parser)`,
})

/**
 * A stored report as it stands now: a quirk learned since it ran (the server refused tools, or a JSON mode,
 * mid-way) shows in the check and the capability it contradicts, so a cached "tools accepted" never sits beside
 * `capabilities.tools: false` (issue 50, finding 14).
 */
export function withQuirks(report: CheckReport, quirks: QuirkMemory | null, chat: string): CheckReport {
  const q = quirks?.get(chat) ?? {}
  let { checks, capabilities } = report
  if (q.noTools && (capabilities.tools !== false || checks.some((c) => c.name === 'tool_call' && c.ok))) {
    checks = checks.map((c) => (c.name === 'tool_call' ? noToolsCheck(chat) : c))
    capabilities = { ...capabilities, tools: false }
  }
  if (q.json && capabilities.json_mode !== null && capabilities.json_mode !== q.json) capabilities = { ...capabilities, json_mode: q.json }
  return checks === report.checks && capabilities === report.capabilities ? report : { ...report, checks, capabilities }
}

export async function runChecks(llm: LlmClient, quirks: QuirkMemory | null, apiKey: string, s: CheckSettings): Promise<CheckReport> {
  const chat = s.chatModel
  const streamCheck = async (): Promise<Check> => {
    try {
      const stream = llm.chatStream({
        apiKey,
        model: chat,
        messages: [{ role: 'user', content: 'Reply with the single word: ready' }],
        maxTokens: 16,
        timeoutMs: CALL_MS,
      })
      for await (const _ of stream);
      const r = await stream.result()
      const q = quirks?.get(chat) ?? {}
      const notes = [
        q.maxCompletionTokens ? 'max_tokens refused: max_completion_tokens is sent instead' : '',
        q.noTemperature ? 'temperature refused: the server default is used' : '',
        q.noStreamOptions ? 'stream_options refused: usage is counted from the text' : '',
      ].filter(Boolean)
      return {
        name: 'chat_stream',
        ok: r.text.length > 0,
        detail: r.text.length ? ['streamed answer received', ...notes].join('; ') : `the stream ended without text: check CHAT_MODEL (${chat})`,
      }
    } catch (err) {
      return { name: 'chat_stream', ok: false, detail: `${why(err)}: ${fixFor(err, chat, 'CHAT_MODEL')}` }
    }
  }
  const jsonCheck = async (): Promise<Check> => {
    try {
      const r = await llm.chat({
        apiKey,
        model: chat,
        messages: [{ role: 'user', content: 'Return a JSON object with the key "ok" set to true, and nothing else.' }],
        jsonSchema: { name: 'status_check', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } },
        maxTokens: 64,
        timeoutMs: CALL_MS,
      })
      const mode = quirks?.get(chat).json ?? 'json_schema'
      let parsed: unknown = null
      try {
        parsed = JSON.parse(r.text)
      } catch {}
      const obj = !!parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      const modeText =
        mode === 'plain'
          ? 'the server has no JSON mode: a plain call is read as JSON (a model that follows instructions well is needed)'
          : mode === 'json_object'
            ? 'json_schema refused: json_object is used'
            : 'json_schema accepted'
      return { name: 'json_mode', ok: obj, detail: obj ? modeText : `${modeText}; the reply was not a JSON object: use a stronger CHAT_MODEL` }
    } catch (err) {
      return { name: 'json_mode', ok: false, detail: `${why(err)}: ${fixFor(err, chat, 'CHAT_MODEL')}` }
    }
  }
  const toolCheck = async (): Promise<Check> => {
    try {
      const r = await llm.chat({
        apiKey,
        model: chat,
        messages: [{ role: 'user', content: 'What is the status of order 1234? Use the function.' }],
        tools: [
          {
            name: 'order_status',
            description: 'Look up the status of an order by its number',
            parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
          },
        ],
        maxTokens: 64,
        timeoutMs: CALL_MS,
      })
      if (quirks?.get(chat).noTools) return noToolsCheck(chat)
      return {
        name: 'tool_call',
        ok: true,
        detail: r.toolCalls?.length ? 'the model called the offered function' : 'tools accepted (the model answered without calling the function)',
      }
    } catch (err) {
      return { name: 'tool_call', ok: false, detail: `${why(err)}: ${fixFor(err, chat, 'CHAT_MODEL')}` }
    }
  }
  const visionCheck = async (): Promise<Check> => {
    try {
      await llm.chat({
        apiKey,
        model: chat,
        messages: [{ role: 'user', content: 'What colour is this image? Reply with one word.', images: [{ name: 'check.png', url: ONE_PIXEL_PNG }] }],
        maxTokens: 16,
        timeoutMs: CALL_MS,
      })
      if (quirks?.get(chat).noImages) {
        return {
          name: 'vision',
          ok: false,
          detail: `the server refuses image parts for ${chat}: a visitor's images reach the model as their names only. Set CHAT_MODEL to a model that takes images (e.g. gpt-4o-mini, llava or qwen2.5-vl on Ollama)`,
        }
      }
      return { name: 'vision', ok: true, detail: "image parts accepted: a visitor's images go to the model" }
    } catch (err) {
      return { name: 'vision', ok: false, detail: `${why(err)}: ${fixFor(err, chat, 'CHAT_MODEL')}` }
    }
  }
  const embeddingCheck = async (): Promise<{ check: Check; width: number | null }> => {
    const model = s.embeddingModel
    try {
      const text = 'How long does standard shipping take?'
      const r = await llm.embed({ apiKey, model, input: [text, text], ...(s.dimensions ? { dimensions: s.dimensions } : {}), timeoutMs: CALL_MS })
      const [a, b] = r.vectors as [number[], number[]]
      let dot = 0
      let na = 0
      let nb = 0
      for (let i = 0; i < a.length; i++) {
        dot += a[i]! * b[i]!
        na += a[i]! * a[i]!
        nb += b[i]! * b[i]!
      }
      const same = dot / Math.sqrt(na * nb) > 0.999
      const native = quirks?.get(model).noDimensions ? `; dimensions refused: the index is built at the native width ${a.length}` : ''
      return {
        width: a.length,
        check: {
          name: 'embedding',
          ok: same,
          detail: same
            ? `width ${a.length}, finite, the same text gives the same vector${native}`
            : 'the same text gave different vectors: the embedding server is not deterministic; check EMBEDDING_MODEL',
        },
      }
    } catch (err) {
      return { width: null, check: { name: 'embedding', ok: false, detail: `${why(err)}: ${fixFor(err, model, 'EMBEDDING_MODEL')}` } }
    }
  }
  // the chat checks one after another (a local server runs one request at a time), the embedding beside them
  const emb = embeddingCheck()
  const stream = await streamCheck()
  const json = await jsonCheck()
  const tool = await toolCheck()
  const vision = await visionCheck()
  const e = await emb
  const q = quirks?.get(chat) ?? {}
  return {
    checks: [stream, json, tool, e.check, vision],
    capabilities: {
      tools: q.noTools ? false : tool.ok ? true : null,
      json_mode: json.ok ? (q.json ?? 'json_schema') : null,
      embedding_width: e.width,
      vision: q.noImages ? false : vision.ok ? true : null,
    },
    ran_at: new Date(),
  }
}

/**
 * The checks' last result per workspace key, run at most every CHECKS_TTL_MS (a forced run at most every
 * CHECKS_MIN_INTERVAL_MS); concurrent requests share one run. Keyed by a hash of the key, never the key.
 */
export function createCheckCache(
  run: (apiKey: string) => Promise<CheckReport>,
  now: () => number = Date.now,
  current: (report: CheckReport) => CheckReport = (r) => r,
) {
  const done = new Map<string, { at: number; report: CheckReport }>()
  const running = new Map<string, Promise<CheckReport>>()
  return {
    cached(apiKey: string): CheckReport | null {
      const hit = done.get(keyOf(apiKey))
      return hit ? current(hit.report) : null
    },
    async get(apiKey: string, force = false): Promise<CheckReport> {
      const k = keyOf(apiKey)
      const hit = done.get(k)
      const age = hit ? now() - hit.at : Number.POSITIVE_INFINITY
      if (hit && (age < CHECKS_MIN_INTERVAL_MS || (!force && age < CHECKS_TTL_MS))) return current(hit.report)
      let p = running.get(k)
      if (!p) {
        p = run(apiKey).finally(() => running.delete(k))
        running.set(k, p)
        p.then(
          (report) => {
            if (done.size >= 1000) done.delete(done.keys().next().value!)
            done.set(k, { at: now(), report })
          },
          () => {},
        )
      }
      return p.then(current)
    },
  }
}

const keyOf = (apiKey: string) => createHash('sha256').update(apiKey).digest('hex').slice(0, 32)

export type CheckCache = ReturnType<typeof createCheckCache>
