import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { handedOff, openEventStream } from './helpers/live.js'

/**
 * Issue 37, live conversation as an attacker would use it: open event streams are capped (per session and
 * per address, the slot given back when a stream closes), typing repeats store no rows and are not replayed,
 * and a lone surrogate in an operator's message, a note or a visitor's text is kept (as U+FFFD), never a 500.
 */
let fake: FakeLlm
let t: TestApp

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url } })
}, 180_000)
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

/** Opens a stream and reports its status as soon as the response starts; `close` drops it. */
async function openRaw(url: string, headers: Record<string, string>) {
  const controller = new AbortController()
  const res = await fetch(url, { headers, signal: controller.signal })
  if (res.status !== 200) await res.text()
  return {
    status: res.status,
    body: res.status === 200 ? null : res,
    close: () => controller.abort(),
  }
}

const typingRows = (sessionId: string) =>
  t.ctx.db.selectFrom('live_events').select('seq').where('session_id', '=', sessionId).where('type', '=', 'typing').execute()

describe('event streams are capped', () => {
  it('5 streams per visitor session: the 6th is a 429, and a closed stream gives its slot back', async () => {
    const owner = await createTenant(t)
    const { bot, sid } = await handedOff(t, owner)
    const url = `${t.url}/widget/events?bot_id=${bot}&session_id=${sid}`
    const headers = { 'x-forwarded-for': '198.51.100.21' }
    const open = []
    for (let i = 0; i < 5; i++) {
      const s = await openRaw(url, headers)
      expect(s.status, `stream ${i + 1}`).toBe(200)
      open.push(s)
    }
    const sixth = await openRaw(url, headers)
    expect(sixth.status).toBe(429)
    open[0]!.close()
    await expect
      .poll(
        async () => {
          const s = await openRaw(url, headers)
          if (s.status === 200) open.push(s)
          return s.status
        },
        { timeout: 10_000 },
      )
      .toBe(200)
    for (const s of open) s.close()
  })

  it('50 streams per address: the 51st is a 429', async () => {
    const owner = await createTenant(t)
    const headers = { authorization: `Bearer ${owner.token}`, 'x-forwarded-for': '198.51.100.50' }
    const open = []
    for (let i = 0; i < 50; i++) {
      const s = await openRaw(`${t.url}/escalations/events`, headers)
      expect(s.status, `stream ${i + 1}`).toBe(200)
      open.push(s)
    }
    const over = await openRaw(`${t.url}/escalations/events`, headers)
    expect(over.status).toBe(429)
    // another address is not affected
    const other = await openRaw(`${t.url}/escalations/events`, { ...headers, 'x-forwarded-for': '198.51.100.51' })
    expect(other.status).toBe(200)
    other.close()
    for (const s of open) s.close()
  }, 60_000)
})

describe('typing', () => {
  it('repeats within a few seconds store no rows; a change of state does', async () => {
    const owner = await createTenant(t)
    const { visitor, bot, sid, ticket } = await handedOff(t, owner)
    for (let i = 0; i < 10; i++) expect((await visitor.post(`/widget/typing?bot_id=${bot}&session_id=${sid}`, { on: true })).status).toBeLessThan(300)
    expect(await typingRows(sid)).toHaveLength(1)
    await visitor.post(`/widget/typing?bot_id=${bot}&session_id=${sid}`, { on: false })
    expect(await typingRows(sid)).toHaveLength(2)
    for (let i = 0; i < 10; i++) expect((await owner.api.post(`/escalations/${ticket.id}/typing`, { on: true })).status).toBeLessThan(300)
    expect(await typingRows(sid)).toHaveLength(3)
  })

  it('a reconnecting stream does not replay typing from before it opened, but gets the messages', async () => {
    const owner = await createTenant(t)
    const { visitor, bot, sid, ticket } = await handedOff(t, owner)
    const start = (await t.ctx.db
      .selectFrom('chat_sessions')
      .select('live_seq' as never)
      .where('id', '=', sid)
      .executeTakeFirstOrThrow()) as {
      live_seq: string | number
    }
    await owner.api.post(`/escalations/${ticket.id}/typing`, { on: true })
    const sent = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'Back in a moment' })
    expect(sent.status, sent.text).toBeLessThan(300)
    const frames: any[] = []
    const s = openEventStream(`${t.url}/widget/events?bot_id=${bot}&session_id=${sid}&after=${start.live_seq}`, { 'x-forwarded-for': visitor.ip }, (b) => {
      const data = b.match(/^data: (.*)$/m)?.[1]
      if (data) frames.push(JSON.parse(data))
    })
    await expect.poll(() => frames.some((f) => f.type === 'message'), { timeout: 10_000 }).toBe(true)
    // typing after it opened does reach it
    await owner.api.post(`/escalations/${ticket.id}/typing`, { on: false })
    await expect.poll(() => frames.filter((f) => f.type === 'typing').length, { timeout: 10_000 }).toBe(1)
    expect(frames.filter((f) => f.type === 'typing')[0]).toMatchObject({ on: false })
    await s.cut()
  })
})

describe('a lone surrogate is kept, never a 500', () => {
  it("in an operator's message, a note and a visitor's text to a person-owned conversation", async () => {
    const owner = await createTenant(t)
    const { visitor, bot, sid, ticket } = await handedOff(t, owner)
    const take = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'Hello \ud800 from support' })
    expect(take.status, take.text).toBeLessThan(300)
    const note = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'note \udc00 here', internal: true })
    expect(note.status, note.text).toBeLessThan(300)
    const said = await visitor.post(`/widget/chat?bot_id=${bot}&session_id=${sid}`, { message: 'my order \ud83d is late' })
    expect(said.status, said.text).toBe(200)
    const history = await owner.api.get(`/chat/history/${sid}`)
    expect(history.status).toBe(200)
    const contents = JSON.stringify(history.body)
    expect(contents).toContain('Hello \ufffd from support')
    expect(contents).toContain('my order \ufffd is late')
    const detail = await owner.api.get(`/escalations/${ticket.id}`)
    expect(JSON.stringify(detail.body)).toContain('note \ufffd here')
  })
})
