/**
 * The path to the first string holding a NUL character inside parsed input (JSON body, query, params),
 * or null. Only plain objects and arrays are walked (uploads and buffers are not), to a bounded depth.
 */
export function findNul(value: unknown, depth = 0): (string | number)[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? [] : null
  if (depth > 32 || value === null || typeof value !== 'object') return null
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = findNul(value[i], depth + 1)
      if (at) return [i, ...at]
    }
    return null
  }
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return null
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\u0000')) return [k]
    const at = findNul(v, depth + 1)
    if (at) return [k, ...at]
  }
  return null
}
