import type { LlmClient, LlmMessage } from '../../llm/llm.js'

export interface JsonCallResult {
  /** The parsed object, or null when the call failed, timed out or did not return an object. */
  value: Record<string, unknown> | null
  tokens: number
  ms: number
  error?: string
}

/**
 * One JSON-mode call on the guard model with its own timeout. Never throws: guard, rewrite and
 * validation calls all fail open, so a failure is just `value: null` (with the reason for the debug log).
 */
export async function jsonCall(
  llm: Pick<LlmClient, 'chat'>,
  opts: { apiKey: string; model: string; messages: LlmMessage[]; timeoutMs: number; signal?: AbortSignal; maxTokens?: number },
): Promise<JsonCallResult> {
  const start = performance.now()
  const ms = () => Math.round(performance.now() - start)
  try {
    const r = await llm.chat({
      apiKey: opts.apiKey,
      model: opts.model,
      messages: opts.messages,
      json: true,
      temperature: 0,
      maxTokens: opts.maxTokens ?? 300,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
    })
    const value = parseJsonObject(r.text)
    return { value, tokens: r.usage.total_tokens, ms: ms(), ...(value ? {} : { error: 'not a JSON object' }) }
  } catch (err) {
    const e = err as { kind?: string; message?: string }
    return { value: null, tokens: 0, ms: ms(), error: e.kind ?? e.message ?? 'failed' }
  }
}

/** The first JSON object in a reply (models sometimes wrap it in prose or a code fence). */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  const start = text.indexOf('{')
  const end = text.lastIndexOf('}')
  if (start < 0 || end <= start) return null
  try {
    const v = JSON.parse(text.slice(start, end + 1)) as unknown
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null
  } catch {
    return null
  }
}

/** A boolean field, accepting the spellings models use ("true", "yes", 1). */
export function flag(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v
  if (typeof v === 'number') return v !== 0
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase()
    if (['true', 'yes', '1'].includes(s)) return true
    if (['false', 'no', '0'].includes(s)) return false
  }
  return undefined
}
