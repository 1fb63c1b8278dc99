/**
 * Working e-mail tickets (issue 52), `BENCH_MODE=tickets npm run bench:email`: the service in this process with
 * its worker (the embedded database, or a scratch PostgreSQL database with BENCH_PG=1 and DATABASE_URL), a real
 * SMTP server (test/fakes/smtp.ts) as every inbox, the fake model. BENCH_REPLIES (default 20) customers mail a bot
 * with no knowledge, so each mail becomes a ticket; then, one at a time:
 *
 * - agent: an agent's reply on each ticket, from the click (`POST /escalations/{id}/messages`) to the SMTP server
 *   holding the mail for the customer (goal: p95 under 2 s; before issue 52: 600 s, the chat's grace period);
 * - customer: the customer's reply in the thread (In-Reply-To the agent's mail), from the webhook POST to the
 *   message stored on the ticket's conversation (polled every 10 ms);
 * - member: a member's reply to the team notice (its Reply-To, the ticket's own address), from the webhook POST to
 *   the customer's inbox.
 *
 * Prints p50/p95/max of each in ms. The machine is shared: run it niced, and read the load beside the figures.
 */
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { startFakeLlm } from '../test/fakes/fake-llm.js'
import { FakeSmtp, type ReceivedMail } from '../test/fakes/smtp.js'
import { benchService, benchWorkspace, rawMail as mail } from './support.js'

const REPLIES = Number(process.env.BENCH_REPLIES ?? 20)
const PG = process.env.BENCH_PG === '1' ? (process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test') : undefined

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}
const line = (what: string, xs: number[]) =>
  `${what.padEnd(44)} n=${xs.length}  p50 ${Math.round(pct(xs, 50))} ms  p95 ${Math.round(pct(xs, 95))} ms  max ${Math.round(Math.max(...xs))} ms`

