import { describe, expect, it, vi } from 'vitest'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { rawMail } from './helpers/email.js'
import { createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import { handedOff } from './helpers/live.js'
import { until } from './helpers/wait.js'

/**
 * Working e-mail tickets (issue 52, contract "E-mail channel"): a team answers a customer who wrote by mail.
 * The chat's grace period (OPERATOR_REPLY_GRACE_SECONDS, left at its default of 10 minutes here) is for widget
 * visitors; an e-mail customer's reply leaves at once, as the member wrote it, in the thread.
 */
vi.setConfig({ hookTimeout: 600_000, testTimeout: 300_000 })

let t: TestApp

appWithFakeLlm({ INBOUND_EMAIL_DOMAIN: 'inbound.test' }, (started) => (t = started.t))

const SUBJECT = 'File uploads'

/** A bot with the e-mail channel and no knowledge: a customer's mail becomes a ticket. */
async function emailTicket(owner: Tenant, from: string) {
  const r = await owner.api.put(`/bots/${owner.bot.id}/email`, {
    enabled: true,
    mode: 'answer',
    reply_from: 'Acme Support <support@acme.test>',
    signature: 'The Acme team',
  })
  expect(r.status, r.text).toBe(200)
  const url = t.url + new URL(r.body.inbound_url).pathname
  const raw = rawMail({ to: r.body.inbound_address, from, subject: SUBJECT, body: 'Hi,\n\nhow large may an uploaded file be?\n\nThanks, Jane' })
  const posted = await fetch(url, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: raw })
  expect(posted.status).toBe(202)
  // the sender is told the ticket's number: the hand-off is done
  await t.smtp.waitFor((m) => m.to.includes(from), 60_000)
  const ticket = await until(
    'the ticket',
    async () => ((await owner.api.get('/escalations')).body.tickets as any[]).find((x) => x.user_email === from) ?? null,
    60_000,
  )
  return { ticket, inbound: r.body.inbound_address as string }
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!

describe("an agent's reply on an e-mail ticket", () => {
  it('is mailed at once, as written and signed, in the thread; the response and the thread say when it was mailed', async () => {
    const owner = await createTenant(t)
    expect((await owner.api.patch('/auth/me', { display_name: 'Kim' })).status).toBe(200)
    const from = uniqueEmail('jane')
    const { ticket, inbound } = await emailTicket(owner, from)
    const first = t.smtp.to(from).length
    // tickets and sessions carry the channel and the subject
    expect(ticket).toMatchObject({ channel: 'email', subject: SUBJECT })
    const sessions = await owner.api.get('/chat/sessions')
    expect(sessions.body.sessions.find((x: any) => x.session_id === ticket.session_id)).toMatchObject({ channel: 'email', subject: SUBJECT })

    const clicked = Date.now()
    const sent = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'Hi Jane,\n\nthe limit is 50 MB a file.' })
    expect(sent.status, sent.text).toBe(201)
    expect(sent.body.mailed_at).toEqual(expect.any(String))
    // well inside the 10-minute grace: at once (generous for a loaded machine)
    const mail = await t.smtp.waitFor((m) => m.to.includes(from) && m.text.includes('50 MB'), 30_000)
    const latency = Date.now() - clicked
    expect(latency).toBeLessThan(20_000)
    expect(mail.subject).toBe(`Re: ${SUBJECT}`)
    // reply_from is not confirmed in this test: the mail goes from the service's own address (issue 50, finding 6)
    expect(mail.from).toBe('no-reply@localhost')
    expect(mail.replyTo).toBe(inbound)
    expect(mail.raw.inReplyTo).toBeTruthy()
    const text = mail.text.replace(/\r\n/g, '\n')
    expect(text).toMatch(/^Hi Jane,\n\nthe limit is 50 MB a file\.\n\nKim\n/)
    expect(text).toContain('The Acme team')
    expect(text).not.toMatch(/Our support team has answered|You can also read this reply in the chat|Your question/)
    expect(mail.raw.headers.get('auto-submitted')).toBeUndefined()

    // the thread shows when it was mailed
    const view = await owner.api.get(`/escalations/${ticket.id}`)
    const op = (view.body.transcript as any[]).find((m) => m.role === 'operator' && m.content.includes('50 MB'))
    expect(op.mailed_at).toBe(sent.body.mailed_at)
    const log = await owner.api.get(`/chat/logs/session/${ticket.session_id}`)
    expect((log.body.messages as any[]).find((m) => m.id === sent.body.id).mailed_at).toBe(sent.body.mailed_at)

    // "Send reply and resolve": the same, at once
    const resolved = await owner.api.post(`/escalations/${ticket.id}/resolve`, { resolution_text: 'Hi Jane, files of up to 50 MB are fine. Done!' })
    expect(resolved.status, resolved.text).toBe(200)
    expect(resolved.body.reply_mailed_at).toEqual(expect.any(String))
    const closing = await t.smtp.waitFor((m) => m.to.includes(from) && m.text.includes('Done!'), 30_000)
    expect(closing.text).not.toMatch(/Our support team has answered|You can also read this reply in the chat/)
    expect(closing.text).toContain('Kim')
    expect(t.smtp.to(from).length).toBe(first + 2)
  })

  it('click-to-inbox latency over 10 replies (goal: p95 under 2 s)', async () => {
    const owner = await createTenant(t)
    const from = uniqueEmail('lat')
    const { ticket } = await emailTicket(owner, from)
    const times: number[] = []
    for (let i = 0; i < 10; i++) {
      const clicked = Date.now()
      expect((await owner.api.post(`/escalations/${ticket.id}/messages`, { content: `Reply number ${i}.` })).status).toBe(201)
      await t.smtp.waitFor((m) => m.to.includes(from) && m.text.includes(`Reply number ${i}.`), 30_000)
      times.push(Date.now() - clicked)
    }
    console.log(`click-to-inbox ms: p50 ${pct(times, 50)}, p95 ${pct(times, 95)}, max ${Math.max(...times)} (${times.join(', ')})`)
    // the goal is 2 s; the bound is loose so a loaded CI machine does not fail it (the figure is printed)
    expect(pct(times, 95)).toBeLessThan(15_000)
  })

  it('a chat visitor still gets the grace period: nothing is mailed at once, and no mailed_at', async () => {
    const owner = await createTenant(t)
    const h = await handedOff(t, owner)
    const sent = await owner.api.post(`/escalations/${h.ticket.id}/messages`, { content: 'Looking into it.' })
    expect(sent.status).toBe(201)
    expect(sent.body.mailed_at).toBeNull()
    expect(h.ticket).toBeTruthy()
    expect((await owner.api.get(`/escalations/${h.ticket.id}`)).body).toMatchObject({ channel: 'widget', subject: null })
    const replies = await t.ctx.db.selectFrom('operator_replies').select(['mail_status', 'due_at', 'created_at']).where('ticket_id', '=', h.ticket.id).execute()
    expect(replies).toHaveLength(1)
    expect(replies[0]!.mail_status).toBe('pending')
    expect(new Date(replies[0]!.due_at).getTime() - new Date(replies[0]!.created_at).getTime()).toBeGreaterThanOrEqual(599_000)
  })
})

