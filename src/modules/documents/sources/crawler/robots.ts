import robotsParserModule from 'robots-parser'
import { decodeBody, type Fetcher } from './fetcher.js'

export interface RobotsRules {
  /** Null when allowed, else the reason to record. */
  check(url: string): string | null
  sitemaps: string[]
  /** Crawl-delay for our agent, in ms (capped). */
  delayMs: number
}

const MAX_ROBOTS_BYTES = 512 * 1024
const MAX_CRAWL_DELAY_MS = 5000

// The package is CommonJS (module.exports = fn) while its typings declare a default export.
const robotsParser = ((robotsParserModule as unknown as { default?: unknown }).default ?? robotsParserModule) as unknown as typeof robotsParserModule.default

const allowAll: RobotsRules = { check: () => null, sitemaps: [], delayMs: 0 }
const denyAll = (why: string): RobotsRules => ({ check: () => `robots.txt unavailable (${why})`, sitemaps: [], delayMs: 0 })

/**
 * robots.txt per origin, fetched once per crawl. As RFC 9309 says: a missing file (4xx) allows
 * everything; an unreachable one (5xx, network) disallows everything until the next crawl.
 */
export class RobotsCache {
  private readonly byOrigin = new Map<string, Promise<RobotsRules>>()

  constructor(
    private readonly fetcher: Fetcher,
    private readonly userAgent: string,
    private readonly signal?: AbortSignal,
  ) {}

  rules(url: string): Promise<RobotsRules> {
    const origin = new URL(url).origin
    let p = this.byOrigin.get(origin)
    if (!p) this.byOrigin.set(origin, (p = this.load(origin)))
    return p
  }

  private async load(origin: string): Promise<RobotsRules> {
    const robotsUrl = `${origin}/robots.txt`
    const res = await this.fetcher.fetch(robotsUrl, { accept: 'text/plain,*/*;q=0.1', maxBytes: MAX_ROBOTS_BYTES, signal: this.signal })
    if (res.kind === 'failed') {
      // A refused address refuses the whole origin; say so rather than "robots.txt unavailable".
      if (res.reason.startsWith('blocked:')) return { check: () => res.reason, sitemaps: [], delayMs: 0 }
      if (res.status && res.status >= 400 && res.status < 500) return allowAll
      if (/too large/.test(res.reason)) return allowAll
      return denyAll(res.reason)
    }
    if (res.kind !== 'ok') return allowAll
    const robots = robotsParser(robotsUrl, decodeBody(res.body, res.charset))
    const ua = this.userAgent
    const delay = robots.getCrawlDelay(ua)
    return {
      check: (u) => (robots.isDisallowed(u, ua) ? 'blocked by robots.txt' : null),
      sitemaps: robots.getSitemaps(),
      delayMs: typeof delay === 'number' && delay > 0 ? Math.min(delay * 1000, MAX_CRAWL_DELAY_MS) : 0,
    }
  }
}