async function waitFor<T>(what: string, fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 60_000, every = 10): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out: ${what}`)
    await new Promise((r) => setTimeout(r, every))
  }
}

export async function ticketsBench(): Promise<void> {
  const fake = await startFakeLlm()
  const smtp = await new FakeSmtp().start()
  const received = new Map<ReceivedMail, number>()
  const push = smtp.mails.push.bind(smtp.mails)
  smtp.mails.push = (...items) => {
    for (const m of items) received.set(m, performance.now())
    return push(...items)
  }
  const svc = await benchService(
    'email-tickets',
    {
      LLM_BASE_URL: fake.url,
      SMTP_URL: smtp.url,
      INBOUND_EMAIL_DOMAIN: 'inbound.bench',
      LOG_LEVEL: 'warn',
      WORKER_POLL_MS: '100',
      EMAIL_BOT_HOURLY_CAP: '100000',
    },
    PG,
  )
  try {
    const ws = await benchWorkspace(svc.ctx, svc.url)
    const team = `team-${randomBytes(3).toString('hex')}@shop.bench`
    await ws.http('PATCH', '/tenants/me', { support_email: team })
    const member = await svc.ctx.db.selectFrom('users').select('email').where('id', '=', ws.userId).executeTakeFirstOrThrow()
    const botId = (await ws.http<{ id: string }>('POST', '/bots', { name: 'Mail bot' })).id
    const ch = await ws.http<{ inbound_address: string; inbound_url: string }>('PUT', `/bots/${botId}/email`, { enabled: true, mode: 'answer' })
    const hook = svc.url + new URL(ch.inbound_url).pathname
    const post = async (raw: string) => {
      const r = await fetch(hook, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: raw })
      const b = (await r.json()) as { status?: string }
      if (r.status !== 202 || b.status !== 'queued') throw new Error(`webhook: ${r.status} ${JSON.stringify(b)}`)
    }
    const mailsTo = (to: string) => smtp.mails.filter((m) => m.to.includes(to))

    // the tickets: a customer's mail each, handed off (no knowledge), the sender told the number
    const customers: { from: string; ticketId: string; sessionId: string; notice: ReceivedMail }[] = []
    for (let i = 0; i < REPLIES; i++) {
      const from = `customer-${i}-${randomBytes(2).toString('hex')}@example.test`
      await post(
        mail({
          to: ch.inbound_address,
          from,
          id: `<c${i}.${randomBytes(4).toString('hex')}@mail.example.test>`,
          subject: `Order ${i}`,
          body: `Where is my order ${i}?`,
        }),
      )
      customers.push({ from, ticketId: '', sessionId: '', notice: undefined as never })
    }
    const tickets = await waitFor(
      'every ticket',
      async () => {
        const l = await ws.http<{ tickets: { id: string; user_email: string | null; session_id: string; ticket_number: string }[] }>(
          'GET',
          '/escalations?status=open',
        )
        return l.tickets.length >= REPLIES ? l.tickets : null
      },
      300_000,
      200,
    )
    for (const c of customers) {
      const t = tickets.find((x) => x.user_email === c.from)!
      c.ticketId = t.id
      c.sessionId = t.session_id
      c.notice = await waitFor('the team notice', () => mailsTo(team).find((m) => m.subject.includes(t.ticket_number)), 120_000, 50)
    }
    await waitFor('the senders told their numbers', () => customers.every((c) => mailsTo(c.from).length >= 1), 120_000, 50)

    const agent: number[] = []
    const customer: number[] = []
    const memberReply: number[] = []
    for (const [i, c] of customers.entries()) {
      // an agent's reply: click to the customer's inbox
      const marker = `agent-${i}-${randomBytes(3).toString('hex')}`
      const t0 = performance.now()
      await ws.http('POST', `/escalations/${c.ticketId}/messages`, { content: `Hi,\n\nyour order ships today (${marker}).` })
      const got = await waitFor('the agent reply mail', () => mailsTo(c.from).find((m) => m.text.includes(marker)), 60_000, 5)
      agent.push(received.get(got)! - t0)

      // the customer answers in the thread: mail in to the message on the ticket
      const back = `customer-${i}-${randomBytes(3).toString('hex')}`
      const t1 = performance.now()
      await post(
        mail({
          to: ch.inbound_address,
          from: c.from,
          id: `<back${i}.${randomBytes(4).toString('hex')}@mail.example.test>`,
          subject: `Re: Order ${i}`,
          body: `Thanks! (${back})`,
          inReplyTo: got.raw.messageId ?? undefined,
        }),
      )
      await waitFor(
        'the customer reply on the ticket',
        () =>
          svc.ctx.db.selectFrom('chat_messages').select('id').where('session_id', '=', c.sessionId).where('content', 'like', `%${back}%`).executeTakeFirst(),
        60_000,
        10,
      )
      customer.push(performance.now() - t1)

      // a member answers the team notice from their mailbox: mail in to the customer's inbox
      const by = `member-${i}-${randomBytes(3).toString('hex')}`
      const t2 = performance.now()
      await post(
        mail({
          to: c.notice.replyTo!,
          from: member.email,
          id: `<m${i}.${randomBytes(4).toString('hex')}@mail.example.test>`,
          subject: `Re: ${c.notice.subject}`,
          body: `One more thing (${by}).`,
        }),
      )
      const mailed = await waitFor('the member reply mail', () => mailsTo(c.from).find((m) => m.text.includes(by)), 60_000, 5)
      memberReply.push(received.get(mailed)! - t2)
    }
    const db = PG ? 'PostgreSQL' : 'embedded PGlite'
    console.log(
      `bench:email tickets: ${REPLIES} tickets, ${db}, load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    )
    console.log(line("agent's reply: click -> customer's inbox", agent))
    console.log(line("customer's reply: mail in -> on the ticket", customer))
    console.log(line("member's notice reply: mail in -> inbox", memberReply))
    console.log(`goal p95 < 2000 ms: agent ${pct(agent, 95) < 2000 ? 'met' : 'NOT met'}, customer ${pct(customer, 95) < 2000 ? 'met' : 'NOT met'}`)
  } finally {
    await svc.close()
    await smtp.stop()
    await fake.close()
  }
}
