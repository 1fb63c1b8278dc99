import type { QueueEntry } from '../sources.repo.js'
import { nonPageExtension, normalizeUrl, sameSite } from './url.fns.js'

export interface FrontierScope {
  site: string
  maxDepth: number
  isExcluded: (url: string) => boolean
  /** Pages the owner deleted: never queued again. */
  ownerExcluded: ReadonlySet<string>
}

/**
 * Which of a page's links join the frontier, at `depth`: same-site only, normalised, de-duplicated,
 * without the owner's exclusions. Links to files that are never pages (images, archives...) are queued
 * as already failed, so the run reports them without fetching them.
 */
export function frontierEntries(links: readonly string[], depth: number, scope: FrontierScope): QueueEntry[] {
  if (depth > scope.maxDepth) return []
  const out = new Map<string, QueueEntry>()
  for (const link of links) {
    const n = normalizeUrl(link)
    if ('problem' in n) continue
    const url = n.url
    if (out.has(url) || !sameSite(url, scope.site)) continue
    if (scope.ownerExcluded.has(url) || scope.isExcluded(url)) continue
    const ext = nonPageExtension(url)
    out.set(url, ext ? { url, depth, state: 'failed', reason: `not a page (.${ext})` } : { url, depth })
  }
  return [...out.values()]
}

/** A page's links worth remembering: normalised, same-site, unique, at most `limit`. */
export function siteLinks(links: readonly string[], site: string, limit = 2000): string[] {
  const out = new Set<string>()
  for (const link of links) {
    const n = normalizeUrl(link)
    if ('url' in n && sameSite(n.url, site)) out.add(n.url)
    if (out.size >= limit) break
  }
  return [...out]
}

/**
 * Failures that say nothing about whether the page still exists (timeouts, network trouble, server
 * errors, rate limiting): the page keeps its previous content instead of being removed as vanished.
 */
export function isTransientFailure(reason: string, status?: number): boolean {
  if (status !== undefined) return status >= 500 || status === 429 || status === 408
  return /^(timeout|network error|connection (refused|reset)|DNS lookup failed|TLS error|robots\.txt unavailable)/.test(reason)
}

export const SCHEDULE_SECONDS = { hourly: 3_600, daily: 86_400, weekly: 7 * 86_400, manual: null } as const

export function nextCrawlAt(schedule: keyof typeof SCHEDULE_SECONDS, from: Date): Date | null {
  const s = SCHEDULE_SECONDS[schedule]
  return s === null ? null : new Date(from.getTime() + s * 1000)
}

/** "Refresh available in N min." - whole minutes, rounded up, never 0. */
export function minutesUntil(from: Date, until: Date): number {
  return Math.max(1, Math.ceil((until.getTime() - from.getTime()) / 60_000))
}
