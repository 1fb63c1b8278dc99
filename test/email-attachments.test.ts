import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { makePng, widgetSession } from './helpers/attachments.js'
import { callsSince, isAnswer, REFUNDS_MD, withDocs } from './helpers/chat.js'
import { newMessageId } from './helpers/email.js'
import { createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import { until } from './helpers/wait.js'
import { makePdf } from './fixtures/files.js'

/**
 * An inbound mail's attachments (issue 54, contract "Attachments": E-mail): those of the accepted types within the
 * caps are stored with its message, so the model sees them in the turn and the team in the thread; the rest are
 * listed by name and size only. Typed by their bytes, stripped of metadata, as a widget upload is. And an
 * operator's files on a reply (beyond the contract, docs/attachments.md): to the widget and by e-mail.
 */

vi.setConfig({ hookTimeout: 600_000, testTimeout: 300_000 })

let fake: FakeLlm
let t: TestApp
appWithFakeLlm({ INBOUND_EMAIL_DOMAIN: 'inbound.test', ATTACHMENT_MAX_BYTES: String(64 * 1024) }, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())

const GPS = 'GPSLatitude 52.5200 N GPSLongitude 13.4050 E'

async function emailBot(owner: Tenant) {
  const r = await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer', reply_from: 'Acme Support <support@acme.test>' })
  expect(r.status, r.text).toBe(200)
  return { ...r.body, inbound_url: t.url + new URL(r.body.inbound_url).pathname } as { inbound_address: string; inbound_url: string }
}

type Part = { name: string; type: string; bytes: Buffer; inline?: string }
/** A multipart/mixed mail: the text, then each part base64 (an `inline` part has that Content-ID). */
function mailWith(v: { to: string; from: string; text: string; parts: Part[] }): string {
  const b = 'b-' + Math.random().toString(36).slice(2)
  const lines = [
    `From: ${v.from}`,
    `To: ${v.to}`,
    'Subject: The error on checkout',
    `Message-ID: ${newMessageId('att')}`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${b}"`,
    '',
    `--${b}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    v.text,
  ]
  for (const p of v.parts) {
    lines.push(
      `--${b}`,
      `Content-Type: ${p.type}; name="${p.name}"`,
      'Content-Transfer-Encoding: base64',
      p.inline ? `Content-Disposition: inline; filename="${p.name}"` : `Content-Disposition: attachment; filename="${p.name}"`,
      ...(p.inline ? [`Content-ID: <${p.inline}>`] : []),
      '',
      ...(p.bytes.toString('base64').match(/.{1,76}/g) ?? []),
    )
  }
  lines.push(`--${b}--`, '')
  return lines.join('\r\n')
}

describe('an inbound mail with attachments', () => {
  it('stores the accepted ones with its message (the model gets the images and the PDF text, the team the files); the rest listed only', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const ch = await emailBot(owner)
    fake.script((req) =>
      isAnswer(req as never) ? { text: 'Refunds are processed within 5 business days after we receive the returned item. [1]' } : undefined,
    )
    const from = uniqueEmail('files')
    const parts: Part[] = [
      { name: 'error.png', type: 'image/png', bytes: makePng({ width: 8, height: 6, meta: GPS }) },
      { name: 'invoice.pdf', type: 'application/pdf', bytes: Buffer.from(await makePdf({ pages: 1, marker: 'zebracorn' })) },
      { name: 'logo.svg', type: 'image/svg+xml', bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>') },
      { name: 'setup.png', type: 'image/png', bytes: Buffer.concat([Buffer.from('MZ'), Buffer.alloc(600, 0x90)]) },
      { name: 'huge.png', type: 'image/png', bytes: makePng({ padBytes: 100 * 1024 }) },
      // pasted into the body: a screenshot (kept) and a small signature logo (not an attachment)
      { name: 'pasted.png', type: 'image/png', bytes: makePng({ padBytes: 20 * 1024 }), inline: 'shot@mail' },
      { name: 'sig.png', type: 'image/png', bytes: makePng(), inline: 'logo@mail' },
    ]
    const r = await fetch(ch.inbound_url, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: mailWith({ to: ch.inbound_address, from, text: 'How long do refunds take? The screen shows this.', parts }),
    })
    expect(r.status).toBe(202)
    const base = fake.chatCalls().length
    const item = await until(
      'the mail handled',
      async () => {
        const l = await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=10`)
        const m = l.body.items[0]
        return m && m.status !== 'queued' ? m : null
      },
      120_000,
    )
    expect(item.status, JSON.stringify(item)).toBe('answered')
    // listed: every attachment by name and size; the stored ones carry their id
    expect(item.attachments.map((a: { name: string }) => a.name)).toEqual(['error.png', 'invoice.pdf', 'logo.svg', 'setup.png', 'huge.png', 'pasted.png'])
    const stored = Object.fromEntries(item.attachments.map((a: { name: string; attachment_id?: string }) => [a.name, a.attachment_id]))
    expect(stored['error.png']).toEqual(expect.any(String))
    expect(stored['invoice.pdf']).toEqual(expect.any(String))
    expect(stored['pasted.png']).toEqual(expect.any(String))
    for (const n of ['logo.svg', 'setup.png', 'huge.png']) expect(stored[n], n).toBeUndefined()

    // the turn: both images as image parts, the PDF's text in the visitor's message
    const answer = callsSince(fake, base).find(isAnswer) ?? fake.chatCalls().find(isAnswer)!
    const user = answer.messages.at(-1)!
    expect(user.images).toHaveLength(2)
    expect(user.content).toContain('zebracorn')
    expect(user.content).toContain('[image: error.png]')
    expect(user.content).not.toContain('logo.svg')

    // the team: the files under the customer's message, the image without its GPS
    const log = await owner.api.get(`/chat/logs/session/${item.session_id}`)
    expect(log.status, log.text).toBe(200)
    expect(log.body.messages[0].attachments.map((a: { name: string }) => a.name)).toEqual(['error.png', 'invoice.pdf', 'pasted.png'])
    const file = await fetch(`${t.url}/attachments/${stored['error.png']}`, { headers: { authorization: `Bearer ${owner.token}` } })
    expect(file.status).toBe(200)
    const bytes = Buffer.from(await file.arrayBuffer())
    expect(bytes.includes('GPSLatitude')).toBe(false)
    expect(bytes.subarray(0, 8)).toEqual(makePng().subarray(0, 8))
    // another workspace does not see it
    const other = await createTenant(t)
    expect((await fetch(`${t.url}/attachments/${stored['error.png']}`, { headers: { authorization: `Bearer ${other.token}` } })).status).toBe(404)
  })
})

