import { afterEach, describe, expect, it } from 'vitest'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { handedOff } from './helpers/live.js'

/**
 * A ticket's transcript is the conversation to date (contract "Model servers": visitor, bot and operator
 * messages, never internal notes), not the copy taken when the ticket opened: what the visitor wrote after
 * the hand-off was missing from GET /escalations/{id}.
 */
let fake: FakeLlm
let t: TestApp
appWithFakeLlm({}, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())

describe('ticket transcript', () => {
  it('holds what the visitor and the operator wrote after the hand-off, in order, and never a note', async () => {
    const owner = await createTenant(t)
    const { visitor, bot, sid, ticket } = await handedOff(t, owner)
    const say = (message: string) =>
      fetch(`${visitor.base}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor.ip },
        body: JSON.stringify({ message }),
      }).then((r) => r.text())

    await say('Order 1234 was paid on Monday')
    const reply = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'Thanks, checking order 1234 now.' })
    expect(reply.status, reply.text).toBe(201)
    const note = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'Internal: VIP customer', internal: true })
    expect(note.status, note.text).toBe(201)
    await say('Any news?')

    const got = await owner.api.get(`/escalations/${ticket.id}`)
    expect(got.status, got.text).toBe(200)
    const lines = (got.body.transcript as { role: string; content: string }[]).map((m) => `${m.role}: ${m.content}`)
    const paid = lines.indexOf('user: Order 1234 was paid on Monday')
    const answered = lines.indexOf('operator: Thanks, checking order 1234 now.')
    const news = lines.indexOf('user: Any news?')
    expect(paid, lines.join('\n')).toBeGreaterThanOrEqual(0)
    expect(answered).toBeGreaterThan(paid)
    expect(news).toBeGreaterThan(answered)
    expect(lines.some((l) => l.includes('VIP'))).toBe(false)
    // the note is still on the ticket, apart from the transcript
    expect(got.body.notes.map((n: { content: string }) => n.content)).toContain('Internal: VIP customer')

    // another workspace cannot read it
    const other = await createTenant(t)
    expect((await other.api.get(`/escalations/${ticket.id}`)).status).toBe(404)
  })
})
