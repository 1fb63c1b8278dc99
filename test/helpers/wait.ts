import type { TestApp } from './app.js'

/** Polls `fn` every 50 ms until it returns something truthy, and returns that; fails naming `what` after the timeout. */
export async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Waits until the tenant has no indexing or knowledge-extraction job queued or running. */
export async function extractionSettled(t: TestApp, tenant: { tenantId: string }): Promise<void> {
  await until('extraction', async () => {
    const jobs = await t.ctx.db
      .selectFrom('jobs')
      .select('id')
      .where('tenant_id', '=', tenant.tenantId)
      .where('kind', 'in', ['knowledge.extract', 'documents.index'])
      .where('status', 'in', ['queued', 'running'])
      .execute()
    return jobs.length === 0
  })
}
