import type { VectorProblem } from './llm.js'

/**
 * An embedding as the provider sent it: a float array, or base64 of little-endian float32 (OpenAI's compact
 * form). Read by what arrived, not by what was asked: Ollama, TEI, Infinity and LM Studio answer float arrays
 * whatever is asked, and reading those as base64 gives zeros of a quarter of the width.
 */
export function decodeEmbedding(raw: unknown): number[] | null {
  // float32 whatever the wire form: a float array's values are rounded as base64's are (and as pgvector stores
  // them), so one provider ranks the same passages whether it answers in floats or base64 (bench:grounding)
  if (Array.isArray(raw)) return raw.map((x) => (typeof x === 'number' ? Math.fround(x) : Number.NaN))
  if (ArrayBuffer.isView(raw)) return Array.from(raw as unknown as ArrayLike<number>)
  if (typeof raw === 'string') {
    const buf = Buffer.from(raw, 'base64')
    if (buf.length === 0 || buf.length % 4 !== 0) return null
    const out = new Array<number>(buf.length / 4)
    for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4)
    return out
  }
  return null
}

/**
 * Whether vectors may be stored or searched: as many as asked, one width (the index's when it has one),
 * finite values, a norm above zero. A zero or NaN vector would score NaN or 0 against everything.
 */
export function checkVectors(
  vectors: (number[] | null)[],
  expected: { count: number; width?: number | null },
): { ok: true } | { ok: false; problem: VectorProblem; detail: string } {
  if (vectors.length !== expected.count) return { ok: false, problem: 'count', detail: `${vectors.length} vectors for ${expected.count} inputs` }
  const width = expected.width ?? vectors[0]?.length ?? 0
  for (let i = 0; i < vectors.length; i++) {
    const v = vectors[i]
    if (!v || v.length === 0) return { ok: false, problem: 'not_finite', detail: 'an embedding was missing or unreadable' }
    if (v.length !== width) {
      return {
        ok: false,
        problem: 'wrong_width',
        detail: expected.width
          ? `vectors of width ${v.length}, the index holds width ${width} (set EMBEDDING_DIMENSIONS or EMBEDDING_MODEL to what the index was built with, or re-index)`
          : `vectors of different widths (${width} and ${v.length}) in one reply`,
      }
    }
    let norm = 0
    for (const x of v) {
      if (!Number.isFinite(x)) return { ok: false, problem: 'not_finite', detail: 'a vector holds a value that is not a finite number' }
      norm += x * x
    }
    if (!(norm > 0)) return { ok: false, problem: 'zero_norm', detail: 'a vector is all zeros (norm 0)' }
  }
  return { ok: true }
}
