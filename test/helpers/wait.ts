import { expect } from 'vitest'
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

/** Waits until the app's worker has no job running and none due, so a clock jump or a shutdown interrupts no job. */
export async function jobsIdle(t: TestApp): Promise<void> {
  await expect
    .poll(
      async () =>
        (
          await t.ctx.db
            .selectFrom('jobs')
            .select('id')
            .where((eb) => eb.or([eb('status', '=', 'running'), eb.and([eb('status', '=', 'queued'), eb('run_at', '<=', t.clock.now())])]))
            .execute()
        ).length,
      { timeout: 10_000 },
    )
    .toBe(0)
}

/** Moves the clock once the worker is idle: a jump longer than the job lease while a job runs would hand that job to a second claim, which no real clock does. */
export async function advanceWhenIdle(t: TestApp, ms: number): Promise<void> {
  await jobsIdle(t)
  t.clock.advance(ms)
}
