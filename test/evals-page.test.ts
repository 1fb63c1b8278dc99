import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import type { Api } from './helpers/http.js'
import { addMember, type Member } from './helpers/team.js'

/**
 * GET /evals/cases pages (issue 50, finding 12): past the old cut of 1,000 every case is reachable by following
 * next_cursor, `total` counts them all, and a member limited to some bots pages and counts only its bots' and
 * the shared cases (the scope is in the query, not a filter after it).
 */
let t: TestApp
let owner: Tenant
let analyst: Member
let botA: string
let botB: string

const PER_BOT_A = 400
const PER_BOT_B = 405
const SHARED = 400
const ALL = PER_BOT_A + PER_BOT_B + SHARED // 1,205

beforeAll(async () => {
  t = await startApp()
  owner = await createTenant(t)
  botA = owner.bot.id
  const b = await owner.api.post('/bots', { name: 'Zeta bot' })
  expect(b.status, b.text).toBe(201)
  botB = b.body.id
  analyst = await addMember(t, owner, 'analyst', { botIds: [botA] })

  // two imports (at most 1,000 lines each), the three kinds interleaved so each page mixes them
  const lines: string[] = []
  for (let i = 0; i < ALL; i++) {
    const bot = i % 3 === 0 && i / 3 < SHARED ? null : i % 3 === 1 && (i - 1) / 3 < PER_BOT_A ? botA : botB
    lines.push(JSON.stringify({ ...(bot ? { bot_id: bot } : {}), question: `Question ${i}?`, expect: { outcome: 'answered' }, tags: [i % 2 ? 'odd' : 'even'] }))
  }
  for (const part of [lines.slice(0, 1000), lines.slice(1000)]) {
    const form = new FormData()
    form.append('file', new Blob([part.join('\n')]), 'cases.jsonl')
    const imported = await owner.api.post('/evals/cases/import', form)
    expect(imported.status, imported.text).toBe(200)
    expect(imported.body).toEqual({ created: part.length, errors: [] })
  }
}, 300_000)
afterAll(async () => {
  await t?.close()
})

type Case = { id: string; bot_id: string | null; question: string }
type Page = { items: Case[]; next_cursor: string | null; total: number }

/** Follows next_cursor to the end; returns every item and each page's total. */
async function allPages(api: Api, query: string) {
  const items: Case[] = []
  const totals: number[] = []
  let cursor: string | null = null
  for (let n = 0; n < 50; n++) {
    const r = await api.get(`/evals/cases?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    expect(r.status, r.text).toBe(200)
    const page = r.body as Page
    items.push(...page.items)
    totals.push(page.total)
    cursor = page.next_cursor
    if (!cursor) return { items, totals }
  }
  throw new Error('the cursor never ended')
}

describe('GET /evals/cases pages', () => {
  it('pages all 1,205 cases in creation order with the right total, and a default page of 100', async () => {
    const first = await owner.api.get('/evals/cases')
    expect(first.status, first.text).toBe(200)
    expect(first.body.items).toHaveLength(100)
    expect(first.body.total).toBe(ALL)
    expect(first.body.next_cursor).toEqual(expect.any(String))

    const { items, totals } = await allPages(owner.api, 'limit=500')
    expect(totals).toEqual([ALL, ALL, ALL])
    expect(items).toHaveLength(ALL)
    expect(new Set(items.map((c) => c.id)).size).toBe(ALL)
    // an import gives its cases one time: the id orders them, and no case is skipped or repeated at a page edge
    expect(new Set(items.map((c) => c.question)).size).toBe(ALL)

    const odd = await allPages(owner.api, 'tag=odd&limit=1000')
    expect(odd.items).toHaveLength(Math.floor(ALL / 2))
    expect(odd.totals[0]).toBe(Math.floor(ALL / 2))
  })

  it("a member limited to one bot pages and counts its bot's and the shared cases, never another bot's", async () => {
    const first = await analyst.api.get('/evals/cases?limit=1')
    expect(first.status, first.text).toBe(200)
    expect(first.body.total).toBe(PER_BOT_A + SHARED)

    const { items, totals } = await allPages(analyst.api, 'limit=300')
    expect(items).toHaveLength(PER_BOT_A + SHARED)
    expect(new Set(totals)).toEqual(new Set([PER_BOT_A + SHARED]))
    expect(items.filter((c) => c.bot_id === botB)).toEqual([])
    expect(items.filter((c) => c.bot_id === null)).toHaveLength(SHARED)
  })

  it('a cursor it did not make and a limit out of bounds are 422', async () => {
    for (const cursor of ['garbage', Buffer.from('1700000000000.42').toString('base64url'), 'x'.repeat(201)]) {
      const r = await owner.api.get(`/evals/cases?cursor=${cursor}`)
      expect(r.status, cursor).toBe(422)
    }
    expect((await owner.api.get('/evals/cases?limit=0')).status).toBe(422)
    expect((await owner.api.get('/evals/cases?limit=1001')).status).toBe(422)
  })
})
