import { describe, expect, it } from 'vitest'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, startApp, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { handedOff, openEventStream } from './helpers/live.js'
import { addMember } from './helpers/team.js'

/**
 * The live streams' fan-out (contract "Live conversation", event streams): the team streams of a workspace and
 * the streams of one session on a process share one read per wake-up, and each stream still gets exactly its
 * own events, from its own cursor, once, in order (checked against live_events, the source of truth). On
 * PostgreSQL, two instances on one database: an operator message posted on one reaches the streams on the other.
 */
let fake: FakeLlm
let t: TestApp
const onPostgres = Boolean(process.env.DATABASE_URL)

appWithFakeLlm({}, (started) => ({ fake, t } = started))

function openStream(url: string, headers: Record<string, string> = {}) {
  const ids: number[] = []
  const types: string[] = []
  const { cut } = openEventStream(url, headers, (block) => {
    const id = block.match(/^id: (\d+)$/m)?.[1]
    const data = block.match(/^data: (.*)$/m)?.[1]
    if (id && data) {
      ids.push(Number(id))
      types.push(JSON.parse(data).type)
    }
  })
  return { ids, types, cut }
}

const log = (tenantId: string) =>
  t.ctx.db
    .selectFrom('live_events')
    .select(['seq', 'session_id', 'session_seq', 'bot_id', 'internal'])
    .where('tenant_id', '=', tenantId)
    .orderBy('seq')
    .execute()
    .then((rows) => rows.map((r) => ({ ...r, seq: Number(r.seq), session_seq: r.session_seq === null ? null : Number(r.session_seq) })))

describe('live fan-out', () => {
  it('streams of one workspace and of one session, opened from different cursors and bot scopes, each get exactly their events once, in order', async () => {
    const owner = await createTenant(t)
    const other = (await owner.api.post('/bots', { name: 'Other' })).body as { id: string; public_id: string }
    const scoped = await addMember(t, owner, 'agent', { botIds: [other.id] })
    const a = await handedOff(t, owner, { note: 'Please help' })
    const first = (await log(owner.tenantId))[0]!.seq
    const auth = { authorization: `Bearer ${owner.token}` }
    const streams = {
      teamAll: openStream(`${t.url}/escalations/events?after=0`, auth),
      teamMid: openStream(`${t.url}/escalations/events`, { ...auth, 'last-event-id': String(first) }),
      teamScoped: openStream(`${t.url}/escalations/events?after=0`, { authorization: `Bearer ${scoped.token}` }),
      tabAll: openStream(`${t.url}/widget/events?bot_id=${owner.bot.public_id}&session_id=${a.sid}&after=0`),
      tabMid: openStream(`${t.url}/widget/events?bot_id=${owner.bot.public_id}&session_id=${a.sid}`, { 'last-event-id': '1' }),
    }
    const b = await handedOff(t, owner, { bot: other.public_id, note: 'Please help' })
    for (let i = 0; i < 4; i++) {
      const r = await owner.api.post(`/escalations/${(i % 2 ? b : a).ticket.id}/messages`, { content: `Reply ${i}`, internal: i === 2 })
      expect(r.status, r.text).toBe(201)
    }
    const rows = await log(owner.tenantId)
    const expected = {
      teamAll: rows.map((r) => r.seq),
      teamMid: rows.filter((r) => r.seq > first).map((r) => r.seq),
      teamScoped: rows.filter((r) => r.bot_id === other.id || r.bot_id === null).map((r) => r.seq),
      tabAll: rows.filter((r) => r.session_id === a.sid && !r.internal).map((r) => r.session_seq!),
      tabMid: rows.filter((r) => r.session_id === a.sid && !r.internal && r.session_seq! > 1).map((r) => r.session_seq!),
    }
    expect(expected.teamScoped.length).toBeGreaterThan(0)
    expect(expected.tabMid.length).toBeGreaterThan(0)
    for (const [name, s] of Object.entries(streams)) {
      await expect.poll(() => s.ids.length, { timeout: 15_000, message: name }).toBeGreaterThanOrEqual(expected[name as keyof typeof expected].length)
    }
    await new Promise((r) => setTimeout(r, 300))
    for (const [name, s] of Object.entries(streams)) expect({ name, ids: s.ids }).toEqual({ name, ids: expected[name as keyof typeof expected] })
    expect(streams.tabAll.types).toContain('message')
    await Promise.all(Object.values(streams).map((s) => s.cut()))
  })

  it.skipIf(!onPostgres)(
    'two instances on one database: an operator message posted on one reaches the visitor and team streams open on the other',
    async () => {
      const second = await startApp({ env: { LLM_BASE_URL: fake.url }, databaseUrl: t.ctx.config.DATABASE_URL!, worker: false })
      try {
        const owner = await createTenant(t)
        const a = await handedOff(t, owner, { note: 'Please help' })
        const widget = openStream(`${second.url}/widget/events?bot_id=${owner.bot.public_id}&session_id=${a.sid}&after=0`)
        const team = openStream(`${second.url}/escalations/events?after=0`, { authorization: `Bearer ${owner.token}` })
        await new Promise((r) => setTimeout(r, 300))
        const r = await owner.api.post(`/escalations/${a.ticket.id}/messages`, { content: 'Hello from the other instance' })
        expect(r.status, r.text).toBe(201)
        const rows = await log(owner.tenantId)
        await expect.poll(() => widget.types.includes('message'), { timeout: 15_000 }).toBe(true)
        await expect.poll(() => team.ids.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(rows.length)
        expect(team.ids).toEqual(rows.map((x) => x.seq))
        expect(widget.ids).toEqual(rows.filter((x) => x.session_id === a.sid && !x.internal).map((x) => x.session_seq!))
        await Promise.all([widget.cut(), team.cut()])
      } finally {
        await second.close()
      }
    },
  )
})
