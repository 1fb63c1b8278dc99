import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createOutbox } from '../src/modules/webhooks/webhooks.delivery.js'
import { RETRY_SCHEDULE_SECONDS } from '../src/modules/webhooks/webhooks.fns.js'
import { createWebhooksRepo } from '../src/modules/webhooks/webhooks.repo.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { WebhookReceiver } from './fakes/webhook-receiver.js'
import { startApp, type TestApp } from './helpers/app.js'
import { uploadReady } from './helpers/documents.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { until } from './helpers/wait.js'

let t: TestApp
let fake: FakeLlm
const receivers: WebhookReceiver[] = []

beforeAll(async () => {
  fake = await startFakeLlm()
  // the receivers listen on 127.0.0.1: this app may reach loopback, as the crawler may with the same setting
  t = await startApp({ env: { CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', LLM_BASE_URL: fake.url } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
  for (const r of receivers) await r.close()
})

async function receiver(): Promise<WebhookReceiver> {
  const r = await new WebhookReceiver().start()
  receivers.push(r)
  return r
}

/** Waits until the worker has nothing due or running, then moves the clock (a jump past a running job's lease would hand it to a second claim). */
async function advance(ms: number, owner?: Tenant) {
  await until(
    'idle worker',
    async () => {
      const busy = await t.ctx.db
        .selectFrom('jobs')
        .select('id')
        .where((eb) => eb.or([eb('status', '=', 'running'), eb.and([eb('status', '=', 'queued'), eb('run_at', '<=', t.clock.now())])]))
        .execute()
      return busy.length === 0
    },
    20_000,
  )
  t.clock.advance(ms)
  // a jump of a day outlives the dashboard token: sign in again
  if (owner && ms >= 3600_000) {
    const login = await owner.api.post('/auth/login', { email: owner.email, password: owner.password })
    owner.api.withToken(login.body.access_token)
  }
}

async function endpoint(owner: Tenant, r: WebhookReceiver, body: Record<string, unknown> = {}) {
  const res = await owner.api.post('/webhooks/endpoints', {
    url: r.url,
    events: ['ticket.created', 'ticket.replied', 'ticket.resolved', 'conversation.ended'],
    ...body,
  })
  expect(res.status, res.text).toBe(201)
  r.secrets.push(res.body.secret)
  return res.body as { id: string; secret: string }
}

/** A visitor session of the tenant's default bot that hands over to a person: ticket.created and conversation.ended. */
async function escalate(owner: Tenant, message = 'I need help with my order') {
  const sid = (await t.api().post('/widget/session/init', { bot_id: owner.bot.public_id })).body.session_id as string
  const res = await t.api().withApiKey(owner.apiKey).post(`/chat/${sid}/escalate`, { original_user_message: message })
  expect(res.status, res.text).toBe(200)
  const list = await owner.api.get('/escalations')
  return {
    sid,
    ticket: list.body.tickets.find((x: { ticket_number: string }) => x.ticket_number === res.body.ticket_number) as { id: string; ticket_number: string },
  }
}

const deliveries = async (owner: Tenant, endpointId: string) => (await owner.api.get(`/webhooks/endpoints/${endpointId}/deliveries`)).body.items as any[]

describe('endpoints', () => {
  it('creates an endpoint with its secret shown once, lists it without the secret, updates and deletes it', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const created = await endpoint(owner, r, { description: 'CRM' })
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/)
    const stored = await t.ctx.db.selectFrom('webhook_endpoints').select('secret_enc').where('id', '=', created.id).executeTakeFirstOrThrow()
    expect(stored.secret_enc).not.toContain(created.secret.slice(6))
    const list = await owner.api.get('/webhooks/endpoints')
    expect(list.status).toBe(200)
    expect(list.body.items).toEqual([
      expect.objectContaining({ id: created.id, url: r.url, description: 'CRM', enabled: true, kind: 'standard', bot_ids: null, disabled_reason: null }),
    ])
    expect(list.text).not.toContain('whsec_')
    const patched = await owner.api.patch(`/webhooks/endpoints/${created.id}`, { events: ['ticket.created'], enabled: false })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({ events: ['ticket.created'], enabled: false, disabled_reason: expect.any(String) })
    expect((await owner.api.post(`/webhooks/endpoints/${created.id}/test`)).status).toBe(409)
    const other = await createTenant(t)
    expect((await other.api.delete(`/webhooks/endpoints/${created.id}`)).status).toBe(404)
    expect((await owner.api.delete(`/webhooks/endpoints/${created.id}`)).status).toBe(204)
    expect((await owner.api.get('/webhooks/endpoints')).body.items).toEqual([])
  })

  it('refuses bad input with a 422 naming the problem', async () => {
    const owner = await createTenant(t)
    const bad = [
      { url: 'ftp://example.com/x', events: ['ticket.created'] },
      { url: 'https://example.com/x', events: [] },
      { url: 'https://example.com/x', events: ['ticket.exploded'] },
      { url: `https://example.com/${'a'.repeat(2100)}`, events: ['ticket.created'] },
      { url: 'https://example.com/x', events: ['ticket.created'], description: 'd'.repeat(501) },
      { url: 'https://example.com/x', events: ['ticket.created'], bot_ids: ['00000000-0000-4000-8000-000000000000'] },
    ]
    for (const body of bad) {
      const res = await owner.api.post('/webhooks/endpoints', body)
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(422)
    }
    const unknownBot = await owner.api.post('/webhooks/endpoints', bad[5])
    expect(unknownBot.text).toContain('No bot 00000000-0000-4000-8000-000000000000')
  })
})

describe('delivery', () => {
  it('an endpoint added after events of a workspace without one gets the next event at once; a removed one gets none', async () => {
    const owner = await createTenant(t)
    // no endpoint yet: nothing is written (and the workspace's "no endpoint" is cached)
    await escalate(owner, 'first question before any webhook')
    await escalate(owner, 'second question before any webhook')
    const r = await receiver()
    const ep = await endpoint(owner, r)
    const { ticket } = await escalate(owner, 'a question after the webhook was added')
    await until('ticket.created of the new ticket', async () => r.ofType('ticket.created').length === 1)
    expect(r.ofType('ticket.created')[0]!.json.data.ticket_id).toBe(ticket.id)
    await until('settled', async () => (await deliveries(owner, ep.id)).every((d) => d.status === 'delivered'))
    expect(await deliveries(owner, ep.id)).toHaveLength(2)
    expect((await owner.api.delete(`/webhooks/endpoints/${ep.id}`)).status).toBe(204)
    const before = r.received.length
    await escalate(owner, 'a question after the webhook was removed')
    const events = await t.ctx.db.selectFrom('webhook_events').select('id').where('tenant_id', '=', owner.tenantId).execute()
    expect(events).toHaveLength(2)
    expect(r.received.length).toBe(before)
  })

  it('signs with Standard Webhooks, carries only redacted visitor text, and logs the attempt', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const ep = await endpoint(owner, r)
    const { ticket, sid } = await escalate(owner, 'Please call me at jane.doe@example.com about order 1234')
    await until('ticket.created and conversation.ended', async () => r.ofType('ticket.created').length === 1 && r.ofType('conversation.ended').length === 1)
    const got = r.ofType('ticket.created')[0]!
    expect(got.verifiedWith).toEqual([0])
    expect(got.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/)
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60)
    expect(got.json).toMatchObject({
      type: 'ticket.created',
      timestamp: expect.any(String),
      data: { ticket_id: ticket.id, ticket_number: ticket.ticket_number, session_id: sid, channel: 'widget' },
    })
    expect(got.body).not.toContain('jane.doe@example.com')
    expect(got.json.data.question).toContain('order 1234')
    expect(r.ofType('conversation.ended')[0]!.json.data).toMatchObject({ session_id: sid, reason: 'handed_off', channel: 'widget' })
    await until('both settled', async () => (await deliveries(owner, ep.id)).every((d) => d.status === 'delivered'))
    const log = await deliveries(owner, ep.id)
    expect(log).toHaveLength(2)
    expect(log[0]).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 204, next_attempt_at: null })
    const attempts = await owner.api.get(`/webhooks/deliveries/${log[0].id}/attempts`)
    expect(attempts.body.items).toEqual([expect.objectContaining({ status_code: 204, latency_ms: expect.any(Number), next_attempt_at: null })])
  })

  it('retries on the schedule with the same webhook-id, signed afresh, until a 2xx', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const ep = await endpoint(owner, r)
    r.next = ['fail', 'fail']
    const test = await owner.api.post(`/webhooks/endpoints/${ep.id}/test`)
    expect(test.status).toBe(202)
    await until('first attempt', async () => r.received.length === 1)
    await until('retry scheduled', async () => (await deliveries(owner, ep.id))[0]?.attempts === 1)
    const [d] = await deliveries(owner, ep.id)
    expect(d).toMatchObject({ id: test.body.delivery_id, type: 'webhook.test', status: 'pending', last_status_code: 500 })
    const wait = new Date(d.next_attempt_at).getTime() - t.clock.now().getTime()
    expect(wait).toBeGreaterThan((RETRY_SCHEDULE_SECONDS[0] - 2) * 1000)
    expect(wait).toBeLessThanOrEqual(RETRY_SCHEDULE_SECONDS[0] * 1000)
    await advance(5_000)
    await until('second attempt', async () => r.received.length === 2)
    await until('second retry scheduled', async () => (await deliveries(owner, ep.id))[0]?.attempts === 2)
    const second = (await deliveries(owner, ep.id))[0]
    expect(new Date(second.next_attempt_at).getTime() - t.clock.now().getTime()).toBeGreaterThan(290_000)
    await advance(299_000)
    await new Promise((res) => setTimeout(res, 300))
    expect(r.received).toHaveLength(2)
    await advance(2_000)
    await until('delivered', async () => (await deliveries(owner, ep.id))[0]?.status === 'delivered')
    expect(r.received.map((x) => x.headers['webhook-id'])).toEqual(Array(3).fill(r.received[0]!.headers['webhook-id']))
    expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true)
    const attempts = (await owner.api.get(`/webhooks/deliveries/${test.body.delivery_id}/attempts`)).body.items
    expect(attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 204])
    expect(attempts[0].response_excerpt).toBe('receiver is failing on purpose')
  })

  it('fails a delivery after the last retry, and resends it (one, or every failed one since a time)', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const ep = await endpoint(owner, r)
    r.mode = 'fail'
    const test = await owner.api.post(`/webhooks/endpoints/${ep.id}/test`)
    for (const seconds of RETRY_SCHEDULE_SECONDS) {
      await until('attempt recorded', async () => (await deliveries(owner, ep.id))[0]?.attempts === r.received.length && r.received.length > 0)
      await advance(seconds * 1000, owner)
    }
    await until('failed for good', async () => (await deliveries(owner, ep.id))[0]?.status === 'failed')
    expect(r.received).toHaveLength(RETRY_SCHEDULE_SECONDS.length + 1)
    r.mode = 'ok'
    expect((await owner.api.post(`/webhooks/deliveries/${test.body.delivery_id}/resend`)).status).toBe(202)
    await until('resent', async () => (await deliveries(owner, ep.id))[0]?.status === 'delivered')
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1)

    r.mode = 'fail'
    r.next = []
    const since = t.clock.now().toISOString()
    await owner.api.post(`/webhooks/endpoints/${ep.id}/test`)
    await until('failing', async () => (await deliveries(owner, ep.id))[0]?.attempts === 1)
    // give up on it now: disabling fails what is pending, enabling again keeps it failed
    await owner.api.patch(`/webhooks/endpoints/${ep.id}`, { enabled: false })
    await owner.api.patch(`/webhooks/endpoints/${ep.id}`, { enabled: true })
    expect((await deliveries(owner, ep.id))[0].status).toBe('failed')
    r.mode = 'ok'
    const resent = await owner.api.post(`/webhooks/endpoints/${ep.id}/resend-failed`, { since })
    expect(resent.status, resent.text).toBe(202)
    expect(resent.body).toEqual({ resent: 1 })
    await until('all delivered', async () => (await deliveries(owner, ep.id)).every((d) => d.status === 'delivered'))
  })

  it('a 410 disables the endpoint; a receiver that hangs is cut off after 10 s and retried', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const ep = await endpoint(owner, r)
    r.next = ['hang']
    const started = Date.now()
    await owner.api.post(`/webhooks/endpoints/${ep.id}/test`)
    await until('timed out', async () => (await deliveries(owner, ep.id))[0]?.attempts === 1, 20_000)
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500)
    const d = (await deliveries(owner, ep.id))[0]
    expect(d).toMatchObject({ status: 'pending', last_status_code: null })
    expect((await owner.api.get(`/webhooks/deliveries/${d.id}/attempts`)).body.items[0].error).toBe('timeout')

    r.mode = 'gone'
    await advance(5_000)
    await until('disabled', async () => (await owner.api.get('/webhooks/endpoints')).body.items[0].enabled === false)
    const [disabled] = (await owner.api.get('/webhooks/endpoints')).body.items
    expect(disabled.disabled_reason).toMatch(/410/)
    expect((await deliveries(owner, ep.id))[0].status).toBe('failed')
    await escalate(owner)
    await new Promise((res) => setTimeout(res, 300))
    expect(r.received).toHaveLength(2)
  }, 30_000)

  it('an endpoint failing for 5 days is disabled and its owner mailed', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const ep = await endpoint(owner, r)
    r.mode = 'fail'
    await owner.api.post(`/webhooks/endpoints/${ep.id}/test`)
    await until('failing', async () => (await deliveries(owner, ep.id))[0]?.attempts === 1)
    await advance(5 * 24 * 3600 * 1000, owner)
    await until('disabled', async () => (await owner.api.get('/webhooks/endpoints')).body.items[0].enabled === false)
    expect((await owner.api.get('/webhooks/endpoints')).body.items[0].disabled_reason).toMatch(/5 days/)
    const mail = await t.smtp.waitFor((m) => m.to.includes(owner.email) && /webhook endpoint was disabled/i.test(m.subject))
    expect(mail.text).toContain(r.url)
  })

  it('delivers the events of one ticket in order: a later one waits while an earlier one is retried', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const ep = await endpoint(owner, r)
    r.nextOfType = { 'ticket.created': ['fail'] }
    const { ticket } = await escalate(owner)
    await until('first attempt failed', async () => (await deliveries(owner, ep.id)).some((d) => d.type === 'ticket.created' && d.attempts === 1))
    const resolved = await owner.api.post(`/escalations/${ticket.id}/resolve`, { resolution_text: 'Done, sorry for the wait.' })
    expect(resolved.status, resolved.text).toBe(200)
    await new Promise((res) => setTimeout(res, 500))
    // the conversation's event is not the ticket's: it went; the reply and resolution wait for ticket.created
    expect(r.received.map((x) => x.json.type).filter((x) => x.startsWith('ticket.'))).toEqual(['ticket.created'])
    await advance(5_000)
    await until('all three', async () => r.received.filter((x) => x.json.type.startsWith('ticket.')).length === 4)
    expect(r.received.map((x) => x.json.type).filter((x) => x.startsWith('ticket.'))).toEqual([
      'ticket.created',
      'ticket.created',
      'ticket.replied',
      'ticket.resolved',
    ])
    expect(r.ofType('ticket.replied')[0]!.json.data).toMatchObject({ ticket_id: ticket.id, reply: 'Done, sorry for the wait.' })
  })

  it('a rolled-back change emits nothing; the same change committed is delivered', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const ep = await endpoint(owner, r, { events: ['document.ready'] })
    const outbox = createOutbox({ db: t.ctx.db, repo: createWebhooksRepo(t.ctx.db), queue: t.ctx.queue, clock: t.clock })
    const event = (n: number) => ({ type: 'document.ready' as const, botId: null, data: { n } })
    await expect(
      t.ctx.db.transaction().execute(async (trx) => {
        await outbox.emit(owner.tenantId, event(1), trx)
        throw new Error('the change fails')
      }),
    ).rejects.toThrow('the change fails')
    await t.ctx.db.transaction().execute((trx) => outbox.emit(owner.tenantId, event(2), trx))
    await until('delivered', async () => r.received.length === 1)
    await new Promise((res) => setTimeout(res, 300))
    expect(r.received.map((x) => x.json.data.n)).toEqual([2])
    expect(await deliveries(owner, ep.id)).toHaveLength(1)
  })

  it('signs with both secrets for 24 h after a rotation, then with the new one only', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const ep = await endpoint(owner, r)
    const rotated = await owner.api.post(`/webhooks/endpoints/${ep.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(ep.secret)
    r.secrets.push(rotated.body.secret)
    await owner.api.post(`/webhooks/endpoints/${ep.id}/test`)
    await until('received', async () => r.received.length === 1)
    expect(String(r.received[0]!.headers['webhook-signature']).split(' ')).toHaveLength(2)
    expect(r.received[0]!.verifiedWith).toEqual([0, 1])
    await advance(24 * 3600 * 1000 + 1000, owner)
    await owner.api.post(`/webhooks/endpoints/${ep.id}/test`)
    await until('received', async () => r.received.length === 2)
    expect(String(r.received[1]!.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(r.received[1]!.verifiedWith).toEqual([1])
  })

  it('an endpoint limited to some bots gets only their events; a Slack endpoint gets Slack messages', async () => {
    const owner = await createTenant(t)
    const other = await owner.api.post('/bots', { name: 'Second bot' })
    const limited = await receiver()
    await endpoint(owner, limited, { bot_ids: [other.body.id] })
    const slack = await receiver()
    await endpoint(owner, slack, { kind: 'slack', events: ['ticket.created'] })
    const { ticket } = await escalate(owner, 'Where is my parcel?')
    await until('slack message', async () => slack.received.length === 1)
    const msg = slack.received[0]!.json
    expect(msg.text).toContain(ticket.ticket_number)
    expect(msg.text).toContain('Where is my parcel?')
    expect(JSON.stringify(msg.blocks)).toContain(`http://app.test/app/tickets/${ticket.id}`)
    expect(JSON.stringify(msg.blocks)).toMatch(/priority: (low|medium|high|critical)/)
    await new Promise((res) => setTimeout(res, 300))
    expect(limited.received).toHaveLength(0)
  })
})

