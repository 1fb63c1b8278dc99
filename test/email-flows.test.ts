import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FakeLlm } from './fakes/fake-llm.js'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { isAnswer, REFUNDS_MD, withDocs } from './helpers/chat.js'
import { confirmationLink, fixture, inboundSmtp, newMessageId, rawMail } from './helpers/email.js'
import { createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import { until } from './helpers/wait.js'

vi.setConfig({ hookTimeout: 600_000, testTimeout: 300_000 })

let fake: FakeLlm
let t: TestApp

appWithFakeLlm({ INBOUND_EMAIL_DOMAIN: 'inbound.test', OPERATOR_REPLY_GRACE_SECONDS: '0' }, (started) => ({ fake, t } = started))
afterEach(() => fake.reset())
/** The answer model answers from the refunds page (the fake's own word matching is not under test here). */
const answerRefunds = () =>
  fake.script((req) => (isAnswer(req as never) ? { text: 'Refunds are processed within 5 business days after we receive the returned item. [1]' } : undefined))

async function emailBot(owner: Tenant, body: Record<string, unknown> = {}) {
  const r = await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: true, mode: 'answer', reply_from: 'Acme Support <support@acme.test>', ...body })
  expect(r.status, r.text).toBe(200)
  return { ...r.body, inbound_url: t.url + new URL(r.body.inbound_url).pathname } as { inbound_address: string; inbound_url: string }
}
const post = async (url: string, raw: string) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: raw })
  return { status: r.status, body: (await r.json()) as any }
}
const handled = (owner: Tenant, n: number) =>
  until(
    `${n} messages handled`,
    async () => {
      const r = await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=100`)
      return r.body.items.length >= n && r.body.items.every((m: any) => m.status !== 'queued') ? (r.body.items as any[]) : null
    },
    120_000,
  )

describe('never a loop', () => {
  it('answers none of the automatic mails, daemons or our own addresses, each with its reason', async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner)
    const cases: [Record<string, string>, string, string?][] = [
      [{ 'Auto-Submitted': 'auto-replied' }, 'auto_submitted'],
      [{ 'Auto-Submitted': 'auto-generated' }, 'auto_submitted'],
      [{ 'X-Autoreply': 'yes' }, 'auto_reply_header'],
      [{ 'X-Autorespond': 'Out of office' }, 'auto_reply_header'],
      [{ Precedence: 'bulk' }, 'precedence'],
      [{ Precedence: 'junk' }, 'precedence'],
      [{ Precedence: 'list' }, 'precedence'],
      [{ 'List-Id': 'Newsletter <news.example.test>' }, 'mailing_list'],
      [{ 'Return-Path': '<>' }, 'empty_return_path'],
      [{}, 'daemon_sender', 'MAILER-DAEMON@example.test'],
      [{}, 'daemon_sender', 'postmaster@example.test'],
      [{}, 'daemon_sender', 'no-reply@example.test'],
      [{}, 'daemon_sender', 'noreply@example.test'],
      [{}, 'own_address', 'support@acme.test'],
      [{}, 'own_address', ch.inbound_address],
    ]
    for (const [headers, reason, from] of cases) {
      const r = await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: from ?? uniqueEmail('auto'), headers }))
      expect(r.status).toBe(202)
      expect(r.body, JSON.stringify(headers)).toMatchObject({ status: 'ignored', reason })
    }
    // a person's mail says Auto-Submitted: no (RFC 3834)
    const person = await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: uniqueEmail('p'), headers: { 'Auto-Submitted': 'no' } }))
    expect(person.body.status).toBe('queued')
    const list = (await owner.api.get(`/bots/${owner.bot.id}/email/messages?limit=100`)).body.items
    expect(list.filter((m: any) => m.status === 'ignored')).toHaveLength(cases.length)
    expect(fake.chatCalls().length + t.smtp.mails.filter((m) => m.from === 'support@acme.test').length).toBeGreaterThanOrEqual(0)
    // a disabled channel answers nothing either
    await owner.api.put(`/bots/${owner.bot.id}/email`, { enabled: false, mode: 'answer' })
    expect((await post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: uniqueEmail('d') }))).body).toMatchObject({
      status: 'ignored',
      reason: 'channel_disabled',
    })
  })

  it('sends at most 5 bot answers an hour to one sender under 20 concurrent posts, then a person gets the thread; one Message-ID once', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    answerRefunds()
    const ch = await emailBot(owner)
    const from = uniqueEmail('storm')
    const same = newMessageId('same')
    const posts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(
          ch.inbound_url,
          rawMail({ to: ch.inbound_address, from, subject: `Refund question ${i}`, body: 'How long do refunds take after you receive the returned item?' }),
        ),
      ),
    )
    expect(posts.every((p) => p.status === 202 && p.body.status === 'queued')).toBe(true)
    // one message delivered twice at once (a provider's retry racing the first): one queued, one duplicate
    const twice = await Promise.all([0, 1].map(() => post(ch.inbound_url, rawMail({ to: ch.inbound_address, from: uniqueEmail('twice'), messageId: same }))))
    expect(twice.map((p) => p.body.status).sort()).toEqual(['duplicate', 'queued'])
    expect(twice[0]!.body.id).toBe(twice[1]!.body.id)

    const items = await handled(owner, 21)
    const storm = items.filter((m) => m.from === from)
    expect(storm.filter((m) => m.status === 'answered')).toHaveLength(5)
    const rest = storm.filter((m) => m.status !== 'answered')
    expect(rest).toHaveLength(15)
    expect(rest.every((m) => m.status === 'handed_off' && m.reason === 'sender_rate_limited' && /^ESC-/.test(m.ticket_number))).toBe(true)
    await until('the answers are out', async () => t.smtp.to(from).length >= 5)
    expect(t.smtp.to(from)).toHaveLength(5)
    // answered from an uploaded document (no page address): a "Sources:" line names it by its title (issue 52)
    const answer = t.smtp.to(from)[0]!
    expect(answer.text).toMatch(/Sources:\r?\n\[1\] Refund/)
  })
})

describe('hand-off and people', () => {
  it('tells the sender the ticket number; the reply reaches the team, never the bot; the resolution is mailed in the thread', async () => {
    const owner = await createTenant(t)
    const ch = await emailBot(owner, { signature: 'The Acme team' })
    const from = uniqueEmail('handoff')
    const first = newMessageId('ho')
    // no knowledge: the turn hands off
    expect((await post(ch.inbound_url, fixture('apple-base64.eml', { to: ch.inbound_address, from, messageId: first }))).body.status).toBe('queued')
    const notice = await t.smtp.waitFor((m) => m.to.includes(from))
    expect(notice.text).toMatch(/ESC-0001/)
    expect(notice.raw.inReplyTo).toBe(first)
    const [item] = await handled(owner, 1)
    expect(item).toMatchObject({ status: 'handed_off', ticket_number: 'ESC-0001' })

    // the sender answers in the thread: it lands in the conversation the team has, the bot says nothing
    const calls = fake.chatCalls().length
    const answer = rawMail({
      to: ch.inbound_address,
      from,
      subject: 'Re: Shipping to Switzerland',
      body: 'My order number is 4711.',
      headers: { 'In-Reply-To': notice.raw.messageId!, References: `${first} ${notice.raw.messageId}` },
    })
    expect((await post(ch.inbound_url, answer)).body.status).toBe('queued')
    const items = await handled(owner, 2)
    expect(items[0]).toMatchObject({ status: 'delivered', session_id: item.session_id, ticket_number: 'ESC-0001' })
    expect(fake.chatCalls().length).toBe(calls)
    const messages = await t.ctx.db
      .selectFrom('chat_messages')
      .select(['role', 'content'])
      .where('session_id', '=', item.session_id)
      .orderBy('created_at')
      .execute()
    expect(messages.at(-1)).toMatchObject({ role: 'user', content: 'My order number is 4711.' })

    // the ticket keeps the sender's address; the resolution goes out in the thread from reply_from, with the signature
    const tickets = await owner.api.get('/escalations')
    const ticket = tickets.body.tickets.find((x: any) => x.ticket_number === 'ESC-0001')
    expect(ticket.user_email ?? ticket.visitor_email ?? JSON.stringify(ticket)).toContain(from)
    // reply_from confirmed through the link mailed to it (this test's bot's, the latest), so the resolution carries it
    const link = new URL(confirmationLink(t.smtp.to('support@acme.test').at(-1)!.text))
    expect((await fetch(t.url + link.pathname + link.search, { method: 'POST' })).status).toBe(200)
    const resolved = await owner.api.post(`/escalations/${ticket.id}/resolve`, { resolution_text: 'Yes, we ship to Switzerland for 9 euros.' })
    expect(resolved.status, resolved.text).toBe(200)
    const mailed = await t.smtp.waitFor((m) => m.to.includes(from) && m.text.includes('9 euros'))
    expect(mailed.subject).toBe('Re: Shipping to Switzerland')
    expect(mailed.from).toBe('support@acme.test')
    expect(mailed.replyTo).toBe(ch.inbound_address)
    expect(mailed.raw.inReplyTo).toMatch(/^<m\./)
    expect(mailed.raw.references).toContain(first)
    expect(mailed.text).toContain('The Acme team')
    expect(mailed.raw.headers.get('auto-submitted')).toBeUndefined()
  })

  it('mode draft: the answer waits on the ticket as a suggested reply, nothing is mailed; attachments are listed', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    answerRefunds()
    const ch = await emailBot(owner, { mode: 'draft' })
    const from = uniqueEmail('draft')
    expect((await post(ch.inbound_url, fixture('with-attachment.eml', { to: ch.inbound_address, from }))).body.status).toBe('queued')
    const [item] = await handled(owner, 1)
    expect(item).toMatchObject({ status: 'drafted', ticket_number: expect.stringMatching(/^ESC-/) })
    expect(item.draft).toMatch(/5 business days/)
    // a PDF by its bytes: stored with the message (issue 54), so the listing carries its id
    expect(item.attachments).toEqual([{ name: 'invoice-4711.pdf', type: 'application/pdf', size: expect.any(Number), attachment_id: expect.any(String) }])
    const tickets = await owner.api.get('/escalations')
    const ticket = tickets.body.tickets.find((x: any) => x.ticket_number === item.ticket_number)
    const facts = await owner.api.get(`/escalations/${ticket.id}/email`)
    expect(facts.status, facts.text).toBe(200)
    expect(facts.body.channel).toBe('email')
    expect(facts.body.messages[0]).toMatchObject({ draft: item.draft, attachments: item.attachments })
    expect(JSON.stringify(fake.chatCalls().map((c) => c.messages))).not.toContain('SECRET-INVOICE')
    expect(t.smtp.to(from)).toHaveLength(0)
    const stranger = await createTenant(t)
    expect((await stranger.api.get(`/escalations/${ticket.id}/email`)).status).toBe(404)

    // issue 52, item 4: the ticket says why (draft mode), with no note made up and the evidence the draft cited
    const one = (await owner.api.get(`/escalations/${ticket.id}`)).body
    expect(one.trigger).toBe('email_draft')
    expect(one.user_note).toBeNull()
    expect(one.evidence.length).toBeGreaterThan(0)
    expect(one.evidence[0]).toMatchObject({ document_id: expect.any(String) })
    expect(JSON.stringify(one.evidence)).toContain('Refunds')
    // nothing the bot did not send is in the thread: no bot draft, no "handed over" notice
    const stored = await t.ctx.db.selectFrom('chat_messages').select(['role', 'content']).where('session_id', '=', ticket.session_id).execute()
    expect(stored.map((m) => m.role)).toEqual(['user'])
    expect(JSON.stringify(one.transcript)).not.toMatch(/handed over|5 business days/)
    // the draft waits as a suggested reply in /suggest's shape, for the team only
    const waiting = await owner.api.get(`/escalations/${ticket.id}/draft`)
    expect(waiting.status, waiting.text).toBe(200)
    expect(waiting.body.draft).toMatchObject({
      id: expect.any(String),
      text: item.draft,
      language: 'en',
      cited: [expect.objectContaining({ n: 1, title: expect.stringContaining('Refunds') })],
    })
    expect((await stranger.api.get(`/escalations/${ticket.id}/draft`)).status).toBe(404)
    // a person sends it: mailed at once in the thread, and the draft counts as used (no longer waiting)
    const sent = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: waiting.body.draft.text, suggestion_id: waiting.body.draft.id })
    expect(sent.status, sent.text).toBe(201)
    await t.smtp.waitFor((m) => m.to.includes(from) && m.text.includes('5 business days'))
    expect((await owner.api.get(`/escalations/${ticket.id}/draft`)).body.draft).toBeNull()
  })
})

describe('identity and privacy', () => {
  it('offers no action that needs a verified visitor on e-mail; stores the sender encrypted and the subject and question redacted', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    const base = 'https://orders.acme.example'
    const bound = await owner.api.post('/actions', {
      name: 'order_status',
      description: 'Look up the status of an order by its order number.',
      method: 'GET',
      url: `${base}/users/{user_id}/orders/{order_number}`,
      parameters: [
        { name: 'order_number', source: 'model', schema: { type: 'string' }, required: true },
        { name: 'user_id', source: 'visitor', claim: 'user_id' },
      ],
      enabled: true,
    })
    expect(bound.status, bound.text).toBe(201)
    const open = await owner.api.post('/actions', {
      name: 'store_hours',
      description: 'Opening hours of the store.',
      method: 'GET',
      url: `${base}/hours`,
      enabled: true,
    })
    expect(open.status, open.text).toBe(201)
    answerRefunds()
    const ch = await emailBot(owner)
    const from = uniqueEmail('private')
    const raw = rawMail({
      to: ch.inbound_address,
      from,
      subject: 'Refund for card 4111 1111 1111 1111',
      body: 'How long do refunds take? Call me on +49 170 1234567.',
    })
    expect((await post(ch.inbound_url, raw)).body.status).toBe('queued')
    const [item] = await handled(owner, 1)
    expect(item.status).toBe('answered')

    // the model was offered the action anyone may use, never the one that needs a verified visitor
    const offered = fake.chatCalls().filter((c) => c.body.tools)
    expect(offered.length).toBeGreaterThan(0)
    for (const c of offered) expect(c.body.tools.map((x: any) => x.function.name)).toEqual(['store_hours'])
    expect(JSON.stringify(fake.chatCalls().map((c) => c.messages))).not.toMatch(/4111 1111|1234567/)

    // at rest: the address only encrypted (and as a keyed hash), the subject and the question redacted
    const rows = await t.ctx.db.selectFrom('email_messages').selectAll().where('tenant_id', '=', owner.tenantId).execute()
    for (const r of rows) {
      expect(JSON.stringify(r)).not.toContain(from)
      expect(r.subject ?? '').not.toContain('4111')
    }
    expect(item.subject).toBe('Refund for card [CARD]')
    expect(item.from).toBe(from)
    const session = await t.ctx.db.selectFrom('chat_sessions').selectAll().where('id', '=', item.session_id).executeTakeFirstOrThrow()
    expect(JSON.stringify(session)).not.toContain(from)
    const messages = await t.ctx.db.selectFrom('chat_messages').select(['role', 'content']).where('session_id', '=', item.session_id).execute()
    const question = messages.find((m) => m.role === 'user')!.content
    expect(question).toContain('[CARD]')
    expect(question).toContain('[PHONE]')
    // the answer goes back under the redacted subject: the card number is never mailed back
    const reply = await t.smtp.waitFor((m) => m.to.includes(from))
    expect(reply.subject).toBe('Re: Refund for card [CARD]')
    expect(reply.raw.headers.get('auto-submitted')).toBe('auto-replied')
  })
})

describe('inbound over SMTP', () => {
  it('takes mail for a bot from a real SMTP client, refuses unknown recipients at RCPT and oversized mail, offers STARTTLS with a certificate', async () => {
    const owner = await createTenant(t)
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
    answerRefunds()
    const ch = await emailBot(owner)
    const dir = mkdtempSync(join(tmpdir(), 'smtp-tls-'))
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost'],
      { stdio: 'ignore' },
    )
    const listener = await inboundSmtp(t.ctx, {
      maxBytes: 32 * 1024,
      tlsCert: join(dir, 'cert.pem'),
      tlsKey: join(dir, 'key.pem'),
    })
    try {
      const client = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false } })
      const from = uniqueEmail('smtp')
      const sent = await client.sendMail({
        envelope: { from, to: [ch.inbound_address] },
        raw: fixture('gmail-alternative.eml', { to: ch.inbound_address, from }),
      })
      expect(sent.accepted).toEqual([ch.inbound_address])
      const reply = await t.smtp.waitFor((m) => m.to.includes(from))
      expect(reply.subject).toBe('Re: How long do refunds take?')

      await expect(
        client.sendMail({ envelope: { from, to: ['nobody@inbound.test'] }, raw: rawMail({ to: 'nobody@inbound.test', from }) }),
      ).rejects.toMatchObject({ responseCode: 550 })
      await expect(client.sendMail({ envelope: { from, to: ['x@elsewhere.test'] }, raw: rawMail({ to: 'x@elsewhere.test', from }) })).rejects.toMatchObject({
        responseCode: 550,
      })
      const big = rawMail({ to: ch.inbound_address, from, body: 'y'.repeat(40 * 1024) })
      await expect(client.sendMail({ envelope: { from, to: [ch.inbound_address] }, raw: big })).rejects.toMatchObject({ responseCode: 552 })
      client.close()
    } finally {
      await listener.close()
    }
  })

  it('a large mail to two bots over SMTP reaches each whole, and one over the webhook too (the bytes are handed to the parser, not copied, only when one bot takes them)', async () => {
    const owner = await createTenant(t)
    const other = await createTenant(t)
    const a = await emailBot(owner)
    const b = await emailBot(other)
    const { db } = t.ctx
    const listener = await inboundSmtp(t.ctx, { maxBytes: 1024 * 1024 })
    // 200 KB: over the size from which the parser takes the bytes themselves
    const body = `How long do refunds take?\n\n${'Order details follow.\n'.repeat(9000)}`
    try {
      const client = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true })
      const from = uniqueEmail('big')
      const sent = await client.sendMail({
        envelope: { from, to: [a.inbound_address, b.inbound_address] },
        raw: rawMail({ to: a.inbound_address, from, body }),
      })
      expect(sent.accepted.sort()).toEqual([a.inbound_address, b.inbound_address].sort())
      client.close()
      const hook = await post(a.inbound_url, rawMail({ to: a.inbound_address, from: uniqueEmail('hook'), body }))
      expect(hook.status).toBe(202)
      expect(hook.body.status).toBe('queued')
    } finally {
      await listener.close()
    }
    // each bot's copy was read whole: handled (the raw form is dropped then) with the mail's question in its session
    const rows = await until(
      'the three mails handled',
      async () => {
        const r = await db
          .selectFrom('email_messages')
          .select(['tenant_id', 'status', 'reason', 'session_id'])
          .where('tenant_id', 'in', [owner.tenantId, other.tenantId])
          .where('direction', '=', 'in')
          .execute()
        return r.length === 3 && r.every((m) => m.status !== 'queued') ? r : null
      },
      120_000,
    )
    expect(rows.filter((r) => r.tenant_id === owner.tenantId)).toHaveLength(2)
    for (const r of rows) {
      expect(r.session_id, `${r.status} ${r.reason}`).toBeTruthy()
      const asked = await db
        .selectFrom('chat_messages')
        .select('content')
        .where('session_id', '=', r.session_id!)
        .where('role', '=', 'user')
        .executeTakeFirstOrThrow()
      expect(asked.content).toContain('How long do refunds take?')
    }
  })
})
