/**
 * The path to the first string holding a NUL character inside parsed input (JSON body, query, params),
 * or null. Data objects and arrays are walked to a bounded depth and size; buffers, streams and other
 * emitters (uploads) are not.
 */
export function findNul(value: unknown): (string | number)[] | null {
  let budget = 10_000
  const walk = (v: unknown, depth: number): (string | number)[] | null => {
    if (typeof v === 'string') return v.includes('\u0000') ? [] : null
    if (v === null || typeof v !== 'object' || depth > 32 || --budget < 0) return null
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const at = walk(v[i], depth + 1)
        if (at) return [i, ...at]
      }
      return null
    }
    if (ArrayBuffer.isView(v) || v instanceof Date || typeof (v as { on?: unknown }).on === 'function') return null
    for (const k of Object.keys(v)) {
      if (k.includes('\u0000')) return [k]
      const at = walk((v as Record<string, unknown>)[k], depth + 1)
      if (at) return [k, ...at]
    }
    return null
  }
  return walk(value, 0)
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** A text with each lone surrogate (half of a pair, from a JSON `\ud800` escape) as U+FFFD. */
export const wellFormed = (s: string) => (LONE_SURROGATE.test(s) ? s.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\ufffd') : s)

/**
 * Replaces lone surrogates in the strings of parsed input (JSON body, query), in place, to the same bounded
 * depth and size as findNul: such a text cannot be stored (PostgreSQL holds valid UTF-8 only) and would fail
 * the request late, losing a visitor's message; as U+FFFD it is kept. Keys holding one are left to the schema.
 */
export function replaceLoneSurrogates(value: unknown): void {
  let budget = 10_000
  const walk = (v: unknown, depth: number): void => {
    if (v === null || typeof v !== 'object' || depth > 32 || --budget < 0) return
    if (ArrayBuffer.isView(v) || v instanceof Date || typeof (v as { on?: unknown }).on === 'function') return
    const o = v as Record<string | number, unknown>
    for (const k of Array.isArray(v) ? v.keys() : Object.keys(v)) {
      const x = o[k]
      if (typeof x === 'string') {
        const fixed = wellFormed(x)
        if (fixed !== x) o[k] = fixed
      } else walk(x, depth + 1)
    }
  }
  walk(value, 0)
}