describe('test events rate limit', () => {
  it('allows 10 test events a minute per workspace (all its endpoints together), then the contract 429 with Retry-After; another workspace is unaffected', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    const [one, two] = [await endpoint(owner, r), await endpoint(owner, r)]
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) statuses.push((await owner.api.post(`/webhooks/endpoints/${i % 2 ? one.id : two.id}/test`)).status)
    expect(statuses).toEqual(Array(10).fill(202))
    for (const ep of [one, two]) {
      const limited = await owner.api.post(`/webhooks/endpoints/${ep.id}/test`)
      expect(limited.status).toBe(429)
      expect(limited.body).toEqual({ error: 'Rate limit exceeded: 10 per 1 minute' })
      const after = Number(limited.headers.get('retry-after'))
      expect(after).toBeGreaterThan(0)
      expect(after).toBeLessThanOrEqual(60)
    }
    const other = await createTenant(t)
    const theirs = await endpoint(other, await receiver())
    expect((await other.api.post(`/webhooks/endpoints/${theirs.id}/test`)).status).toBe(202)
  })
})

describe('SSRF', () => {
  it('refuses private and loopback URLs with a 422 unless private networks are allowed', async () => {
    const strict = await startApp()
    try {
      const owner = await createTenant(strict)
      for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://10.1.2.3/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest']) {
        const res = await owner.api.post('/webhooks/endpoints', { url, events: ['ticket.created'] })
        expect(res.status, url).toBe(422)
        expect(res.text, url).toMatch(/may not reach|does not resolve/)
      }
    } finally {
      await strict.close()
    }
  })

  it('refuses IPv6 forms that embed a loopback or metadata IPv4 address, and numeric IPv4 hosts, on create and on edit', async () => {
    const strict = await startApp()
    try {
      const owner = await createTenant(strict)
      // a literal public address passes without DNS; nothing is sent to it (no event happens)
      const created = await owner.api.post('/webhooks/endpoints', { url: 'http://93.184.216.34/hook', events: ['ticket.created'] })
      expect(created.status, created.text).toBe(201)
      const refused: [string, string][] = [
        ['http://[::7f00:1]/hook', '127.0.0.1'],
        ['http://[::a9fe:a9fe]/latest/meta-data/', '169.254.169.254'],
        ['http://[::ffff:7f00:1]/hook', '127.0.0.1'],
        ['http://[64:ff9b::7f00:1]/hook', '127.0.0.1'],
        ['http://[64:ff9b::a9fe:a9fe]/hook', '169.254.169.254'],
        ['http://[2002:7f00:1::]/hook', '127.0.0.1'],
        ['http://[2002:a9fe:a9fe::]/hook', '169.254.169.254'],
        ['http://2130706433/hook', '127.0.0.1'],
        ['http://0x7f.1/hook', '127.0.0.1'],
        ['http://0xa9fea9fe/latest/meta-data/', '169.254.169.254'],
      ]
      for (const [url, inside] of refused) {
        const post = await owner.api.post('/webhooks/endpoints', { url, events: ['ticket.created'] })
        expect(post.status, url).toBe(422)
        expect(post.body.detail[0].loc, url).toEqual(['body', 'url'])
        expect(post.body.detail[0].msg, url).toMatch(
          new RegExp(`^The URL points to ${inside.replaceAll('.', '\\.')}, a (loopback|linkLocal) address.*which webhooks may not reach$`),
        )
        const patch = await owner.api.patch(`/webhooks/endpoints/${created.body.id}`, { url })
        expect(patch.status, url).toBe(422)
        expect(patch.body.detail[0].msg, url).toContain(inside)
      }
      // the endpoint kept its URL, and no refused one was stored
      const list = await owner.api.get('/webhooks/endpoints')
      expect(list.body.items.map((e: { url: string }) => e.url)).toEqual(['http://93.184.216.34/hook'])
    } finally {
      await strict.close()
    }
  })
})

