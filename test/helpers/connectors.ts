import type { Tenant } from './factories.js'

/** A paragraph of an article about `topic`, long enough to be a real passage. */
export const articleHtml = (topic: string, extra = '') =>
  `<p>${topic}: ${`${topic} is explained here in plain words for the reader. `.repeat(4)}</p><p>${extra}</p>`

/** Polls the source until a sync newer than `after` (ISO) has ended; returns the detail. */
export async function waitForSync(tenant: Tenant, sourceId: string, after: string | null = null, timeoutMs = 180_000): Promise<any> {
  const deadline = Date.now() + timeoutMs
  let last: any
  while (Date.now() < deadline) {
    const r = await tenant.api.get(`/documents/sources/${sourceId}`)
    if (r.status !== 200) throw new Error(`source detail: ${r.status} ${r.text}`)
    last = r.body
    const ls = last.last_sync
    if (ls && (!after || ls.finished_at > after) && last.recent_runs[0]?.status !== 'running' && last.status !== 'queued') return last
    await new Promise((res) => setTimeout(res, 50))
  }
  throw new Error(`sync did not finish: ${JSON.stringify(last)?.slice(0, 2000)}`)
}

/** Refreshes and waits for that sync to end. */
export async function resync(tenant: Tenant, sourceId: string): Promise<any> {
  const before = (await tenant.api.get(`/documents/sources/${sourceId}`)).body.last_sync?.finished_at ?? null
  const r = await tenant.api.post(`/documents/sources/${sourceId}/refresh`, {})
  if (r.status !== 200) throw new Error(`refresh: ${r.status} ${r.text}`)
  return waitForSync(tenant, sourceId, before)
}
