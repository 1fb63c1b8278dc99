import { setBounded } from '../../lib/bounded.js'
import { sha256Hex } from '../../lib/crypto.js'
import type { EmbedResult, LlmClient } from '../llm/llm.js'

/**
 * Recent query embeddings, so a question asked again (support traffic repeats itself) does not wait for
 * an embedding call before retrieval: the answer can then start while the guard call runs (turn.ts). A
 * vector is the same for the same text, model and size; the entry is keyed by the tenant's provider key
 * too (all of it hashed), so one tenant's questions never serve another. Single-text calls only (the indexer's
 * batches pass through). A hit costs no tokens, and counts none. Bounded: `max` entries of float32.
 */
export function withQueryEmbeddingCache(llm: LlmClient, max: number): LlmClient {
  const cache = new Map<string, Float32Array>()
  return {
    chat: (opts) => llm.chat(opts),
    chatStream: (opts) => llm.chatStream(opts),
    async embed(opts): Promise<EmbedResult> {
      if (max <= 0 || opts.input.length !== 1) return llm.embed(opts)
      const key = sha256Hex(`${opts.apiKey}\n${opts.model}\n${opts.dimensions ?? ''}\n${opts.input[0]}`)
      const hit = cache.get(key)
      if (hit) {
        setBounded(cache, key, hit, max)
        return { vectors: [Array.from(hit)], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }
      }
      const r = await llm.embed(opts)
      if (r.vectors[0]?.length) setBounded(cache, key, Float32Array.from(r.vectors[0]), max)
      return r
    },
  }
}
