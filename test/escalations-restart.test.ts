import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { ManualClock } from '../src/lib/clock.js'
import { startFakeLlm } from './fakes/fake-llm.js'
import { FakeSmtp } from './fakes/smtp.js'
import { startApp, type TestApp } from './helpers/app.js'
import { sseFrames } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'
import { jobsIdle } from './helpers/wait.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

it('an operator reply is mailed exactly once, or not at all when read, across a restart during the grace period', async () => {
  const fake = await startFakeLlm()
  const smtp = await new FakeSmtp().start()
  const clock = new ManualClock()
  const dir = mkdtempSync(join(tmpdir(), 'scb-esc-'))
  const env = { LLM_BASE_URL: fake.url }
  let second: TestApp | null = null
  try {
    const first = await startApp({ env, smtp, clock, pgliteDir: join(dir, 'pgdata'), keepDatabase: true })
    const owner = await createTenant(first)
    const bot = owner.bot.public_id
    const visitor = first.api()
    const turn = async (sid: string, message: string) =>
      sseFrames(
        await (
          await fetch(`${first.url}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor.ip },
            body: JSON.stringify({ message }),
          })
        ).text(),
      ).find((f) => f.type === 'done')
    // two visitors, each leaves an e-mail after the hand-off; one will read the reply, one will not
    const tickets: Record<string, { sid: string; id: string }> = {}
    for (const who of ['unread', 'read']) {
      const sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id
      const done = await turn(sid, `I want to talk to a human about order ${who}`)
      await turn(sid, `${who}-visitor@example.com`)
      const list = await owner.api.get('/escalations')
      tickets[who] = { sid, id: list.body.tickets.find((x: { ticket_number: string }) => x.ticket_number === done.ticket_number).id }
      const r = await owner.api.post(`/escalations/${tickets[who]!.id}/resolve`, { resolution_text: `Answer for ${who}` })
      expect(r.status, r.text).toBe(200)
    }
    const reply = (await visitor.get(`/widget/history?bot_id=${bot}&session_id=${tickets.read!.sid}`)).body.messages.at(-1)
    expect(reply).toMatchObject({ from_operator: true, content: 'Answer for read' })
    expect((await visitor.post(`/widget/messages/read?bot_id=${bot}&session_id=${tickets.read!.sid}`, { message_id: reply.id })).status).toBe(200)

    // half the grace period passes, then the process stops
    await jobsIdle(first)
    clock.advance(300_000)
    await jobsIdle(first)
    const databaseUrl = first.ctx.config.DATABASE_URL
    await first.close()
    const replyMails = () => smtp.mails.filter((m) => /Reply to your support request/.test(m.subject))
    expect(replyMails()).toHaveLength(0)

    // the rest of the grace period passes while a new process runs on the same database
    second = await startApp({ env, smtp, clock, pgliteDir: join(dir, 'pgdata'), databaseUrl })
    await jobsIdle(second)
    await sleep(200)
    expect(replyMails()).toHaveLength(0)
    clock.advance(301_000)
    const mail = await smtp.waitFor((m) => m.to.includes('unread-visitor@example.com'))
    expect(mail.text).toContain('Answer for unread')
    await jobsIdle(second)
    await second.worker!.drain()
    await sleep(300)
    expect(replyMails().map((m) => m.to)).toEqual([['unread-visitor@example.com']])
    const states = await second.ctx.db.selectFrom('operator_replies').select(['ticket_id', 'mail_status']).execute()
    expect(Object.fromEntries(states.map((s) => [s.ticket_id, s.mail_status]))).toEqual({ [tickets.unread!.id]: 'sent', [tickets.read!.id]: 'read' })
    // the dashboard of the new process shows the same tickets
    const api = second.api().withToken(owner.token)
    expect((await api.get(`/escalations/${tickets.unread!.id}`)).body).toMatchObject({ status: 'resolved', resolution_text: 'Answer for unread' })
  } finally {
    await second?.close()
    await smtp.stop()
    await fake.close()
    rmSync(dir, { recursive: true, force: true })
  }
  // two starts of an on-disk PGlite: about 10 s idle, over 30 s on a loaded 2-core machine
}, 90_000)
