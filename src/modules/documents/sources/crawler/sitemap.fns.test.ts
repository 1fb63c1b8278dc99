import { describe, expect, it } from 'vitest'
import { parseSitemap } from './sitemap.fns.js'

describe('parseSitemap', () => {
  it('reads a urlset', () => {
    const xml = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc> https://e.com/a </loc><lastmod>2024-01-01</lastmod></url><url><loc>https://e.com/b?x=1&amp;y=2</loc></url></urlset>`
    expect(parseSitemap(xml)).toEqual({ pages: ['https://e.com/a', 'https://e.com/b?x=1&y=2'], sitemaps: [] })
  })
  it('reads a sitemap index, also with a single entry and namespace prefixes', () => {
    const xml = `<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>https://e.com/s1.xml</sm:loc></sm:sitemap></sm:sitemapindex>`
    expect(parseSitemap(xml)).toEqual({ pages: [], sitemaps: ['https://e.com/s1.xml'] })
  })
  it('yields nothing for junk and does not expand custom entities', () => {
    expect(parseSitemap('<html><body>not a sitemap</body></html>')).toEqual({ pages: [], sitemaps: [] })
    expect(parseSitemap('<<<')).toEqual({ pages: [], sitemaps: [] })
    const bomb = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><urlset><url><loc>https://e.com/&b;</loc></url></urlset>`
    const r = parseSitemap(bomb)
    expect(r.pages.join('').length).toBeLessThan(200)
  })
})
