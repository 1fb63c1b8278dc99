/**
 * Pure rules of the knowledge connectors: how long an upstream rate limit asks us to wait, where a `Link`
 * header's next page is, when a listing is too short to delete by, and what is shown of a secret.
 */
import type { ConnectorKind } from './connector.types.js'

export type Headers = Record<string, string | string[] | undefined>

export const header = (h: Headers, name: string): string | null => {
  const v = h[name.toLowerCase()]
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null)
}

const seconds = (v: string | null): number | null => {
  if (v === null || !/^\s*\d{1,10}(\.\d+)?\s*$/.test(v)) return null
  return Number(v)
}

/** Retry-After in seconds or as an HTTP date. */
function retryAfter(h: Headers, nowMs: number): number | null {
  const v = header(h, 'retry-after')
  if (v === null) return null
  const s = seconds(v)
  if (s !== null) return s
  const at = Date.parse(v)
  return Number.isFinite(at) ? Math.max(0, (at - nowMs) / 1000) : null
}

/** A unix-seconds reset time as seconds from now (never negative). */
function untilReset(h: Headers, name: string, nowMs: number): number | null {
  const s = seconds(header(h, name))
  return s === null ? null : Math.max(0, s - nowMs / 1000)
}

/**
 * Seconds to wait before asking again when `status` is the vendor's rate limit, or null when the reply is
 * no rate limit (contract: Zendesk and Freshdesk 429 Retry-After; Intercom 429 until X-RateLimit-Reset;
 * GitHub 403/429 with retry-after or x-ratelimit-remaining: 0, until retry-after, else x-ratelimit-reset, else 60 s).
 */
export function rateLimitWait(kind: ConnectorKind, status: number, h: Headers, nowMs: number): number | null {
  if (kind === 'github') {
    if (status !== 403 && status !== 429) return null
    const after = retryAfter(h, nowMs)
    const exhausted = header(h, 'x-ratelimit-remaining')?.trim() === '0'
    if (after === null && !exhausted && status === 403) return null
    return after ?? untilReset(h, 'x-ratelimit-reset', nowMs) ?? 60
  }
  if (status !== 429) return null
  if (kind === 'intercom') return untilReset(h, 'x-ratelimit-reset', nowMs) ?? retryAfter(h, nowMs) ?? 10
  return retryAfter(h, nowMs) ?? 10
}

/**
 * The `rel="next"` target of a Link header, only when it stays on `origin` (the configured account): a reply
 * must not lead the connector, with its credentials, to another host. Parsed by hand, without a pattern
 * over the whole header, so a hostile header costs linear time.
 */
export function nextLink(link: string | null, origin: string): string | null {
  if (!link) return null
  for (const part of link.slice(0, 8192).split(',')) {
    const open = part.indexOf('<')
    const close = part.indexOf('>', open + 1)
    if (open < 0 || close < 0) continue
    const params = part.slice(close + 1).toLowerCase()
    if (!params.split(';').some((p) => p.trim().replace(/\s/g, '') === 'rel="next"' || p.trim().replace(/\s/g, '') === 'rel=next')) continue
    try {
      const u = new URL(part.slice(open + 1, close).trim(), origin)
      return u.origin === new URL(origin).origin ? u.toString() : null
    } catch {
      return null
    }
  }
  return null
}

/** A listing this much shorter than the last complete one deletes nothing the first time it is seen. */
export const SHORT_LISTING_RATIO = 0.5
/** Below this many articles the ratio says nothing. */
export const SHORT_LISTING_MIN = 10

/**
 * Whether a complete-looking listing is suspiciously short: less than half of the last complete listing
 * (of at least 10 articles). The same short listing seen twice in a row is believed (a help centre that
 * really lost half its articles), so a real mass deletion waits one sync, never forever.
 */
export function shortListing(listed: number, reference: number | null, previousWasShort: boolean): boolean {
  if (reference === null || reference < SHORT_LISTING_MIN || previousWasShort) return false
  return listed < reference * SHORT_LISTING_RATIO
}

/** "••••" and the last four characters, nothing of a secret of 6 characters or fewer (as actions show theirs). */
export const secretHint = (secret: string): string => (secret.length <= 6 ? '••••' : `••••${secret.slice(-4)}`)

/** Markdown and MDX files of a repository folder (`path` empty: the whole repository). */
export function inDocsFolder(file: string, folder: string | null): boolean {
  if (!/\.(md|mdx|markdown)$/i.test(file)) return false
  const f = trimSlashes(folder ?? '', true)
  return f === '' || file.startsWith(`${f}/`)
}

/** `s` without slashes at its end (and its start with `both`), by a scan: `/\/+$/` is quadratic on a run of slashes. */
export function trimSlashes(s: string, both = false): string {
  let end = s.length
  while (end > 0 && s.charCodeAt(end - 1) === 47) end--
  let start = 0
  if (both) while (start < end && s.charCodeAt(start) === 47) start++
  return s.slice(start, end)
}
