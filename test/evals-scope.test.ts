import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { WebhookReceiver } from './fakes/webhook-receiver.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, REFUNDS_MD, SHIPPING_MD, withDocs } from './helpers/chat.js'
import { upload } from './helpers/documents.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import type { Api } from './helpers/http.js'
import { addMember, type Member } from './helpers/team.js'
import { until } from './helpers/wait.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Evaluations and bot scope, automatic runs and restarts. A member limited to some bots sees its bots' cases and
 * the shared (bot-less) ones, changes only its bots' cases, and sees, runs and compares only its bots' runs; a
 * workspace-wide run (bot_id null) is another bot's business and a 404. With evals_auto_run on, a knowledge
 * change starts one run (changes close together join it), then at most one an hour.
 */
let fake: FakeLlm
let t: TestApp
let owner: Tenant
let editor: Member
let analyst: Member
let botA: string
let botB: string

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, EVAL_AUTO_RUN_DELAY_SECONDS: '1', CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true' } })
  owner = await createTenant(t)
  await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
  botA = owner.bot.id
  const b = await owner.api.post('/bots', { name: 'Zeta bot' })
  expect(b.status, b.text).toBe(201)
  botB = b.body.id
  editor = await addMember(t, owner, 'editor', { botIds: [botA] })
  analyst = await addMember(t, owner, 'analyst', { botIds: [botA] })
}, 120_000)
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const newCase = async (api: Api, body: Record<string, unknown>) => {
  const r = await api.post('/evals/cases', body)
  expect(r.status, r.text).toBe(201)
  return r.body as { id: string; bot_id: string | null }
}

async function runToEnd(api: Api, body: Record<string, unknown> = {}) {
  const started = await api.post('/evals/runs', body)
  expect(started.status, started.text).toBe(202)
  return until(
    'the evaluation run',
    async () => {
      const r = await owner.api.get(`/evals/runs/${started.body.id}`)
      return r.body.status === 'done' || r.body.status === 'failed' ? r.body : null
    },
    60_000,
  )
}

const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((x) => x.id)

