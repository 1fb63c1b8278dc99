import { XMLParser } from 'fast-xml-parser'

export interface SitemapContent {
  /** Page URLs listed by a <urlset>. */
  pages: string[]
  /** Child sitemaps listed by a <sitemapindex>. */
  sitemaps: string[]
}

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  processEntities: true,
  // Entities beyond the XML built-ins are not expanded (no billion-laughs).
  htmlEntities: false,
  isArray: (name) => name === 'url' || name === 'sitemap',
})

const locs = (items: unknown): string[] =>
  (Array.isArray(items) ? items : [])
    .map((i) => (i && typeof i === 'object' ? (i as { loc?: unknown }).loc : undefined))
    .filter((l): l is string => typeof l === 'string' && l.trim().length > 0)
    .map((l) => l.trim())

/** Reads a sitemap or a sitemap index; anything unreadable yields nothing rather than failing the crawl. */
export function parseSitemap(xml: string, limit = 50_000): SitemapContent {
  let doc: Record<string, any>
  try {
    doc = parser.parse(xml) as Record<string, any>
  } catch {
    return { pages: [], sitemaps: [] }
  }
  return {
    pages: locs(doc?.urlset?.url).slice(0, limit),
    sitemaps: locs(doc?.sitemapindex?.sitemap).slice(0, limit),
  }
}
