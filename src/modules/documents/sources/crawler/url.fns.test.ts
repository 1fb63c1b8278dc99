import { describe, expect, it } from 'vitest'
import { compileExclusions, nonPageExtension, normalizeUrl, pageLabel, sameSite, siteKey } from './url.fns.js'

const norm = (u: string, base?: string) => normalizeUrl(u, base)

describe('normalizeUrl', () => {
  it('lower-cases the host, drops fragments, default ports and tracking parameters, sorts the query', () => {
    expect(norm('HTTPS://Docs.Example.COM:443/Guide/Intro?b=2&utm_source=x&a=1&gclid=z#top')).toEqual({
      url: 'https://docs.example.com/Guide/Intro?a=1&b=2',
    })
    expect(norm('http://example.com:80')).toEqual({ url: 'http://example.com/' })
    expect(norm('http://example.com:8080/a/../b/./c')).toEqual({ url: 'http://example.com:8080/b/c' })
    expect(norm('http://example.com/?utm_medium=a')).toEqual({ url: 'http://example.com/' })
  })

  it('resolves relative links against the page', () => {
    expect(norm('../x?q=1#h', 'https://example.com/a/b/c')).toEqual({ url: 'https://example.com/a/x?q=1' })
  })

  it('refuses other schemes, credentials and junk', () => {
    expect(norm('ftp://example.com/')).toEqual({ problem: 'scheme' })
    expect(norm('file:///etc/passwd')).toEqual({ problem: 'scheme' })
    expect(norm('javascript:alert(1)')).toEqual({ problem: 'scheme' })
    expect(norm('https://user:pw@example.com/')).toEqual({ problem: 'credentials' })
    expect(norm('https://user@example.com/')).toEqual({ problem: 'credentials' })
    expect(norm('not a url')).toEqual({ problem: 'invalid' })
    expect(norm(`https://example.com/${'a'.repeat(3000)}`)).toEqual({ problem: 'too_long' })
  })
})

describe('site scope and labels', () => {
  it('treats www and the bare host as one site, other subdomains as others', () => {
    const site = siteKey('https://www.example.com/')
    expect(sameSite('https://example.com/x', site)).toBe(true)
    expect(sameSite('http://www.example.com/y', site)).toBe(true)
    expect(sameSite('https://blog.example.com/', site)).toBe(false)
    expect(sameSite('https://example.org/', site)).toBe(false)
  })
  it('spots binary links by extension', () => {
    expect(nonPageExtension('https://e.com/logo.PNG')).toBe('png')
    expect(nonPageExtension('https://e.com/files/a.zip?x=1')).toBe('zip')
    expect(nonPageExtension('https://e.com/docs/page')).toBeNull()
    expect(nonPageExtension('https://e.com/page.html')).toBeNull()
  })
  it('labels a page by host and path', () => {
    expect(pageLabel('https://e.com/')).toBe('e.com')
    expect(pageLabel('https://e.com/docs/a?x=1')).toBe('e.com/docs/a?x=1')
  })
})

describe('compileExclusions', () => {
  it('matches globs on the path, sections with and without a trailing slash, and bare globs anywhere', () => {
    const ex = compileExclusions(['/blog/**', '*.pdf', '/private', 'https://e.com/admin/*'])
    expect(ex('https://e.com/blog')).toBe(true)
    expect(ex('https://e.com/blog/')).toBe(true)
    expect(ex('https://e.com/blog/2024/post')).toBe(true)
    expect(ex('https://e.com/blogroll')).toBe(false)
    expect(ex('https://e.com/docs/manual.pdf')).toBe(true)
    expect(ex('https://e.com/private')).toBe(true)
    expect(ex('https://e.com/private/x')).toBe(false)
    expect(ex('https://e.com/admin/users')).toBe(true)
    expect(ex('https://e.com/docs/start')).toBe(false)
  })
  it('excludes nothing without patterns', () => {
    expect(compileExclusions([])('https://e.com/anything')).toBe(false)
    expect(compileExclusions(['  '])('https://e.com/anything')).toBe(false)
  })
})
