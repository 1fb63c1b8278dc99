import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sseFrames } from './helpers/chat.js'
import { startDemo, type DemoProcess } from './helpers/demo-process.js'
import { Api } from './helpers/http.js'
import { until } from './helpers/wait.js'

/**
 * The demo as a newcomer walks it, over HTTP (issue 52, item 11; the browser walk is
 * browser/demo-walk.browser.test.ts): `npm run demo`'s own process, its fake model standing in for a real one. A
 * test mail is answered and cited and leaves no ticket or conversation behind; a German question is answered in
 * German from the English help centre; an agent's message is really translated into German.
 */
let demo: DemoProcess
let owner: Api
let botUuid: string

beforeAll(async () => {
  demo = await startDemo()
  owner = new Api(demo.api)
  const login = await owner.post('/auth/login', { email: 'demo@example.com', password: demo.password })
  expect(login.status, login.text).toBe(200)
  owner.withToken(login.body.token)
  botUuid = (await owner.get('/bots')).body.items[0].id
}, 400_000)
afterAll(async () => {
  await demo?.stop()
})

const origin = () => ({ origin: new URL(demo.page).origin })
async function ask(message: string, sessionId?: string) {
  const visitor = new Api(demo.api)
  const sid = sessionId ?? (await visitor.post('/widget/session/init', { bot_id: demo.botId }, origin())).body.session_id
  const r = await visitor.post(`/widget/chat?bot_id=${demo.botId}&session_id=${sid}`, { message }, origin())
  return { sid: sid as string, done: sseFrames(r.text).find((f) => f.type === 'done'), frames: r.text }
}
const messages = async () => (await owner.get(`/bots/${botUuid}/email/messages?limit=50`)).body.items as any[]

describe('the demo walk over HTTP', { timeout: 300_000 }, () => {
  it("answers the bot page's test mail in the member's inbox, cited, and leaves no ticket or conversation behind", async () => {
    // the demo's bot answers mail from the start: the test mail works at once
    expect((await owner.get(`/bots/${botUuid}/email`)).body.enabled).toBe(true)
    const sent = await owner.post(`/bots/${botUuid}/email/test`, { question: 'Which file types can I upload?' })
    expect(sent.status, sent.text).toBe(202)
    expect(sent.body.status).toBe('queued')
    // one the bot would hand to a person: a customer's mail opens a ticket, a test opens none
    const human = await owner.post(`/bots/${botUuid}/email/test`, { question: 'Hi,\n\nI want to talk to a human please.\n\nThanks,\nJane' })
    expect(human.status, human.text).toBe(202)
    const done = await until(
      'both test mails handled',
      async () => {
        const items = await messages()
        return items.length >= 2 && items.every((m) => m.status !== 'queued') ? items : null
      },
      120_000,
    )
    const answered = done.find((m) => m.id === sent.body.id)
    expect(answered).toMatchObject({
      status: 'answered',
      reason: 'test_mail',
      from: 'demo@example.com',
      subject: 'Which file types can I upload?',
      ticket_number: null,
    })
    expect(answered.reply).toMatch(/PDF, Markdown/)
    expect(answered.reply).toMatch(/Sources:\n\[1\] .*\/help\/knowledge\.html/)
    expect(done.find((m) => m.id === human.body.id)).toMatchObject({ status: 'handed_off', reason: 'test_mail_no_ticket', ticket_number: null })
    // the member's inbox (the demo's outbox) has the cited answer in the test mail's thread
    const mail = demo.outbox().find((m) => m.includes('Subject: Re: Which file types can I upload?'))
    expect(mail, demo.outbox().join('\n---\n').slice(-3000)).toBeTruthy()
    expect(mail).toMatch(/^To: demo@example\.com/m)
    expect(mail).toMatch(/Sources:/)
    expect(mail).toMatch(/help\/knowledge\.html/)
    // nothing left behind: no ticket, no e-mail conversation from the member's address
    const tickets = await owner.get('/escalations?q=demo%40example.com')
    expect(tickets.body.total, tickets.text).toBe(0)
    expect((await owner.get('/escalations')).body.total).toBe(0)
    const sessions = (await owner.get('/chat/sessions?limit=100')).body.sessions as { channel: string }[]
    expect(sessions.filter((s) => s.channel === 'email')).toEqual([])
  })

  it('answers a German question in German from the English help centre, cited', async () => {
    const { done, frames } = await ask('Welche Dateitypen kann ich hochladen?')
    expect(done, frames).toBeTruthy()
    expect(done.language).toBe('de')
    expect(done.text).toMatch(/Sie können PDF-, Markdown-.*hochladen/)
    expect(done.text).not.toMatch(/You can upload/)
    expect(done.sources).toContainEqual({ title: expect.any(String), url: expect.stringMatching(/\/help\/knowledge\.html$/) })
    expect(done.ticket_number).toBeUndefined()
    const key = (await ask('Wie lange funktioniert der alte API-Schlüssel nach einer Rotation?')).done
    expect(key.text).toMatch(/24 Stunden/)
    expect(key.sources.map((s: { url: string }) => s.url)).toContainEqual(expect.stringMatching(/api-keys\.html$/))
  })

  it("hands off a German conversation: the summary's three lines, a German suggestion from the sources, an agent's message translated", async () => {
    const { sid } = await ask('Kann ich das Widget auf localhost verwenden?')
    const visitor = new Api(demo.api)
    const esc = await visitor.post(`/widget/escalate?bot_id=${demo.botId}&session_id=${sid}`, {}, origin())
    expect(esc.status, esc.text).toBe(200)
    const ticket = (await owner.get('/escalations')).body.tickets.find((t: { session_id: string }) => t.session_id === sid)
    expect(ticket.language).toBe('de')
    const summary = await owner.post(`/escalations/${ticket.id}/summary`)
    expect(summary.status, summary.text).toBe(200)
    const lines = summary.body.summary.split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatch(/^Wants: Kann ich das Widget auf localhost verwenden\?/)
    // what the bot answered, not its hand-off line
    expect(lines[1]).toMatch(/^Bot said: .*localhost/)
    expect(lines[1]).not.toMatch(/ESC-\d+/)
    const suggestion = await owner.post(`/escalations/${ticket.id}/suggest`, {})
    expect(suggestion.status, suggestion.text).toBe(200)
    expect(suggestion.body.language).toBe('de')
    expect(suggestion.body.text).toMatch(/Für die lokale Entwicklung können Sie localhost erlauben/)
    expect(suggestion.body.cited.length).toBeGreaterThan(0)
    // the agent writes English; the visitor reads German, the team keeps the original
    const written = 'Hi,\n\nFor local development you can allow localhost.\n\nBest regards'
    const sent = await owner.post(`/escalations/${ticket.id}/messages`, { content: written, translate: true })
    expect(sent.status, sent.text).toBe(201)
    expect(sent.body).toMatchObject({ translated: true, original: written, language: 'de' })
    expect(sent.body.content).toBe('Hallo,\n\nFür die lokale Entwicklung können Sie localhost erlauben.\n\nViele Grüße')
    const h = await visitor.get(`/widget/history?bot_id=${demo.botId}&session_id=${sid}`, origin())
    expect(h.body.messages.at(-1).content).toBe(sent.body.content)
  })
})
