import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { startFakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { REFUNDS_MD, SHIPPING_MD, withDocs } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'
import { until } from './helpers/wait.js'

/**
 * An evaluation run interrupted by a restart resumes on the next process where it stopped: the cases already
 * answered are not asked again, the others are, and the run ends `done` with every case, instead of hanging
 * in `running` or ending early as "partial".
 */
const QUESTIONS = [
  'How long does standard shipping to Germany take?',
  'How long do refunds take?',
  'Do you ship to Austria?',
  'Can I get a refund for a used item?',
  'How much does express shipping cost?',
  'Who pays for return shipping?',
]

it('a run interrupted by a restart resumes after its last stored result and finishes with every case', { timeout: 180_000 }, async () => {
  const fake = await startFakeLlm()
  const dir = mkdtempSync(join(tmpdir(), 'scb-evals-'))
  const env = { LLM_BASE_URL: fake.url }
  let first: TestApp | null = null
  let second: TestApp | null = null
  try {
    first = await startApp({ env, pgliteDir: join(dir, 'pgdata'), keepDatabase: true })
    const owner = await createTenant(first)
    await withDocs(first, owner, { 'refunds.md': REFUNDS_MD, 'shipping.md': SHIPPING_MD })
    for (const question of QUESTIONS) expect((await owner.api.post('/evals/cases', { question, expect: { outcome: 'answered' } })).status).toBe(201)
    // every model call takes a while, so the process stops in the middle of the run
    fake.fail('slow_first_token', { delayMs: 1200 })
    const started = await owner.api.post('/evals/runs', {})
    expect(started.status, started.text).toBe(202)
    const runId = started.body.id as string
    await until('the first case answered', async () => (await owner.api.get(`/evals/runs/${runId}`)).body.results.length >= 1, 60_000)
    const databaseUrl = first.ctx.config.DATABASE_URL
    await first.close()
    first = null

    second = await startApp({ env, pgliteDir: join(dir, 'pgdata'), databaseUrl, worker: false })
    const api = second.api().withToken(owner.token)
    const stopped = (await api.get(`/evals/runs/${runId}`)).body
    expect(stopped.status).toBe('running')
    expect(stopped.results.length).toBeGreaterThanOrEqual(1)
    expect(stopped.results.length).toBeLessThan(QUESTIONS.length)
    const answeredBefore = stopped.results.map((r: { case_id: string }) => r.case_id)
    const cases = (await api.get('/evals/cases')).body.items as { id: string; question: string }[]
    const askedBefore = new Set<string>(answeredBefore.map((id: string) => cases.find((c) => c.id === id)!.question))
    await second.close()
    second = null

    fake.reset()
    second = await startApp({ env, pgliteDir: join(dir, 'pgdata'), databaseUrl })
    const api2 = second.api().withToken(owner.token)
    const done = await until(
      'the resumed run',
      async () => {
        const r = (await api2.get(`/evals/runs/${runId}`)).body
        return r.status === 'done' || r.status === 'failed' ? r : null
      },
      90_000,
    )
    expect(done.status, done.error).toBe('done')
    expect(done.partial).toBe(false)
    expect(done.totals.cases).toBe(QUESTIONS.length)
    expect(new Set(done.results.map((r: { case_id: string }) => r.case_id)).size).toBe(QUESTIONS.length)
    expect(done.results.flatMap((r: { checks: { name: string }[] }) => r.checks.map((c) => c.name))).not.toContain('turn')
    // the cases answered before the restart were not asked again
    const askedAfter = fake.chatCalls().map((c) => JSON.stringify(c.request.body))
    for (const q of askedBefore) expect(askedAfter.some((body) => body.includes(q))).toBe(false)

    // a run whose job is gone (the process died on the job's last attempt) is failed by the sweep, saying why
    const orphan = await second.ctx.db
      .insertInto('eval_runs')
      .values({
        tenant_id: owner.tenantId,
        bot_id: null,
        tags: null,
        repeat: 1,
        error: null,
        created_by: null,
        created_at: second.clock.now(),
        status: 'running',
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    await second.ctx.db
      .updateTable('jobs')
      .set({ run_at: new Date(0) })
      .where('kind', '=', 'evals.sweep')
      .where('status', '=', 'queued')
      .execute()
    const failed = await until(
      'the sweep',
      async () => {
        const r = (await api2.get(`/evals/runs/${orphan.id}`)).body
        return r.status === 'failed' ? r : null
      },
      30_000,
    )
    expect(failed.error).toMatch(/interrupted .*start it again/)
  } finally {
    await second?.close()
    await first?.close()
    await fake.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