describe('a retried mail job', () => {
  it('neither stores its files twice nor loses them: its first attempt stored them and its failed turn kept them', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const ch = await emailBot(owner)
    // the first attempt's answer fails (the model down); the retry's answers
    let failing = true
    fake.script((req) => {
      if (!isAnswer(req as never)) return undefined
      return failing ? { status: 500 } : { text: 'Refunds are processed within 5 business days after we receive the returned item. [1]' }
    })
    const parts: Part[] = [
      { name: 'one.png', type: 'image/png', bytes: makePng({ width: 8, height: 6, meta: GPS }) },
      { name: 'two.png', type: 'image/png', bytes: makePng({ width: 9, height: 7 }) },
      { name: 'invoice.pdf', type: 'application/pdf', bytes: Buffer.from(await makePdf({ pages: 1, marker: 'quokkaline' })) },
    ]
    const r = await fetch(ch.inbound_url, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: mailWith({ to: ch.inbound_address, from: uniqueEmail('retry'), text: 'How long do refunds take? See the screens.', parts }),
    })
    expect(r.status).toBe(202)
    const { db } = t.ctx
    const tenantId = owner.tenantId
    // the first attempt failed and its retry waits (the backoff, on the test's clock)
    await until(
      'the first attempt failed',
      async () =>
        (await db
          .selectFrom('jobs')
          .select('attempts')
          .where('tenant_id', '=', tenantId)
          .where('dedupe_key', 'like', 'email-in:%')
          .where('status', '=', 'queued')
          .where('attempts', '>=', 1)
          .executeTakeFirst()) ?? null,
      120_000,
    )
    const mail = (await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=10`)).body.items[0]
    expect(mail.status).toBe('queued')
    const files = () =>
      db.selectFrom('attachments').select(['id', 'name', 'message_id']).where('tenant_id', '=', tenantId).where('session_id', '=', mail.session_id).execute()
    const first = await files()
    expect(first.map((f) => f.name).sort()).toEqual(['invoice.pdf', 'one.png', 'two.png'])
    // the failed turn kept the customer's question with its files (no answer)
    const kept = new Set(first.map((f) => f.message_id))
    expect(kept.size).toBe(1)
    expect([...kept][0]).not.toBeNull()
    // worse than a failed turn: as if the first attempt had died before marking the mail's listing, and after a turn
    // claimed one file for a message it never stored
    await db
      .updateTable('email_messages')
      .set({ attachments: JSON.stringify([]) })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', mail.id)
      .execute()
    await db
      .updateTable('attachments')
      .set({ message_id: '00000000-0000-4000-8000-000000000001' })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', first.find((f) => f.name === 'two.png')!.id)
      .execute()

    failing = false
    const base = fake.chatCalls().length
    t.clock.advance(10 * 60_000)
    const done = await until(
      'the retry answered',
      async () => {
        const m = (await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=10`)).body.items[0]
        return m && m.status !== 'queued' ? m : null
      },
      120_000,
    )
    expect(done.status, JSON.stringify(done)).toBe('answered')
    // the same three files, each once, now the customer's message's
    const after = await files()
    expect(after.map((f) => f.id).sort()).toEqual(first.map((f) => f.id).sort())
    const messageIds = new Set(after.map((f) => f.message_id))
    expect(messageIds.size).toBe(1)
    expect([...messageIds][0]).not.toBeNull()
    // the retry's message sends them, not the first attempt's unanswered one
    expect(messageIds.has([...kept][0]!)).toBe(false)
    expect(done.attachments.map((a: { attachment_id?: string }) => a.attachment_id).sort()).toEqual(first.map((f) => f.id).sort())
    // the model got both images and the PDF's text
    const answer = callsSince(fake, base).filter(isAnswer).at(-1)!
    expect(answer.messages.at(-1)!.images).toHaveLength(2)
    expect(answer.messages.at(-1)!.content).toContain('quokkaline')
    const log = await owner.api.get(`/chat/logs/session/${mail.session_id}`)
    const asked = log.body.messages.filter((m: { role: string; attachments: unknown[] }) => m.role === 'user' && m.attachments.length)
    expect(asked).toHaveLength(1)
    expect(asked[0].attachments.map((a: { name: string }) => a.name)).toEqual(['one.png', 'two.png', 'invoice.pdf'])
  })
})