describe('bot scope of evaluations', () => {
  it('a member limited to bot A sees A and shared cases, never changes B or shared ones, and creates cases of its bot only', async () => {
    const a = await newCase(owner.api, { bot_id: botA, question: 'How long do refunds take?', expect: { outcome: 'answered' }, tags: ['scope'] })
    const b = await newCase(owner.api, { bot_id: botB, question: 'What is project Zeta?', expect: { outcome: 'answered' }, tags: ['scope'] })
    const shared = await newCase(owner.api, { question: 'Hello?', expect: { outcome: 'answered' }, tags: ['scope'] })

    for (const m of [editor, analyst]) {
      const listed = ids(await m.api.get('/evals/cases?tag=scope'))
      expect(listed).toEqual([a.id, shared.id])
    }
    expect(ids(await owner.api.get('/evals/cases?tag=scope'))).toEqual([a.id, b.id, shared.id])

    expect((await editor.api.patch(`/evals/cases/${b.id}`, { tags: ['mine'] })).status).toBe(404)
    expect((await editor.api.delete(`/evals/cases/${b.id}`)).status).toBe(404)
    const sharedChange = await editor.api.patch(`/evals/cases/${shared.id}`, { tags: ['mine'] })
    expect(sharedChange.status).toBe(403)
    expect(sharedChange.body.detail).toMatch(/shared by every bot/)
    expect((await editor.api.delete(`/evals/cases/${shared.id}`)).status).toBe(403)
    const moved = await editor.api.patch(`/evals/cases/${a.id}`, { bot_id: botB })
    expect(moved.status).toBe(422)
    expect(moved.body.detail[0].loc).toEqual(['body', 'bot_id'])
    expect((await editor.api.patch(`/evals/cases/${a.id}`, { tags: ['scope', 'edited'] })).status).toBe(200)

    const foreign = await editor.api.post('/evals/cases', { bot_id: botB, question: 'x', expect: { outcome: 'answered' } })
    expect(foreign.status).toBe(422)
    expect(foreign.body.detail[0].loc).toEqual(['body', 'bot_id'])
    // its only bot when none is named: a bot-less case would be asked of every bot
    const own = await newCase(editor.api, { question: 'Where is my parcel?', expect: { outcome: 'answered' }, tags: ['scope-own'] })
    expect(own.bot_id).toBe(botA)

    const jsonl = [
      JSON.stringify({ question: 'Mine by default', expect: { outcome: 'answered' }, tags: ['scope-import'] }),
      JSON.stringify({ bot_id: botB, question: 'Not mine', expect: { outcome: 'answered' }, tags: ['scope-import'] }),
    ].join('\n')
    const form = new FormData()
    form.append('file', new Blob([jsonl]), 'cases.jsonl')
    const imported = await editor.api.post('/evals/cases/import', form)
    expect(imported.status, imported.text).toBe(200)
    expect(imported.body).toEqual({ created: 1, errors: [{ line: 2, message: 'bot_id: No such bot in this workspace' }] })
    const importedCases = (await owner.api.get('/evals/cases?tag=scope-import')).body.items
    expect(importedCases.map((c: { bot_id: string }) => c.bot_id)).toEqual([botA])

    const sessionB = await chatApi(t, owner).post('/chat', {
      question: 'How long do refunds take?',
      bot_public_id: (await owner.api.get(`/bots/${botB}`)).body.public_id,
    })
    expect(sessionB.status, sessionB.text).toBe(200)
    expect((await editor.api.post(`/evals/cases/from-session/${sessionB.body.session_id}`, {})).status).toBe(404)
    const fromB = await owner.api.post(`/evals/cases/from-session/${sessionB.body.session_id}`, {})
    expect(fromB.status, fromB.text).toBe(201)
    expect(fromB.body.bot_id).toBe(botB)

    for (const c of [a, b, shared, own, fromB.body, ...importedCases]) await owner.api.delete(`/evals/cases/${c.id}`)
  })

  it("a limited member runs only its bots; another bot's run and a workspace-wide run are 404 for read, JUnit and diff", async () => {
    await newCase(owner.api, { bot_id: botA, question: 'How long do refunds take?', expect: { outcome: 'answered' }, tags: ['runs'] })
    await newCase(owner.api, { bot_id: botB, question: 'What is project Zeta?', expect: { outcome: 'answered' }, tags: ['runs'] })
    const wide = await runToEnd(owner.api, { tags: ['runs'] })
    const onB = await runToEnd(owner.api, { tags: ['runs'], bot_id: botB })
    expect(onB.totals.cases).toBe(1)

    const refused = await editor.api.post('/evals/runs', { tags: ['runs'], bot_id: botB })
    expect(refused.status).toBe(422)
    expect(refused.body.detail[0].loc).toEqual(['body', 'bot_id'])
    // no bot named: its only bot
    const mine = await runToEnd(editor.api, { tags: ['runs'] })
    expect(mine.totals.cases).toBe(1)
    expect(mine.results.map((r: { case_id: string }) => r.case_id)).not.toContain(onB.results[0].case_id)

    for (const m of [editor, analyst]) {
      expect(ids(await m.api.get('/evals/runs'))).toEqual([mine.id])
      for (const other of [wide.id, onB.id]) {
        expect((await m.api.get(`/evals/runs/${other}`)).status).toBe(404)
        expect((await m.api.get(`/evals/runs/${other}?format=junit`)).status).toBe(404)
        expect((await m.api.get(`/evals/runs/${mine.id}/diff?against=${other}`)).status).toBe(404)
        expect((await m.api.get(`/evals/runs/${other}/diff?against=${mine.id}`)).status).toBe(404)
      }
      expect((await m.api.get(`/evals/runs/${mine.id}?format=junit`)).status).toBe(200)
    }
    expect(ids(await owner.api.get('/evals/runs'))).toEqual(expect.arrayContaining([wide.id, onB.id, mine.id]))
  })

  it('a member limited to two bots names the bot of its run and of its new case', async () => {
    const both = await addMember(t, owner, 'editor', { botIds: [botA, botB] })
    const run = await both.api.post('/evals/runs', {})
    expect(run.status).toBe(422)
    expect(run.body.detail[0]).toMatchObject({ loc: ['body', 'bot_id'], type: 'bot_required' })
    // automatic runs ask every bot's cases: not a limited member's switch
    const auto = await both.api.put('/evals/settings', { evals_auto_run: true })
    expect(auto.status).toBe(403)
    expect(auto.body.detail).toMatch(/every bot/)
    expect((await both.api.get('/evals/settings')).body).toEqual({ evals_auto_run: false })
    const c = await both.api.post('/evals/cases', { question: 'x', expect: { outcome: 'answered' } })
    expect(c.status).toBe(422)
    expect(c.body.detail[0].loc).toEqual(['body', 'bot_id'])
  })
})

