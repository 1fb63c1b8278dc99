import { compileGlob, GlobError } from './glob.fns.js'

export const MAX_URL_LENGTH = 2048

/** Query parameters that only track a visit; two URLs differing in them are the same page. */
const TRACKING_PARAM = /^(utm_.*|gclid|dclid|gbraid|wbraid|fbclid|msclkid|mc_cid|mc_eid|yclid|_hsenc|_hsmi|_ga|_gl|ref_src|igshid)$/i

export type UrlProblem = 'invalid' | 'scheme' | 'credentials' | 'too_long'

/**
 * The one spelling of a URL the crawler stores and compares: http(s) only, no credentials, lower-case
 * host, no default port, no fragment, no tracking parameters, remaining query parameters sorted.
 */
export function normalizeUrl(input: string, base?: string): { url: string } | { problem: UrlProblem } {
  let u: URL
  try {
    u = base ? new URL(input.trim(), base) : new URL(input.trim())
  } catch {
    return { problem: 'invalid' }
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { problem: 'scheme' }
  if (u.username || u.password) return { problem: 'credentials' }
  if (!u.hostname) return { problem: 'invalid' }
  u.hash = ''
  u.hostname = u.hostname.toLowerCase().replace(/\.$/, '')
  const params = [...u.searchParams].filter(([k]) => !TRACKING_PARAM.test(k))
  params.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
  u.search = params.length ? new URLSearchParams(params).toString() : ''
  const url = u.toString()
  if (url.length > MAX_URL_LENGTH) return { problem: 'too_long' }
  return { url }
}

export const urlProblemMessage: Record<UrlProblem, string> = {
  invalid: 'not a valid URL',
  scheme: 'only http and https URLs can be crawled',
  credentials: 'URLs with a user name or password are not allowed',
  too_long: `URL longer than ${MAX_URL_LENGTH} characters`,
}

/** The site a crawl stays on: the host without a leading "www.", so example.com and www.example.com are one site. */
export const siteKey = (url: string): string => new URL(url).hostname.replace(/^www\./, '')

export const sameSite = (url: string, site: string): boolean => siteKey(url) === site

/** Extensions that are never a page; links to them are reported and not fetched. */
const NON_PAGE_EXT =
  /\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?|mp3|mp4|m4a|wav|ogg|webm|mov|avi|mkv|zip|gz|tgz|bz2|xz|7z|rar|tar|exe|dmg|msi|pkg|deb|rpm|apk|iso|bin|woff2?|ttf|otf|eot|css|js|mjs|map|wasm|docx?|xlsx?|pptx?|odt|ods|csv)$/i

export function nonPageExtension(url: string): string | null {
  const m = NON_PAGE_EXT.exec(new URL(url).pathname)
  return m ? m[1]!.toLowerCase() : null
}

/**
 * Exclusion globs match the decoded URL path. A glob without a leading "/" matches anywhere in the path
 * ("*.pdf", "drafts/**"); a full URL is accepted and reduced to its path.
 */
export function compileExclusions(patterns: readonly string[]): (url: string) => boolean {
  const globs = patterns
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      if (/^https?:\/\//i.test(p)) {
        try {
          const u = new URL(p.replace(/\*/g, '__STAR__'))
          p = decodeURIComponent(u.pathname).replace(/__STAR__/g, '*') || '/'
        } catch {
          /* keep as written */
        }
      }
      return p.startsWith('/') ? p : `**/${p}`
    })
  if (globs.length === 0) return () => false
  // linear-time matching (glob.fns.ts); "/blog/**" also excludes "/blog" and "/blog/": people mean the whole section
  const matchers = globs.map(storedGlob)
  return (url: string) => {
    const path = safeDecode(new URL(url).pathname)
    return matchers.some((m) => m.test(path))
  }
}

/** A glob saved before globs were checked: an unbalanced brace is read as itself (as picomatch did). */
function storedGlob(glob: string): { test(path: string): boolean } {
  try {
    return compileGlob(glob)
  } catch (err) {
    if (!(err instanceof GlobError)) throw err
    try {
      return compileGlob(glob.replace(/[{}]/g, '\\$&'))
    } catch {
      return { test: () => false }
    }
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** A short human name for a page: "host/path". */
export function pageLabel(url: string): string {
  const u = new URL(url)
  return `${u.host}${u.pathname === '/' ? '' : u.pathname}${u.search}`.slice(0, 255)
}
