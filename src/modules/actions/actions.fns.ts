/**
 * Pure rules of actions: masks of secrets, the small JSONPath the response fields are written in, what the
 * model is shown of a response, and the arguments as the call log keeps them.
 */

/** The longest secret shown only as "••••": the last four characters of a short one would give most of it away. */
export const SHORT_SECRET_CHARS = 6

/** "••••" and the last four characters (nothing of a secret of 6 characters or fewer): all that is ever shown of a secret value. */
export const maskSecret = (value: string) => (value.length <= SHORT_SECRET_CHARS ? '••••' : `••••${value.slice(-4)}`)
export const maskHint = (hint: string) => `••••${hint}`

/** What the model is given of a response, at most (the contract's 8 KB). */
export const MODEL_VIEW_BYTES = 8 * 1024
/** The most of a response read from the workspace's API. */
export const RESPONSE_MAX_BYTES = 256 * 1024
/** The most of a response the call log keeps. */
export const LOG_EXCERPT_CHARS = 2000
export const MAX_CALLS_PER_TURN = 4

type Step = { key: string } | { index: number } | { all: true }

/**
 * Parses `$`, `$.a.b`, `$.items[*].id`, `$.a[0]`, `$['a b']`; null when the path is outside this subset.
 */
export function parsePath(path: string): Step[] | null {
  const p = path.trim()
  if (!p.startsWith('$')) return null
  const steps: Step[] = []
  let i = 1
  while (i < p.length) {
    const rest = p.slice(i)
    let m: RegExpExecArray | null
    if ((m = /^\.([A-Za-z_$][A-Za-z0-9_$-]*)/.exec(rest))) steps.push({ key: m[1]! })
    else if ((m = /^\[\*\]|^\.\*/.exec(rest))) steps.push({ all: true })
    else if ((m = /^\[(\d{1,6})\]/.exec(rest))) steps.push({ index: Number(m[1]) })
    else if ((m = /^\[\s*'([^']{1,200})'\s*\]|^\[\s*"([^"]{1,200})"\s*\]/.exec(rest))) steps.push({ key: (m[1] ?? m[2])! })
    else return null
    i += m[0].length
  }
  return steps
}

/** The values at a path; a path with `[*]` gives a list, one without gives its value (undefined: none). */
export function selectPath(root: unknown, steps: Step[]): unknown {
  let current: unknown[] = [root]
  let many = false
  for (const s of steps) {
    const next: unknown[] = []
    for (const v of current) {
      if ('all' in s) {
        many = true
        if (Array.isArray(v)) next.push(...v)
        else if (v && typeof v === 'object') next.push(...Object.values(v))
      } else if ('index' in s) {
        if (Array.isArray(v) && s.index < v.length) next.push(v[s.index])
      } else if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, s.key)) {
        next.push((v as Record<string, unknown>)[s.key])
      }
    }
    current = next
  }
  return many ? current : current[0]
}

/** Cuts a text to at most `bytes` of UTF-8 without splitting a character. */
export function cutBytes(text: string, bytes: number): string {
  const buf = Buffer.from(text, 'utf8')
  if (buf.length <= bytes) return text
  return buf
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD+$/, '')
}

/**
 * What the model sees of a response: the response_fields of a JSON body (keyed by their path without `$.`),
 * or the whole JSON when none are set; a body that is not JSON is given as text. Never more than 8 KB.
 */
export function modelView(body: string, fields: readonly string[]): string {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return cutBytes(body, MODEL_VIEW_BYTES)
  }
  if (fields.length === 0) return cutBytes(JSON.stringify(json), MODEL_VIEW_BYTES)
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    const steps = parsePath(f)
    if (!steps) continue
    const v = selectPath(json, steps)
    if (v !== undefined) out[f.replace(/^\$\.?/, '') || '$'] = v
  }
  return cutBytes(JSON.stringify(out), MODEL_VIEW_BYTES)
}

/** A one-line summary of a call for the visitor's confirmation: the action's name and the arguments it was given. */
export function callSummary(description: string, name: string, args: Record<string, unknown>): string {
  const what =
    description
      .split(/(?<=[.!?])\s/)[0]
      ?.trim()
      .slice(0, 200) || name
  const list = Object.entries(args)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`.slice(0, 200))
    .join(', ')
  return list ? `${what} (${list})` : what
}
