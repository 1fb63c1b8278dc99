import { XMLParser } from 'fast-xml-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { isAnswer, REFUNDS_MD, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import type { Api } from './helpers/http.js'
import { until } from './helpers/wait.js'

/**
 * Issue 37, evaluations as an attacker would use them: a tenant's regular expression runs in linear time
 * (a catastrophic pattern never stalls the process), what the engine cannot run is a 422 naming it, and the
 * import and JUnit report hold against hostile bytes.
 */
let fake: FakeLlm
let t: TestApp
let owner: Tenant

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true' } })
  owner = await createTenant(t)
  await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
}, 120_000)
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

async function runToEnd(api: Api, body: Record<string, unknown>, during?: () => Promise<void>) {
  const started = await api.post('/evals/runs', body)
  expect(started.status, started.text).toBe(202)
  return until(
    'the evaluation run',
    async () => {
      await during?.()
      const r = await api.get(`/evals/runs/${started.body.id}`)
      return r.body.status === 'done' || r.body.status === 'failed' ? r.body : null
    },
    90_000,
  )
}

const importFile = (api: Api, text: string, name = 'cases.csv') => {
  const form = new FormData()
  form.append('file', new Blob([text]), name)
  return api.post('/evals/cases/import', form)
}

describe('tenant regular expressions run in linear time', () => {
  it('keeps /health under 1 s while a run checks /(a+)+$/ against a long run of a', async () => {
    const tag = 'redos'
    const c = await owner.api.post('/evals/cases', {
      question: 'How long do refunds take?',
      expect: { outcome: 'answered', facts: ['/(a+)+$/'], forbidden: ['/^(a|aa)+$/'] },
      tags: [tag],
    })
    expect(c.status, c.text).toBe(201)
    // 29 a's and a full stop: exponential backtracking for a backtracking engine (about a minute; 27 took 15 s)
    fake.script((req) => (isAnswer(req as never) ? { text: `${'a'.repeat(29)}.` } : undefined))
    let slowest = 0
    let probes = 0
    const run = await runToEnd(owner.api, { tags: [tag] }, async () => {
      const at = performance.now()
      const h = await t.api().get('/health')
      slowest = Math.max(slowest, performance.now() - at)
      probes++
      expect(h.status).toBe(200)
    })
    fake.reset()
    expect(probes).toBeGreaterThan(0)
    expect(slowest).toBeLessThan(1000)
    expect(run.status, JSON.stringify(run)).toBe('done')
    const checks = run.results[0].checks
    // the text as the model wrote it: ends with a full stop, so /(a+)+$/ is absent (and not a stalled process)
    expect(checks.find((x: any) => x.name === 'fact: /(a+)+$/')).toMatchObject({ passed: false, detail: 'not in the answer' })
    expect(checks.find((x: any) => x.name === 'forbidden: /^(a|aa)+$/')).toMatchObject({ passed: true })
    await owner.api.delete(`/evals/cases/${c.body.id}`)
  }, 120_000)

  it('refuses a pattern the linear-time engine cannot run (backreference, lookaround, huge repeat): a 422 naming the field', async () => {
    for (const [field, pattern, why] of [
      ['facts', '/(a)\\1/', /backreference/],
      ['forbidden', '/(?=refund)/i', /lookahead/],
      ['facts', '/a{5000}/', /repetition/],
    ] as const) {
      const r = await owner.api.post('/evals/cases', { question: 'x', expect: { outcome: 'answered', facts: ['ok'], [field]: ['fine', pattern] } })
      expect(r.status, `${pattern}: ${r.text}`).toBe(422)
      expect(r.body.detail[0].loc).toEqual(['body', 'expect', field, field === 'facts' ? 1 : 1])
      expect(r.body.detail[0].msg).toMatch(why)
    }
    // the same on import: the line is named, the others created
    const csv = ['question,expected_outcome,sources,facts,tags', 'Refunds?,answered,,/(x)\\1/,imp37', 'Refunds again?,answered,,/refund/i,imp37'].join('\n')
    const r = await importFile(owner.api, csv)
    expect(r.status, r.text).toBe(200)
    expect(r.body.created).toBe(1)
    expect(r.body.errors).toEqual([{ line: 2, message: expect.stringMatching(/facts.*backreference/) }])
    for (const c of (await owner.api.get('/evals/cases?tag=imp37')).body.items) await owner.api.delete(`/evals/cases/${c.id}`)
  })
})

describe('hostile imports and reports', () => {
  it('a NUL byte in a CSV import is a 422, not a 500; a NUL escape in a JSONL line is that line refused', async () => {
    const csv = 'question,expected_outcome,sources,facts,tags\nRefunds\u0000?,answered,,,nul\n'
    const r = await importFile(owner.api, csv)
    expect(r.status, r.text).toBe(422)
    expect(r.body.detail[0].loc).toEqual(['body', 'file'])
    const jsonl = [
      '{"question":"Refunds\\u0000?","expect":{"outcome":"answered"},"tags":["nul"]}',
      '{"question":"Lone \\ud800 half","expect":{"outcome":"answered"},"tags":["nul"]}',
    ].join('\n')
    const r2 = await importFile(owner.api, jsonl, 'cases.jsonl')
    expect(r2.status, r2.text).toBe(200)
    expect(r2.body.created).toBe(1)
    expect(r2.body.errors).toEqual([{ line: 1, message: expect.stringMatching(/NUL/) }])
    const items = (await owner.api.get('/evals/cases?tag=nul')).body.items
    expect(items.map((c: any) => c.question)).toEqual(['Lone \ufffd half'])
    for (const c of items) await owner.api.delete(`/evals/cases/${c.id}`)
  })

  it('JUnit XML stays valid XML when a case name holds U+FFFE, U+FFFF or a lone surrogate', async () => {
    const c = await owner.api.post('/evals/cases', {
      question: 'How long do refunds take?\ufffe\uffff \ud800 end',
      expect: { outcome: 'answered', facts: ['never in the answer'] },
      tags: ['xml37'],
    })
    expect(c.status, c.text).toBe(201)
    const run = await runToEnd(owner.api, { tags: ['xml37'] })
    const xml = await owner.api.get(`/evals/runs/${run.id}?format=junit`)
    expect(xml.status).toBe(200)
    expect(xml.text).not.toMatch(/[\ufffe\uffff]|[\ud800-\udfff]/)
    const parsed = new XMLParser({ ignoreAttributes: false }).parse(xml.text)
    expect(parsed.testsuites.testsuite.testcase['@_name']).toMatch(/^How long do refunds take\? (\ufffd )?end/)
    await owner.api.delete(`/evals/cases/${c.body.id}`)
  })

  it('a run that would ask more than 1000 cases is refused, never cut silently at the first 1000', async () => {
    const other = await createTenant(t)
    const header = 'question,expected_outcome,sources,facts,tags'
    const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => `Question ${from + i}?,answered,,,many`)
    for (const [from, n] of [
      [0, 1000],
      [1000, 1],
    ]) {
      const r = await importFile(other.api, [header, ...lines(from!, n!)].join('\n'))
      expect(r.status, r.text).toBe(200)
      expect(r.body.created).toBe(n)
    }
    const r = await other.api.post('/evals/runs', { tags: ['many'] })
    expect(r.status, r.text).toBe(422)
    expect(r.body.detail[0].loc).toEqual(['body', 'tags'])
    expect(r.body.detail[0].msg).toMatch(/at most 1000 cases/)
    expect((await other.api.get('/evals/runs')).body.items).toEqual([])
  }, 60_000)
})
