/**
 * The edge to the language-model provider (any OpenAI-compatible server at LLM_BASE_URL). Every model call
 * of the service goes through this interface; the implementation is in openai-client.ts and tests point
 * it at the fake server in test/fakes/fake-llm.ts over real HTTP.
 */
import type { InlineImage } from './image-body.js'

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  /** an assistant message that called tools (function calling) */
  tool_calls?: ToolCall[]
  /** a tool message: the call it answers */
  tool_call_id?: string
  /**
   * A user message's images (issue 54), sent as `image_url` parts after its text; to a server that refuses image
   * parts (learned: quirks.ts `noImages`) the text alone goes, which names each image.
   */
  images?: LlmImage[]
}

/** An image part: a URL, or the image's bytes and type (a visitor's file), sent as a base64 data URL (image-body.ts). */
export type LlmImage = { id?: string; name: string } & ({ url: string } | InlineImage)

/** A function the model may call (OpenAI `tools`); `parameters` is a JSON Schema object. */
export interface ToolDef {
  name: string
  description: string
  parameters: Record<string, unknown>
}

/** A call the model made: `arguments` is the JSON text it wrote, unparsed. */
export interface ToolCall {
  id: string
  name: string
  arguments: string
}

export interface LlmUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
}

export interface ChatOptions {
  /** The tenant's own key (decrypted just for this call; never logged). */
  apiKey: string
  model: string
  messages: LlmMessage[]
  temperature?: number
  maxTokens?: number
  /** Ask for a JSON object (response_format json_object; a plain call read as JSON where the server has no JSON mode). */
  json?: boolean
  /** Ask for JSON of this schema (response_format json_schema, falling back to json_object, then plain). */
  jsonSchema?: { name: string; schema: Record<string, unknown> }
  /** Functions the model may call instead of answering (the reply then carries `toolCalls`). */
  tools?: ToolDef[]
  /** Total time allowed for the call; the call is aborted after it. */
  timeoutMs?: number
  signal?: AbortSignal
}

export interface ChatResult {
  text: string
  usage: LlmUsage
  /** the calls the model made, when it was offered tools and called some */
  toolCalls?: ToolCall[]
}

export interface ChatStream extends AsyncIterable<string> {
  /** Resolves once the stream has ended, with the provider's usage (or an estimate when not reported). */
  result(): Promise<ChatResult>
}

export interface EmbedOptions {
  apiKey: string
  model: string
  input: string[]
  /** Output size for models that support shortening (text-embedding-3-*); the provider default otherwise. */
  dimensions?: number
  timeoutMs?: number
  signal?: AbortSignal
}

export interface EmbedResult {
  vectors: number[][]
  usage: LlmUsage
}

export interface LlmClient {
  chat(opts: ChatOptions): Promise<ChatResult>
  /** Yields text deltas as the model produces them. */
  chatStream(opts: ChatOptions): ChatStream
  embed(opts: EmbedOptions): Promise<EmbedResult>
}

/**
 * Why a call failed: an HTTP error status from the provider, our timeout, the caller's own abort signal
 * (e.g. the visitor went away: usually not worth a hand-off), a connection failure or early end of a
 * stream, or a reply that could not be parsed.
 */
export type LlmFailureKind = 'http' | 'timeout' | 'aborted' | 'network' | 'malformed'

/** The provider could not be reached or kept failing (5xx, 429 after retry, timeout, malformed reply). */
export class LlmUnavailableError extends Error {
  override name = 'LlmUnavailableError'
  constructor(
    message: string,
    readonly status?: number,
    readonly kind: LlmFailureKind = 'network',
  ) {
    super(message)
  }
}

/** Why a reply of vectors cannot be used: a provider error with a reason, never a vector (docs/model-servers.md). */
export type VectorProblem = 'count' | 'wrong_width' | 'not_finite' | 'zero_norm'

export class EmbeddingRejectedError extends LlmUnavailableError {
  override name = 'EmbeddingRejectedError'
  constructor(
    readonly problem: VectorProblem,
    readonly detail: string,
  ) {
    super(`embedding provider sent unusable vectors: ${detail}`, undefined, 'malformed')
  }
}