describe('automatic runs (evals_auto_run)', () => {
  it('two quick knowledge changes start one run, announced once by eval.run.completed; none while the switch is off', async () => {
    const ws = await createTenant(t)
    const receiver = await new WebhookReceiver().start()
    try {
      const hook = await ws.api.post('/webhooks/endpoints', { url: receiver.url, events: ['eval.run.completed'] })
      expect(hook.status, hook.text).toBe(201)
      await newCase(ws.api, { question: 'How long do refunds take?', expect: { outcome: 'answered' } })
      expect((await ws.api.get('/evals/settings')).body).toEqual({ evals_auto_run: false })
      await withDocs(t, ws, { 'off.md': '# Opening hours\n\nThe shop opens at 9 am on weekdays and closes at 6 pm.' })
      // switched on but without a case: no empty run either
      const empty = await createTenant(t)
      expect((await empty.api.put('/evals/settings', { evals_auto_run: true })).status).toBe(200)
      await withDocs(t, empty, { 'hours.md': '# Opening hours\n\nThe shop opens at 9 am on weekdays and closes at 6 pm.' })
      await sleep(2500)
      expect((await ws.api.get('/evals/runs')).body.items).toEqual([])
      expect((await empty.api.get('/evals/runs')).body.items).toEqual([])

      const on = await ws.api.put('/evals/settings', { evals_auto_run: true })
      expect(on.status, on.text).toBe(200)
      expect(on.body).toEqual({ evals_auto_run: true })
      for (const [name, md] of [
        ['refunds.md', REFUNDS_MD],
        ['shipping.md', SHIPPING_MD],
      ] as const)
        expect((await upload(ws.api, name, md)).status).toBe(201)
      const run = await until(
        'the automatic run',
        async () => {
          const items = (await ws.api.get('/evals/runs')).body.items
          return items.length && items[0].status === 'done' ? items : null
        },
        60_000,
      )
      expect(run).toHaveLength(1)
      expect(run[0].trigger).toBe('auto')
      await until('eval.run.completed', async () => receiver.ofType('eval.run.completed').length >= 1)
      // later changes wait for the hour: still one run
      expect((await ws.api.delete(`/documents/${(await ws.api.get('/documents')).body.documents[0].id}`)).status).toBe(204)
      await sleep(3000)
      expect((await ws.api.get('/evals/runs')).body.items).toHaveLength(1)
      expect(receiver.ofType('eval.run.completed')).toHaveLength(1)
      const next = await t.ctx.db
        .selectFrom('jobs')
        .select('run_at')
        .where('kind', '=', 'evals.auto')
        .where('tenant_id', '=', ws.tenantId)
        .where('status', '=', 'queued')
        .execute()
      expect(next).toHaveLength(1)
      expect(next[0]!.run_at.getTime()).toBeGreaterThan(t.clock.now().getTime() + 50 * 60_000)
    } finally {
      await receiver.close()
    }
  })
})