describe('other events', () => {
  it('a conversation that needs a person again within 7 days reopens its resolved ticket (ticket.reopened); later, a new one opens', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    await endpoint(owner, r, { events: ['ticket.created', 'ticket.resolved', 'ticket.reopened'] })
    const chat = t.api().withApiKey(owner.apiKey)
    const first = await chat.post('/chat', { question: 'I want to talk to a human about my invoice' })
    expect(first.status, first.text).toBe(200)
    const number = first.body.ticket_number as string
    expect(number).toMatch(/^ESC-\d{4}$/)
    const ticket = (await owner.api.get('/escalations')).body.tickets.find((x: { ticket_number: string }) => x.ticket_number === number)
    expect((await owner.api.post(`/escalations/${ticket.id}/resolve`, { resolution_text: 'The invoice is corrected.' })).status).toBe(200)

    const again = await chat.post('/chat', { question: 'Sorry, I need a person again, the invoice is still wrong', session_id: first.body.session_id })
    expect(again.status, again.text).toBe(200)
    expect(again.body.text).toContain(`open support ticket ${number}`)
    const listed = (await owner.api.get('/escalations?status=open')).body.tickets.find((x: { id: string }) => x.id === ticket.id)
    expect(listed).toMatchObject({ status: 'open', resolved_at: null })
    const reopened = await owner.api.get(`/escalations/${ticket.id}`)
    expect(JSON.stringify(reopened.body.transcript)).toContain('still wrong')
    await until('ticket.reopened', async () => r.ofType('ticket.reopened').length === 1)
    expect(r.ofType('ticket.reopened')[0]!.json.data).toMatchObject({ ticket_id: ticket.id, ticket_number: number, status: 'open' })

    // resolved again, and the conversation comes back 8 days later: a new ticket
    expect((await owner.api.post(`/escalations/${ticket.id}/resolve`, { resolution_text: 'Fixed for good.' })).status).toBe(200)
    await advance(8 * 24 * 3600_000, owner)
    const later = await chat.post('/chat', { question: 'I want to talk to a human once more', session_id: first.body.session_id })
    expect(later.status, later.text).toBe(200)
    expect(later.body.ticket_number).not.toBe(number)
    expect((await owner.api.get(`/escalations/${ticket.id}`)).body.status).toBe('resolved')
    await until('second ticket.created', async () => r.ofType('ticket.created').length === 2)
    expect(r.ofType('ticket.reopened')).toHaveLength(1)
  }, 60_000)

  it('feedback.received, document.ready and source.crawl_failed reach an endpoint that takes them', async () => {
    const owner = await createTenant(t)
    const r = await receiver()
    await endpoint(owner, r, { events: ['feedback.received', 'document.ready', 'source.crawl_failed'] })
    const { sid } = await escalate(owner)
    const log = await owner.api.get(`/chat/logs/session/${sid}`)
    expect(log.status, log.text).toBe(200)
    const said = log.body.messages.find((m: { role: string }) => m.role === 'assistant')
    expect((await owner.api.post(`/chat/messages/${said.id}/feedback`, { feedback: 'down', ideal_answer: 'Be quicker' })).status).toBe(200)
    await until('feedback', async () => r.ofType('feedback.received').length === 1)
    expect(r.ofType('feedback.received')[0]!.json.data).toMatchObject({ message_id: said.id, session_id: sid, feedback: 'down', ideal_answer: 'Be quicker' })

    const doc = await uploadReady(t, owner.api, 'returns.md', '# Returns\n\nReturns are accepted within 30 days of delivery.\n')
    await until('document.ready', async () => r.ofType('document.ready').length === 1)
    expect(r.ofType('document.ready')[0]!.json.data).toMatchObject({ document_id: doc.id, filename: 'returns.md' })

    // nothing listens on port 9 of loopback: the crawl fails
    const source = await owner.api.post('/documents/sources/url', { url: 'http://127.0.0.1:9/', schedule: 'manual' })
    expect(source.status, source.text).toBe(201)
    await until('source.crawl_failed', async () => r.ofType('source.crawl_failed').length === 1, 30_000)
    expect(r.ofType('source.crawl_failed')[0]!.json.data).toMatchObject({ source_id: source.body.id, url: 'http://127.0.0.1:9/' })
    expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true)
  }, 60_000)
})