/** POST /escalations/{id}/attachments with one file, as a member. */
async function operatorUpload(owner: Tenant, ticketId: string, bytes: Uint8Array, name: string) {
  const form = new FormData()
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'application/octet-stream' }), name)
  return owner.api.post(`/escalations/${ticketId}/attachments`, form)
}

describe("an operator's files on a reply", () => {
  it('reach the visitor in the widget (history and download), stay in the bot scope, and are checked as uploads are', async () => {
    const owner = await createTenant(t)
    const api = t.api()
    const sid = await widgetSession(api, owner.bot.public_id)
    const esc = await api.post(`/widget/escalate?bot_id=${owner.bot.public_id}&session_id=${sid}`, {})
    expect(esc.status, esc.text).toBe(200)
    const ticket = (await owner.api.get('/escalations')).body.tickets.find((x: { ticket_number: string }) => x.ticket_number === esc.body.ticket_number)

    const up = await operatorUpload(owner, ticket.id, makePng({ width: 5, height: 5, meta: GPS }), 'steps.png')
    expect(up.status, up.text).toBe(201)
    expect(up.body).toMatchObject({ name: 'steps.png', content_type: 'image/png', kind: 'image' })
    // the same type checks as a visitor's, and another workspace's ticket is not found
    expect((await operatorUpload(owner, ticket.id, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'x.svg')).status).toBe(415)
    expect((await operatorUpload(owner, ticket.id, makePng({ padBytes: 100 * 1024 }), 'big.png')).status).toBe(413)
    const other = await createTenant(t)
    expect((await operatorUpload(other, ticket.id, makePng(), 'a.png')).status).toBe(404)

    // a note cannot carry files; a reply of files alone can
    const note = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'see file', internal: true, attachment_ids: [up.body.id] })
    expect(note.status, note.text).toBe(422)
    const sent = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: '', attachment_ids: [up.body.id] })
    expect(sent.status, sent.text).toBe(201)
    expect(sent.body.attachments).toEqual([up.body])
    // sent once
    expect((await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'again', attachment_ids: [up.body.id] })).status).toBe(422)

    const history = await api.get(`/widget/history?bot_id=${owner.bot.public_id}&session_id=${sid}`)
    const mine = history.body.messages.find((m: { from_operator: boolean }) => m.from_operator)
    expect(mine.attachments).toEqual([up.body])
    const file = await fetch(`${t.url}/widget/attachments/${up.body.id}?bot_id=${owner.bot.public_id}&session_id=${sid}`)
    expect(file.status).toBe(200)
    expect(Buffer.from(await file.arrayBuffer()).includes('GPSLatitude')).toBe(false)
    // the team's thread shows it under the operator's message
    const detail = await owner.api.get(`/escalations/${ticket.id}`)
    expect(detail.body.transcript.find((m: { role: string; attachments: unknown[] }) => m.attachments.length)?.attachments).toEqual([up.body])
  })

  it('reach an e-mail customer as attachments of the reply mail', async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const from = uniqueEmail('mailfiles')
    // nothing in the knowledge: the mail is handed to a person, the sender told the ticket number
    const r = await fetch(ch.inbound_url, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: mailWith({ to: ch.inbound_address, from, text: 'Where is the setup guide for the zebracorn model?', parts: [] }),
    })
    expect(r.status).toBe(202)
    const item = await until(
      'the mail handled',
      async () => {
        const l = await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=10`)
        const m = l.body.items[0]
        return m && m.status !== 'queued' ? m : null
      },
      120_000,
    )
    expect(item.ticket_number, JSON.stringify(item)).toMatch(/^ESC-/)
    const ticket = (await owner.api.get('/escalations')).body.tickets.find((x: { ticket_number: string }) => x.ticket_number === item.ticket_number)
    const pdf = Buffer.from(await makePdf({ pages: 1, marker: 'guide' }))
    const up = await operatorUpload(owner, ticket.id, pdf, 'setup-guide.pdf')
    expect(up.status, up.text).toBe(201)
    const sent = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: 'Here is the guide.', attachment_ids: [up.body.id] })
    expect(sent.status, sent.text).toBe(201)
    const mail = await until('the reply mailed', async () => t.smtp.to(from).find((m) => m.raw.text?.includes('Here is the guide.')) ?? null, 60_000)
    expect(mail.raw.text).toContain('Here is the guide.')
    const att = mail.raw.attachments.find((a) => a.filename === 'setup-guide.pdf')
    expect(att?.contentType).toBe('application/pdf')
    expect(Buffer.compare(att!.content, pdf)).toBe(0)
  })
})
