import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { handedOff, openEventStream } from './helpers/live.js'
import { addMember } from './helpers/team.js'
import { until } from './helpers/wait.js'

/**
 * A visitor waiting for a person is told when availability changes (contract "Live conversation", event type
 * `availability`): a member comes online or leaves, the office hours close, an online status lapses (the sweep).
 * Only what changed is sent, only to the waiting visitors of the bots it changed for, never on the team stream.
 */
let t: TestApp
appWithFakeLlm({}, (started) => {
  t = started.t
})

const waiting = (owner: Tenant, bot?: string) => handedOff(t, owner, { bot, note: 'Where is my parcel?' })

/** The availability frames a session's widget stream carries (its stored events, in order). */
const told = async (sid: string) =>
  (
    await t.ctx.db.selectFrom('live_events').select('data').where('session_id', '=', sid).where('type', '=', 'availability').orderBy('session_seq').execute()
  ).map((e) => e.data as { online: boolean; reply_eta_s: number | null; next_open_at: string | null })

/** Runs the minute's sweep now, in the app's worker, and waits for it to finish. */
async function sweep() {
  const id = await t.ctx.queue.enqueue('live.availability', {})
  expect(id).toBeTruthy()
  await until('the availability sweep', async () => {
    const j = await t.ctx.db.selectFrom('jobs').select('status').where('id', '=', id!).executeTakeFirst()
    return j && j.status !== 'queued' && j.status !== 'running' ? j.status : null
  })
}

const setStatus = async (m: { api: Tenant['api'] }, status: string) => {
  const r = await m.api.put('/tenants/me/members/me/status', { status })
  expect(r.status, r.text).toBe(200)
}

describe('availability frames for waiting visitors', () => {
  it('a member coming online and going away is told to the waiting visitor once each; a heartbeat tells nothing', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    const { sid } = await waiting(owner)
    expect(await told(sid)).toEqual([])

    await setStatus(agent, 'online')
    expect(await told(sid)).toEqual([{ online: true, reply_eta_s: null, next_open_at: null }])
    await setStatus(agent, 'online') // the dashboard's heartbeat
    expect(await told(sid)).toHaveLength(1)
    await setStatus(agent, 'away')
    expect((await told(sid)).map((x) => x.online)).toEqual([true, false])

    // a member going online while nothing waits changes no stream, and the sweep finds nothing new to tell
    await sweep()
    expect(await told(sid)).toHaveLength(2)
  })

  it('office hours closing now tell the waiting visitor when the team is back', async () => {
    const owner = await createTenant(t)
    await setStatus(owner, 'online')
    const { sid } = await waiting(owner)
    // the owner came online before anyone waited: nothing was told yet
    expect(await told(sid)).toEqual([])
    const now = t.clock.now()
    const tomorrow = (now.getUTCDay() + 1) % 7
    const put = await owner.api.put('/tenants/me/office-hours', { timezone: 'UTC', weekly: [{ day: tomorrow, start: '09:00', end: '17:00' }], holidays: [] })
    expect(put.status, put.text).toBe(200)
    const [first] = await told(sid)
    expect(first).toMatchObject({ online: false })
    expect(first!.next_open_at).toMatch(/T09:00:00\.000Z$/)
    expect(Date.parse(first!.next_open_at!)).toBeGreaterThan(now.getTime())
  })

  it('the sweep tells a waiting visitor when the only online status lapsed (its dashboard closed), once', async () => {
    const owner = await createTenant(t)
    const agent = await addMember(t, owner, 'agent')
    const { sid } = await waiting(owner)
    await setStatus(agent, 'online')
    expect((await told(sid)).map((x) => x.online)).toEqual([true])
    // no heartbeat for four minutes: the status has lapsed
    const lapsed = new Date(t.clock.now().getTime() - 4 * 60_000)
    await sql`UPDATE users SET live_status_at = ${lapsed} WHERE id = ${agent.userId}`.execute(t.ctx.db)
    await sweep()
    expect((await told(sid)).map((x) => x.online)).toEqual([true, false])
    await sweep()
    expect(await told(sid)).toHaveLength(2)
  })

  it('an agent limited to one bot tells only that bot waiting visitors; the team stream never carries the visitor frame', async () => {
    const owner = await createTenant(t)
    const other = await owner.api.post('/bots', { name: 'Second bot' })
    expect(other.status, other.text).toBe(201)
    const agent = await addMember(t, owner, 'agent', { botIds: [owner.bot.id] })
    const mine = await waiting(owner)
    const theirs = await waiting(owner, other.body.public_id)
    await setStatus(agent, 'online')
    expect((await told(mine.sid)).map((x) => x.online)).toEqual([true])
    // the other bot's visitors were told nothing new: nobody answers them now, as their widget said
    expect((await told(theirs.sid)).every((x) => x.online === false)).toBe(true)

    // over HTTP: the visitor's stream has the frame, the team's has only the workspace event
    await setStatus(agent, 'away')
    const widget = await readStream(`${t.url}/widget/events?bot_id=${mine.bot}&session_id=${mine.sid}&after=0`, {}, (d) => d.online === false)
    expect(widget.filter((d) => d.type === 'availability')).toEqual([
      { type: 'availability', online: true, reply_eta_s: null, next_open_at: null },
      { type: 'availability', online: false, reply_eta_s: null, next_open_at: null },
    ])
    const team = await readStream(`${t.url}/escalations/events?after=0`, { authorization: `Bearer ${owner.token}` }, (d) => d.status === 'away')
    expect(team.filter((d) => d.type === 'availability').map((d) => [d.session_id, d.reason, d.status])).toEqual([
      [null, 'member_status', 'online'],
      [null, 'member_status', 'away'],
    ])
  })
})

/** Reads an event stream until a frame matches (then cuts it): the data of every frame up to that one. */
async function readStream(url: string, headers: Record<string, string>, last: (d: any) => boolean): Promise<any[]> {
  const got: any[] = []
  const stream = openEventStream(url, headers, (block) => {
    const data = block.match(/^data: (.*)$/m)?.[1]
    if (data) got.push(JSON.parse(data))
  })
  try {
    await expect.poll(() => got.some(last), { timeout: 10_000 }).toBe(true)
    return got.slice(0, got.findIndex(last) + 1)
  } finally {
    await stream.cut()
  }
}
