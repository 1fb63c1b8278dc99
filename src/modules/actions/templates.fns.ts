/**
 * Templates of an action's URL, headers and body: `{name}` names a parameter. Values are encoded for the
 * place they go (a URL component, a header line, a JSON string), so no value can add a path segment, a
 * header or a JSON member of its own.
 */

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_.-]{0,63})\}/g

export type Value = string | number | boolean

/** The parameter names a template uses, in order of first use. */
export function placeholders(template: string): string[] {
  const out: string[] = []
  for (const m of template.matchAll(PLACEHOLDER)) if (!out.includes(m[1]!)) out.push(m[1]!)
  return out
}

export type Place = 'url' | 'header' | 'body'

function encode(value: Value, place: Place): string {
  const s = String(value)
  if (place === 'url') return encodeURIComponent(s)
  if (place === 'header') return s.replace(/[\r\n\u0000]/g, ' ')
  // inside a JSON string literal of the template: escaped, never closing the string
  return typeof value === 'string' ? JSON.stringify(s).slice(1, -1) : s
}

const BODY_PLACEHOLDER = /"\{([A-Za-z_][A-Za-z0-9_.-]{0,63})\}"|\{([A-Za-z_][A-Za-z0-9_.-]{0,63})\}/g

/**
 * The template with each `{name}` replaced; a name without a value becomes empty. In a JSON body a whole
 * string `"{name}"` becomes a JSON string of the value, a bare `{name}` the value itself (a number stays a
 * number; a text is escaped), and a missing value `null` in both, so the body stays JSON.
 */
export function render(template: string, values: Record<string, Value | undefined>, place: Place): string {
  if (place === 'body') {
    return template.replace(BODY_PLACEHOLDER, (_, quoted: string | undefined, bare: string | undefined) => {
      const v = values[(quoted ?? bare)!]
      if (v === undefined) return 'null'
      return quoted ? JSON.stringify(String(v)) : encode(v, 'body')
    })
  }
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const v = values[name]
    return v === undefined ? '' : encode(v, place)
  })
}

/** A text percent-decoded until it stops changing (at most 4 rounds; a malformed escape ends it). */
function decodeFully(s: string): string {
  let out = s
  for (let i = 0; i < 4; i++) {
    let next: string
    try {
      next = decodeURIComponent(out)
    } catch {
      return out
    }
    if (next === out) return out
    out = next
  }
  return out
}

const pathOf = (url: string) => url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split(/[?#]/)[0] ?? ''

/**
 * The parameters of a path segment that a call's values made "." or ".." (in any percent-encoded form, which
 * URL parsers and servers resolve as dot segments too: `/orders/../details` reaches `/details`), or null.
 * Values are encoded before they land in a segment, so the rendered path has the template's segments.
 */
export function dotSegmentIn(template: string, rendered: string): string[] | null {
  const tpl = pathOf(template).split('/')
  const out = pathOf(rendered).split('/')
  for (let i = 0; i < tpl.length; i++) {
    const names = placeholders(tpl[i]!)
    if (!names.length) continue
    const seg = decodeFully(out[i] ?? '')
    if (seg === '.' || seg === '..') return names
  }
  return null
}

/** Why a URL template cannot be used, or null. `relativeOk` lets an imported path wait for its base URL. */
export function urlTemplateProblem(template: string, relativeOk: boolean): string | null {
  // placeholders become harmless text for the shape check
  const probe = template.replace(PLACEHOLDER, 'x')
  if (/^https?:\/\//i.test(probe)) {
    let u: URL
    try {
      u = new URL(probe)
    } catch {
      return 'The URL is not valid'
    }
    if (u.username || u.password) return 'The URL must not contain a user name or password'
    if (placeholders(template).some((p) => hostPart(template).includes(`{${p}}`))) return 'A parameter may not be part of the host name'
    return null
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(probe)) return 'The URL must start with https:// or http://'
  if (relativeOk && probe.startsWith('/')) return null
  return 'The URL must be absolute (https://...)'
}

const hostPart = (template: string) => template.replace(/^https?:\/\//i, '').split(/[/?#]/)[0] ?? ''

/** The URL template with each placeholder as harmless text, for checks of its shape and host. */
export const probeUrl = (template: string) => template.replace(PLACEHOLDER, 'x')

export const isAbsolute = (url: string) => /^https?:\/\//i.test(url)

/** The names used by any of the templates that are not parameters of the action, with the field they are in. */
export function unknownPlaceholders(
  t: { url: string; headers: Record<string, string>; body_template: string | null },
  names: ReadonlySet<string>,
): { loc: string[]; name: string } | null {
  const check = (template: string | null, loc: string[]) => {
    for (const p of placeholders(template ?? '')) if (!names.has(p)) return { loc, name: p }
    return null
  }
  const url = check(t.url, ['url'])
  if (url) return url
  for (const [h, v] of Object.entries(t.headers)) {
    const hit = check(v, ['headers', h])
    if (hit) return hit
  }
  return check(t.body_template, ['body_template'])
}
