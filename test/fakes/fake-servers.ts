/**
 * How real OpenAI-compatible servers differ, for the fake LLM (fake-llm.ts `server` option / `behaveAs`):
 * each flag makes the fake refuse or answer as that server does, with its real error shape, so the client's
 * handling of each quirk (src/modules/llm/quirks.ts, docs/model-servers.md) is tested over HTTP.
 */
export interface ServerQuirks {
  /** Embeddings always come as float arrays, whatever `encoding_format` asks (Ollama, TEI, Infinity, LM Studio). */
  floatEmbeddings?: boolean
  /** `dimensions` is ignored: the model's native width comes back (older Ollama). */
  ignoreDimensions?: boolean
  /** `dimensions` is refused with a 400 (vLLM for models without matryoshka, OpenAI ada-002). */
  refuseDimensions?: boolean
  /** `max_tokens` refused in favour of `max_completion_tokens` (OpenAI reasoning models). */
  refuseMaxTokens?: boolean
  /** Any `temperature` refused (OpenAI reasoning models). */
  refuseTemperature?: boolean
  /** `tools` refused (Ollama models without tool support; vLLM without --enable-auto-tool-choice). */
  refuseTools?: boolean
  /** `response_format: json_schema` refused (older servers). */
  refuseJsonSchema?: boolean
  /** Any `response_format` refused (no JSON mode at all). */
  refuseJsonMode?: boolean
  /** `stream_options` refused (older Azure API versions, some proxies). */
  refuseStreamOptions?: boolean
  /** `image_url` content parts refused: a text-only chat model (OpenAI's words; vLLM says "not a multimodal model"). */
  refuseImages?: boolean
  /** Streams carry SSE comment lines (`: ping`) and chunks with empty `choices` (llama.cpp, LiteLLM, Azure filters). */
  sseNoise?: boolean
  /** Streams never carry usage, even when asked (several local servers). */
  noStreamUsage?: boolean
  /** Errors in vLLM's shape: `{object: "error", message, type, param, code}` at the top level, no `error` key. */
  vllmErrors?: boolean
  /** A broken embedding server: all-zero vectors, a NaN in each, or every other vector a different width. */
  badVectors?: 'zeros' | 'nan' | 'ragged'
  /** The native width of the embedding model (with ignoreDimensions / refuseDimensions). */
  nativeDims?: number
}

export type ServerKind = 'openai' | 'openai-reasoning' | 'azure' | 'ollama' | 'vllm' | 'llama.cpp' | 'tei' | 'lm-studio' | 'litellm'

export const SERVER_KINDS: Record<ServerKind, ServerQuirks> = {
  openai: {},
  'openai-reasoning': { refuseMaxTokens: true, refuseTemperature: true },
  azure: { sseNoise: true },
  /** an Ollama model without tool support (many are): floats, native width, no tools */
  ollama: { floatEmbeddings: true, ignoreDimensions: true, nativeDims: 768, refuseTools: true, noStreamUsage: true },
  vllm: { refuseDimensions: true, nativeDims: 1024, refuseTools: true, vllmErrors: true },
  'llama.cpp': { floatEmbeddings: true, ignoreDimensions: true, nativeDims: 768, sseNoise: true, refuseTools: true },
  tei: { floatEmbeddings: true, refuseDimensions: true, nativeDims: 384 },
  'lm-studio': { floatEmbeddings: true, ignoreDimensions: true, nativeDims: 768, refuseJsonMode: true, noStreamUsage: true },
  litellm: { sseNoise: true },
}

export interface Refusal {
  status: number
  body: unknown
}

function refusal(q: ServerQuirks, message: string, param: string | null, code: string | null, type = 'invalid_request_error'): Refusal {
  if (q.vllmErrors) return { status: 400, body: { object: 'error', message, type: 'BadRequestError', param, code: 400 } }
  return { status: 400, body: { error: { message, type, param, code } } }
}

/** The 400 this server gives a chat request, or null when it takes it. */
export function chatRefusal(q: ServerQuirks, body: any): Refusal | null {
  if (q.refuseMaxTokens && body.max_tokens !== undefined) {
    return refusal(
      q,
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      'max_tokens',
      'unsupported_parameter',
    )
  }
  if (q.refuseTemperature && body.temperature !== undefined && body.temperature !== 1) {
    return refusal(
      q,
      `Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.`,
      'temperature',
      'unsupported_value',
    )
  }
  if (q.refuseTools && Array.isArray(body.tools) && body.tools.length > 0) {
    return q.vllmErrors
      ? refusal(q, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', null, null)
      : refusal(q, `registry.ollama.ai/library/${body.model}:latest does not support tools`, null, null, 'api_error')
  }
  const rf = body.response_format?.type
  if (q.refuseJsonMode && rf && rf !== 'text') return refusal(q, `'response_format.type' must be 'text', got '${rf}'`, 'response_format', null)
  if (q.refuseJsonSchema && rf === 'json_schema')
    return refusal(q, "Invalid value: 'json_schema'. Supported values are: 'json_object' and 'text'.", 'response_format.type', 'invalid_value')
  if (q.refuseStreamOptions && body.stream_options !== undefined) return refusal(q, 'Unrecognized request argument supplied: stream_options', null, null)
  if (q.refuseImages && Array.isArray(body.messages)) {
    for (const [i, m] of body.messages.entries()) {
      const j = Array.isArray(m?.content) ? m.content.findIndex((p: { type?: unknown }) => p?.type === 'image_url') : -1
      if (j >= 0) {
        return q.vllmErrors
          ? refusal(q, `${body.model} is not a multimodal model`, null, null)
          : refusal(q, 'Invalid content type. image_url is only supported by certain models.', `messages.[${i}].content.[${j}].type`, 'invalid_value')
      }
    }
  }
  return null
}

/** The 400 this server gives an embedding request, or null when it takes it. */
export function embeddingRefusal(q: ServerQuirks, body: any): Refusal | null {
  if (q.refuseDimensions && body.dimensions !== undefined) {
    return refusal(q, `Model "${body.model}" does not support matryoshka representation, changing output dimensions will lead to poor results.`, null, null)
  }
  return null
}
