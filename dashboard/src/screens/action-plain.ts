/**
 * Actions without a developer (issue 37): a parameter as plain fields (type, description, a pattern) instead of
 * JSON Schema, and response fields picked from a sample answer instead of typed as JSONPath. Pure functions, no
 * React: the service's tests check them (test/action-plain.test.ts); the form keeps JSON Schema as the advanced view.
 */

export const PLAIN_TYPES = ['string', 'integer', 'number', 'boolean'] as const
export type PlainType = (typeof PLAIN_TYPES)[number]

export interface PlainParameter {
  type: PlainType
  description: string
  /** a regular expression the value must match (strings only); empty: none */
  pattern: string
}

/** The plain fields of a schema, or null when it holds more than they can say (then only the JSON view edits it). */
export function plainOf(schema: unknown): PlainParameter | null {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return null
  const s = schema as Record<string, unknown>
  const type = s.type ?? 'string'
  if (!PLAIN_TYPES.includes(type as PlainType)) return null
  if (Object.keys(s).some((k) => !['type', 'description', 'pattern'].includes(k))) return null
  if (s.description !== undefined && typeof s.description !== 'string') return null
  if (s.pattern !== undefined && (typeof s.pattern !== 'string' || type !== 'string')) return null
  return { type: type as PlainType, description: (s.description as string | undefined) ?? '', pattern: (s.pattern as string | undefined) ?? '' }
}

/** The JSON Schema of plain fields: only what is set. */
export function schemaOf(p: PlainParameter): Record<string, unknown> {
  const out: Record<string, unknown> = { type: p.type }
  if (p.description.trim()) out.description = p.description.trim()
  if (p.type === 'string' && p.pattern.trim()) out.pattern = p.pattern.trim()
  return out
}

export interface SampleField {
  /** the JSONPath the service reads (`$.status`, `$.items[*].name`, `$['a b']`) */
  path: string
  /** the first value found there, shortened, to recognise the field by */
  preview: string
}

const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/
const keyPath = (base: string, key: string) => (SIMPLE_KEY.test(key) ? `${base}.${key}` : `${base}['${key.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`)
const preview = (v: unknown) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v)
  return s.length > 40 ? `${s.slice(0, 39)}…` : s
}

/**
 * Every field of a sample answer (a dry or live test's response body) a person can pick: each leaf value's path,
 * a list's items as `[*]` (one path for all of them), in the order they appear; at most `limit` of them.
 */
export function sampleFields(body: string | null | undefined, limit = 200): SampleField[] {
  if (!body) return []
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return []
  }
  const out = new Map<string, string>()
  const walk = (v: unknown, path: string, depth: number) => {
    if (out.size >= limit || depth > 12) return
    if (Array.isArray(v)) {
      if (!v.length) {
        if (path !== '$' && !out.has(path)) out.set(path, '[]')
        return
      }
      for (const item of v) walk(item, `${path}[*]`, depth + 1)
      return
    }
    if (v && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>)
      if (!entries.length && path !== '$' && !out.has(path)) out.set(path, '{}')
      for (const [k, x] of entries) walk(x, keyPath(path, k), depth + 1)
      return
    }
    if (path !== '$' && !out.has(path)) out.set(path, preview(v))
  }
  walk(json, '$', 0)
  return [...out].map(([path, p]) => ({ path, preview: p }))
}

/** The response fields text (one path a line) with a path added once. */
export function addField(text: string, path: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  return lines.includes(path) ? lines.join('\n') : [...lines, path].join('\n')
}
