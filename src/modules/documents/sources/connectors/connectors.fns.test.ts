import { describe, expect, it } from 'vitest'
import { parseConnectorConfig } from './config.js'
import { inDocsFolder, nextLink, rateLimitWait, secretHint, shortListing, trimSlashes } from './connectors.fns.js'
import { webBase } from './github.js'

const now = Date.parse('2026-01-01T00:00:00Z')
const unix = now / 1000

describe('rateLimitWait', () => {
  it('reads each vendor as documented', () => {
    expect(rateLimitWait('zendesk', 429, { 'retry-after': '7' }, now)).toBe(7)
    expect(rateLimitWait('freshdesk', 429, { 'retry-after': '3' }, now)).toBe(3)
    expect(rateLimitWait('zendesk', 503, { 'retry-after': '7' }, now)).toBeNull()
    expect(rateLimitWait('intercom', 429, { 'x-ratelimit-reset': String(unix + 12) }, now)).toBe(12)
    expect(rateLimitWait('intercom', 429, { 'x-ratelimit-reset': String(unix - 5) }, now)).toBe(0)
    // GitHub: a 403 is a rate limit only with retry-after or no requests left
    expect(rateLimitWait('github', 403, {}, now)).toBeNull()
    expect(rateLimitWait('github', 403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(unix + 30) }, now)).toBe(30)
    expect(rateLimitWait('github', 403, { 'retry-after': '5', 'x-ratelimit-reset': String(unix + 30) }, now)).toBe(5)
    expect(rateLimitWait('github', 429, {}, now)).toBe(60)
    expect(rateLimitWait('github', 403, { 'x-ratelimit-remaining': '0' }, now)).toBe(60)
  })
  it('takes an HTTP date in Retry-After and ignores garbage', () => {
    expect(rateLimitWait('zendesk', 429, { 'retry-after': 'Thu, 01 Jan 2026 00:00:20 GMT' }, now)).toBe(20)
    expect(rateLimitWait('zendesk', 429, { 'retry-after': 'soon' }, now)).toBe(10)
  })
})

describe('nextLink', () => {
  const origin = 'https://acme.freshdesk.com'
  it('finds rel="next" on the account host only', () => {
    expect(nextLink('<https://acme.freshdesk.com/api/v2/x?page=2>; rel="next"', origin)).toBe('https://acme.freshdesk.com/api/v2/x?page=2')
    expect(nextLink('<https://acme.freshdesk.com/p1>; rel="prev", <https://acme.freshdesk.com/p3>; rel=next', origin)).toBe('https://acme.freshdesk.com/p3')
    expect(nextLink('<https://evil.example/steal>; rel="next"', origin)).toBeNull()
    expect(nextLink(null, origin)).toBeNull()
    expect(nextLink('garbage', origin)).toBeNull()
  })
  it('stays linear on a hostile header', () => {
    const started = performance.now()
    nextLink(`<${'<'.repeat(100_000)}`, origin)
    nextLink(','.repeat(100_000), origin)
    expect(performance.now() - started).toBeLessThan(500)
  })
})

describe('shortListing', () => {
  it('holds back a listing under half the last complete one, once', () => {
    expect(shortListing(4, 12, false)).toBe(true)
    expect(shortListing(4, 12, true)).toBe(false)
    expect(shortListing(7, 12, false)).toBe(false)
    expect(shortListing(1, 8, false)).toBe(false)
    expect(shortListing(0, null, false)).toBe(false)
  })
})

describe('small rules', () => {
  it('shows only a hint of a secret', () => {
    expect(secretHint('zd-token-0123456789abcd')).toBe('••••abcd')
    expect(secretHint('short')).toBe('••••')
  })
  it('keeps Markdown files of the folder', () => {
    expect(inDocsFolder('docs/a.md', 'docs')).toBe(true)
    expect(inDocsFolder('docs/sub/b.MDX', '/docs/')).toBe(true)
    expect(inDocsFolder('docsx/a.md', 'docs')).toBe(false)
    expect(inDocsFolder('docs/a.png', 'docs')).toBe(false)
    expect(inDocsFolder('README.md', null)).toBe(true)
  })
  it('knows the web address of a GitHub API', () => {
    expect(webBase('https://api.github.com')).toBe('https://github.com')
    expect(webBase('https://git.acme.com/api/v3')).toBe('https://git.acme.com')
  })
})

describe('parseConnectorConfig', () => {
  const loc = (fn: () => unknown) => {
    try {
      fn()
    } catch (e) {
      return (e as { loc: unknown }).loc
    }
    return null
  }
  it('names the field that is missing or wrong', () => {
    expect(loc(() => parseConnectorConfig('zendesk', { base_url: 'https://acme.zendesk.com', email: 'a@b.c' }, false))).toEqual(['body', 'config', 'api_token'])
    expect(loc(() => parseConnectorConfig('freshdesk', { api_key: 'k' }, false))).toEqual(['body', 'config', 'base_url'])
    expect(loc(() => parseConnectorConfig('zendesk', { base_url: 'http://acme.zendesk.com', email: 'a@b.c', api_token: 't' }, false))).toEqual([
      'body',
      'config',
      'base_url',
    ])
    expect(
      loc(() => parseConnectorConfig('zendesk', { base_url: 'https://x.test', email: 'a@b.c', api_token: 't', locales: ['en-us', 'not a locale'] }, false)),
    ).toEqual(['body', 'config', 'locales', 1])
  })
  it('refuses a private or metadata address unless private networks are allowed (tests)', () => {
    expect(loc(() => parseConnectorConfig('freshdesk', { base_url: 'https://169.254.169.254', api_key: 'k' }, false))).toEqual(['body', 'config', 'base_url'])
    expect(loc(() => parseConnectorConfig('freshdesk', { base_url: 'https://[::1]/', api_key: 'k' }, false))).toEqual(['body', 'config', 'base_url'])
    expect(parseConnectorConfig('freshdesk', { base_url: 'http://127.0.0.1:9', api_key: 'k' }, true).settings.base_url).toBe('http://127.0.0.1:9')
  })
  it('keeps the secret out of the stored settings and fills the defaults', () => {
    const ic = parseConnectorConfig('intercom', { access_token: 'tok-123456' }, false)
    expect(ic).toEqual({ settings: { base_url: 'https://api.intercom.io' }, secret: 'tok-123456' })
    const gh = parseConnectorConfig('github', { repo: 'acme/docs', path: '/docs/' }, false)
    expect(gh).toEqual({ settings: { base_url: 'https://api.github.com', repo: 'acme/docs', ref: null, path: 'docs' }, secret: null })
  })
})

describe('slashes trimmed by scans', () => {
  it('trims the ends only, and a long run of slashes in the middle stays fast', () => {
    expect(trimSlashes('https://acme.zendesk.com///')).toBe('https://acme.zendesk.com')
    expect(trimSlashes('//docs/guides/', true)).toBe('docs/guides')
    expect(trimSlashes('///', true)).toBe('')
    const hostile = `${'/'.repeat(200_000)}x`
    const started = performance.now()
    expect(trimSlashes(hostile)).toBe(hostile)
    expect(performance.now() - started).toBeLessThan(50)
  })
})
