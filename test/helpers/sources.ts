import type { TestApp } from './app.js'
import type { Tenant } from './factories.js'

/**
 * Polls a source until its latest crawl run has ended; returns the detail. 60 s by default: a crawl of a few pages
 * took over 20 s on the 2-core machine at a load of 12.
 */
export async function waitForCrawl(tenant: Tenant, sourceId: string, opts: { runs?: number; timeoutMs?: number } = {}): Promise<any> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000)
  const wantRuns = opts.runs ?? 1
  let last: any
  while (Date.now() < deadline) {
    const r = await tenant.api.get(`/documents/sources/${sourceId}`)
    if (r.status !== 200) throw new Error(`source detail: ${r.status} ${r.text}`)
    last = r.body
    const runs = last.recent_runs as { status: string }[]
    if (runs.length >= wantRuns && runs[0]!.status !== 'running' && last.status !== 'queued') return last
    await new Promise((res) => setTimeout(res, 50))
  }
  throw new Error(`crawl did not finish: ${JSON.stringify(last)?.slice(0, 2000)}`)
}

/** Polls until no page of the source is still being indexed. */
export async function waitForIndexed(tenant: Tenant, sourceId: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs
  let last: any
  while (Date.now() < deadline) {
    last = (await tenant.api.get(`/documents/sources/${sourceId}`)).body
    if (last.pages.length > 0 && last.pages.every((p: { status: string }) => p.status !== 'processing') && last.status !== 'indexing') return last
    await new Promise((res) => setTimeout(res, 50))
  }
  throw new Error(`pages not indexed: ${JSON.stringify(last)?.slice(0, 2000)}`)
}

/** The crawled page documents of a source, straight from the database. */
export function pageDocuments(t: TestApp, sourceId: string) {
  return t.ctx.db
    .selectFrom('documents')
    .select(['id', 'source_url', 'title', 'parsed_text', 'content_hash', 'status', 'file_type', 'chunk_count', 'updated_at'])
    .where('source_id', '=', sourceId)
    .orderBy('source_url')
    .execute()
}

/** Paths of a site's URLs, for readable assertions. */
export const pathsOf = (site: { url: string }, urls: string[]) => urls.map((u) => u.replace(site.url, '')).sort()
