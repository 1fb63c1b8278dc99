import { describe, expect, it } from 'vitest'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { handedOff } from './helpers/live.js'
import { until } from './helpers/wait.js'

/**
 * Issue 52, items 6 and 7: the default view's count names how many of its tickets' visitors left (one count the
 * title, the badge and the Queue button share), and search finds across every status unless `status` is
 * given, in the whole conversation (words the visitor wrote to the team after the hand-off too).
 */
let t: TestApp

appWithFakeLlm({ VISITOR_GONE_MINUTES: '10' }, (started) => (t = started.t))

async function sweep() {
  const id = await t.ctx.queue.enqueue('live.visitor_gone', {})
  await until('the gone sweep', async () => {
    const job = await t.ctx.db.selectFrom('jobs').select('status').where('id', '=', id!).executeTakeFirst()
    if (job?.status === 'failed') throw new Error('the gone sweep failed')
    return job?.status === 'done'
  })
}

describe('one count', () => {
  it('needs_person answers the total and how many of those visitors left', async () => {
    const owner = await createTenant(t)
    const left = await Promise.all([handedOff(t, owner), handedOff(t, owner), handedOff(t, owner)])
    t.clock.advance(11 * 60_000)
    await sweep()
    const here = await handedOff(t, owner)
    const view = await owner.api.get('/escalations?needs_person=true')
    expect(view.status, view.text).toBe(200)
    expect(view.body).toMatchObject({ total: 4, visitor_gone_total: 3 })
    // the one still here comes first; the three who left after it
    expect(view.body.tickets[0].id).toBe(here.ticket.id)
    expect(new Set(view.body.tickets.slice(1).map((x: { id: string }) => x.id))).toEqual(new Set(left.map((l) => l.ticket.id)))
    // other views carry no such count
    expect((await owner.api.get('/escalations')).body.visitor_gone_total).toBeUndefined()
  })
})

describe('search', () => {
  it('finds a resolved ticket by its number and words across every status unless status is given, and words written after the hand-off', async () => {
    const owner = await createTenant(t)
    const h = await handedOff(t, owner, { note: 'My parcel is late' })
    // the visitor writes to the team after the hand-off: not in the ticket's copy of the transcript
    const res = await fetch(`${h.visitor.base}/widget/chat?bot_id=${h.bot}&session_id=${h.sid}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': h.visitor.ip },
      body: JSON.stringify({ message: 'I am moving to Lisbon next week' }),
    })
    expect(res.status).toBe(200)
    await res.text()
    const find = async (q: string, extra = '') => {
      const r = await owner.api.get(`/escalations?q=${encodeURIComponent(q)}${extra}`)
      expect(r.status, r.text).toBe(200)
      return (r.body.tickets as { id: string; status: string }[]).map((x) => x.id)
    }
    expect(await find('Lisbon')).toEqual([h.ticket.id])
    expect(await find('lisb')).toEqual([h.ticket.id])

    expect((await owner.api.post(`/escalations/${h.ticket.id}/resolve`, { resolution_text: 'It arrives tomorrow.' })).status).toBe(200)
    expect(await find(h.ticket.ticket_number)).toEqual([h.ticket.id])
    expect(await find('Lisbon')).toEqual([h.ticket.id])
    // a status given narrows it
    expect(await find(h.ticket.ticket_number, '&status=open')).toEqual([])
    expect(await find(h.ticket.ticket_number, '&status=resolved')).toEqual([h.ticket.id])
    // another workspace finds nothing of it
    const stranger = await createTenant(t)
    expect((await stranger.api.get('/escalations?q=Lisbon')).body.tickets).toEqual([])
  })
})
