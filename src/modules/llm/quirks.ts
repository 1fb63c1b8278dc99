/**
 * What an OpenAI-compatible server at one base URL does not take, learned from its own refusals and kept in
 * memory per base URL and model, so a refused parameter costs one failed call per process, not one per turn.
 *
 * Servers differ (docs/model-servers.md): OpenAI's reasoning models refuse `max_tokens` (they take
 * `max_completion_tokens`) and any `temperature` but the default; Ollama models without tool support refuse
 * `tools`; some servers refuse `dimensions`, `response_format` types or `stream_options`. Each refusal is a
 * 400 (sometimes 422) naming the parameter in `param` or in the message; the call is then retried without it.
 */
export type JsonMode = 'json_schema' | 'json_object' | 'plain'

export interface Quirks {
  /** `max_tokens` refused: the limit goes as `max_completion_tokens`. */
  maxCompletionTokens?: boolean
  /** `temperature` refused (only the default): it is left out. */
  noTemperature?: boolean
  /** `dimensions` refused: the server's native width is used. */
  noDimensions?: boolean
  /** The best JSON mode the server took (json_schema, then json_object, then a plain call read as JSON). */
  json?: JsonMode
  /** `tools` refused: the model is called without them (actions are not offered). */
  noTools?: boolean
  /** `stream_options` refused: streams go without it (usage is then counted from the text). */
  noStreamOptions?: boolean
  /** `image_url` content parts refused (a text-only model): a message's images go as their names in its text. */
  noImages?: boolean
}

export type QuirkName = keyof Quirks

export interface QuirkMemory {
  get(model: string): Readonly<Quirks>
  learn(model: string, q: Quirks): void
  /** Every model's learned quirks, for `GET /llm/status`. */
  all(): { model: string; quirks: Quirks }[]
  forget(): void
}

const MAX_MODELS = 200

export function createQuirkMemory(): QuirkMemory {
  const byModel = new Map<string, Quirks>()
  return {
    get: (model) => byModel.get(model) ?? {},
    learn(model, q) {
      if (!byModel.has(model) && byModel.size >= MAX_MODELS) byModel.delete(byModel.keys().next().value!)
      byModel.set(model, { ...byModel.get(model), ...q })
    },
    all: () => [...byModel.entries()].map(([model, quirks]) => ({ model, quirks: { ...quirks } })),
    forget: () => byModel.clear(),
  }
}

/** What the request that was refused carried, so only a parameter it sent can be blamed. */
export interface SentParams {
  maxTokens: boolean
  maxCompletionTokens: boolean
  temperature: boolean
  dimensions: boolean
  json: JsonMode | null
  tools: boolean
  streamOptions: boolean
  /** image parts (optional: requests without messages, embeddings, send none) */
  images?: boolean
}

/**
 * The quirk a refusal reveals, or null when it is not a refused parameter (then the error stands). Read from
 * the error's `param` and `code` first (OpenAI, Azure, vLLM), then its message (Ollama, llama.cpp, LiteLLM
 * pass the backend's words on). Never echoed: only the parameter name is kept.
 */
export function quirkFromRefusal(
  status: number | undefined,
  error: { param?: unknown; code?: unknown; message?: unknown } | null | undefined,
  sent: SentParams,
): Quirks | null {
  if (status !== 400 && status !== 422) return null
  const param = typeof error?.param === 'string' ? error.param.toLowerCase() : ''
  const msg = typeof error?.message === 'string' ? error.message.slice(0, 2000).toLowerCase() : ''
  const names = (p: string) => param === p || param.startsWith(`${p}.`) || msg.includes(p)
  if (sent.maxTokens && (param === 'max_tokens' || (msg.includes('max_tokens') && msg.includes('max_completion_tokens')))) return { maxCompletionTokens: true }
  if (sent.temperature && names('temperature')) return { noTemperature: true }
  if (sent.dimensions && (names('dimensions') || msg.includes('matryoshka'))) return { noDimensions: true }
  if (sent.streamOptions && names('stream_options')) return { noStreamOptions: true }
  // a text-only model: OpenAI's "image_url is only supported by certain models", vLLM's "not a multimodal model", Ollama's "does not support images"
  if (sent.images && (/image|multimodal|vision/.test(msg) || param.includes('content') || param.includes('image'))) return { noImages: true }
  if (sent.tools && (names('tools') || names('tool_choice') || /\btools?\b|tool.?call|function.?call/.test(msg))) return { noTools: true }
  if (
    sent.json &&
    sent.json !== 'plain' &&
    (names('response_format') || msg.includes('json_schema') || msg.includes('json_object') || msg.includes('json mode'))
  )
    return { json: sent.json === 'json_schema' ? 'json_object' : 'plain' }
  return null
}

/** Text meant as one JSON object, from a model asked without JSON mode: fences and prose around it dropped. */
export function jsonFromPlain(text: string): string {
  const t = text.trim()
  if (t.startsWith('{') && t.endsWith('}')) return t
  const start = t.indexOf('{')
  const end = t.lastIndexOf('}')
  return start >= 0 && end > start ? t.slice(start, end + 1) : t
}