describe('an e-mail customer never leaves', () => {
  it('the visitor_gone sweep skips e-mail conversations: the ticket stays in the queue while a silent chat visitor is marked', async () => {
    const owner = await createTenant(t)
    const from = uniqueEmail('stays')
    const { ticket } = await emailTicket(owner, from)
    const chat = await handedOff(t, owner)
    t.clock.advance(11 * 60_000)
    const id = await t.ctx.queue.enqueue('live.visitor_gone', {})
    await until('the gone sweep', async () => {
      const job = await t.ctx.db.selectFrom('jobs').select('status').where('id', '=', id!).executeTakeFirst()
      if (job?.status === 'failed') throw new Error('the gone sweep failed')
      return job?.status === 'done'
    })
    expect((await owner.api.get(`/escalations/${chat.ticket.id}`)).body.visitor_gone).toBe(true)
    const mail = (await owner.api.get(`/escalations/${ticket.id}`)).body
    expect(mail).toMatchObject({ visitor_gone: false, channel: 'email' })
    const session = await t.ctx.db.selectFrom('chat_sessions').select('visitor_gone').where('id', '=', ticket.session_id).executeTakeFirstOrThrow()
    expect(session.visitor_gone).toBe(false)
    // the queue: the e-mail ticket first (still waiting), the chat whose visitor left last
    const view = await owner.api.get('/escalations?needs_person=true')
    expect(view.body.tickets.map((x: { id: string }) => x.id)).toEqual([ticket.id, chat.ticket.id])
  })
})
