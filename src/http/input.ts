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
