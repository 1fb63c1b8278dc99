import { gunzipSync } from 'node:zlib'
import type { RunRow, SourceRow } from '../sources.repo.js'
import type { CrawlerDeps } from './crawl.types.js'
import { decodeBody } from './fetcher.js'
import { frontierEntries, type FrontierScope } from './frontier.fns.js'
import type { RobotsCache } from './robots.js'
import { parseSitemap } from './sitemap.fns.js'
import { normalizeUrl, sameSite } from './url.fns.js'

const MAX_SITEMAP_FILES = 20
const MAX_SITEMAP_BYTES = 50 * 1024 * 1024

/** Sitemaps named in robots.txt plus /sitemap.xml, following sitemap indexes; their pages join at depth 1. */
export async function discoverSitemaps(
  deps: Pick<CrawlerDeps, 'db' | 'repo' | 'fetcher'>,
  run: RunRow,
  source: SourceRow,
  scope: FrontierScope,
  robots: RobotsCache,
  signal: AbortSignal,
): Promise<void> {
  const { db, repo, fetcher } = deps
  const origin = new URL(source.url).origin
  const rules = await robots.rules(source.url)
  const resolve = (u: string) => {
    const n = normalizeUrl(u, origin)
    return 'url' in n ? [n.url] : []
  }
  const todo = [...new Set([...rules.sitemaps, `${origin}/sitemap.xml`].flatMap(resolve))]
  const done = new Set<string>()
  const pages: string[] = []
  const budget = Math.max(source.max_pages * 5, 1000)
  while (todo.length && done.size < MAX_SITEMAP_FILES && pages.length < budget) {
    const url = todo.shift()!
    if (done.has(url) || !sameSite(url, scope.site)) continue
    done.add(url)
    const res = await fetcher.fetch(url, { accept: 'application/xml,text/xml,*/*;q=0.5', signal, maxBytes: MAX_SITEMAP_BYTES, delayMs: rules.delayMs })
    if (res.kind !== 'ok') continue
    let body = res.body
    if (body[0] === 0x1f && body[1] === 0x8b) {
      try {
        body = gunzipSync(body, { maxOutputLength: MAX_SITEMAP_BYTES })
      } catch {
        continue
      }
    }
    const parsed = parseSitemap(decodeBody(body, res.charset))
    pages.push(...parsed.pages)
    todo.push(...parsed.sitemaps.flatMap(resolve))
  }
  const entries = frontierEntries(pages.slice(0, budget), 1, scope)
  await db.transaction().execute(async (trx) => {
    await repo.enqueueUrls(run.id, entries, trx)
    await repo.updateRun(run.tenant_id, run.id, { sitemap_done: true }, trx)
  })
}
