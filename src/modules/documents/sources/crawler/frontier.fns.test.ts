import { describe, expect, it } from 'vitest'
import { frontierEntries, isTransientFailure, minutesUntil, nextCrawlAt } from './frontier.fns.js'
import { compileExclusions } from './url.fns.js'

const scope = {
  site: 'e.com',
  maxDepth: 3,
  isExcluded: compileExclusions(['/blog/**']),
  ownerExcluded: new Set(['https://e.com/removed']),
}

describe('frontierEntries', () => {
  it('keeps same-site pages once, normalised, and reports non-pages as failed', () => {
    const links = [
      'https://e.com/a#x',
      'https://E.com/a?utm_source=nl',
      'https://www.e.com/b',
      'https://other.com/c',
      'https://e.com/blog/post',
      'https://e.com/removed',
      'https://e.com/logo.png',
      'ftp://e.com/file',
    ]
    expect(frontierEntries(links, 2, scope)).toEqual([
      { url: 'https://e.com/a', depth: 2 },
      { url: 'https://www.e.com/b', depth: 2 },
      { url: 'https://e.com/logo.png', depth: 2, state: 'failed', reason: 'not a page (.png)' },
    ])
  })
  it('stops past the maximum depth', () => {
    expect(frontierEntries(['https://e.com/deep'], 4, scope)).toEqual([])
  })
})

describe('failure kinds and schedules', () => {
  it('treats server trouble as transient and 404 as gone', () => {
    expect(isTransientFailure('http 503', 503)).toBe(true)
    expect(isTransientFailure('timeout')).toBe(true)
    expect(isTransientFailure('http 404', 404)).toBe(false)
    expect(isTransientFailure('blocked by robots.txt')).toBe(false)
  })
  it('computes the next crawl and the minutes left', () => {
    const t = new Date('2024-01-01T00:00:00Z')
    expect(nextCrawlAt('daily', t)?.toISOString()).toBe('2024-01-02T00:00:00.000Z')
    expect(nextCrawlAt('weekly', t)?.toISOString()).toBe('2024-01-08T00:00:00.000Z')
    expect(nextCrawlAt('manual', t)).toBeNull()
    expect(minutesUntil(t, new Date(t.getTime() + 59 * 60_000 + 1))).toBe(60)
    expect(minutesUntil(t, new Date(t.getTime() + 1000))).toBe(1)
  })
})
