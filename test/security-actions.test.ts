import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { json, WorkspaceApi } from './fakes/workspace-api.js'
import { startApp, type TestApp } from './helpers/app.js'
import { sseFrames } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { memoryLogger } from './helpers/logs.js'
import { until } from './helpers/wait.js'

/**
 * Issue 37, actions as an attacker would use them: a secret is masked in every form it takes (raw,
 * percent-encoded in either case, form-encoded, JSON-escaped; a short one whole), a model argument that is a
 * dot segment is refused rather than sent, and a tenant's parameter pattern runs in linear time.
 */
let t: TestApp
let fake: FakeLlm
let api: WorkspaceApi
let owner: Tenant
const logs = memoryLogger('info')

const SECRET = 'sk/live+Secr3t==9876'
const SHORT = 'x7Qz'
/** What must never be seen: the secret's distinctive middle (in any case) and the short secret. */
const leaks = (text: string) => /secr3t/i.test(text) || text.includes(SHORT)

beforeAll(async () => {
  fake = await startFakeLlm()
  api = await new WorkspaceApi().start()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'info' }, log: logs.log })
  owner = await createTenant(t)
}, 180_000)
afterAll(async () => {
  await t?.close()
  await fake?.close()
  await api?.close()
})
afterEach(() => {
  fake.reset()
  api.handler = (_req, res) => json(res, 200, { ok: true })
})

async function ask(message: string) {
  const init = await t.api().post('/widget/session/init', { bot_id: owner.bot.public_id })
  expect(init.status, init.text).toBe(200)
  const s = init.body.session_id as string
  const r = await t.api().post(`/widget/chat?bot_id=${owner.bot.public_id}&session_id=${s}`, { message })
  expect(r.status, r.text).toBe(200)
  return { session: s, done: sseFrames(r.text).find((f) => f.type === 'done') }
}

const callTool = (name: string, args: Record<string, unknown>) =>
  fake.script((req) => (req.body.tools && !req.messages.some((m) => m.role === 'tool') ? { toolCalls: [{ name, arguments: args }] } : undefined))

describe('secrets masked in every form', () => {
  it('the dry run, the live test, the model, the answer, the call log, the transcript and the exports never show an encoded secret', async () => {
    const created = await owner.api.post('/actions', {
      name: 'track_parcel',
      description: 'Track a parcel by its number.',
      method: 'GET',
      url: `${api.url}/track/{parcel}/{key}?key={key}`,
      headers: { 'X-Key': '{short}' },
      parameters: [
        { name: 'parcel', source: 'model', schema: { type: 'string', pattern: '^[0-9]{3,10}$' }, required: true },
        { name: 'key', source: 'secret' },
        { name: 'short', source: 'secret' },
      ],
      secrets: { key: SECRET, short: SHORT },
      enabled: true,
    })
    expect(created.status, created.text).toBe(201)
    expect(leaks(created.text)).toBe(false)
    // the API echoes what it was sent, in every encoding a server might write it back
    api.handler = (req, res) => {
      const url = req.url
      const lower = url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())
      const form = new URLSearchParams({ k: SECRET }).toString()
      const text = JSON.stringify({ status: 'in transit', url, lower, form, key: req.headers['x-key'], spaced: 'a b' }).replace(/\//g, '\\/')
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(text)
    }
    const id = created.body.id as string

    const dry = await owner.api.post(`/actions/${id}/test`, { arguments: { parcel: '12345' } })
    expect(dry.status, dry.text).toBe(200)
    expect(dry.body.request.url).toContain('/track/12345/')
    expect(leaks(dry.text), dry.text).toBe(false)
    expect(dry.text).not.toMatch(/%2F|%2B|%3D/i)

    const live = await owner.api.post(`/actions/${id}/test`, { arguments: { parcel: '12345' }, live: true })
    expect(live.body.status, live.text).toBe('ok')
    // the API got the real values
    expect(api.requests.at(-1)!.url).toContain(encodeURIComponent(SECRET))
    expect(api.requests.at(-1)!.headers['x-key']).toBe(SHORT)
    expect(live.body.response.body).toContain('in transit')
    expect(leaks(live.text), live.text).toBe(false)

    callTool('track_parcel', { parcel: '12345' })
    const { session, done } = await ask('Where is my parcel 12345?')
    expect(api.requests.at(-1)!.url).toContain('/track/12345/')
    expect(done.text).toContain('in transit')
    expect(leaks(done.text), done.text).toBe(false)
    const toolMsgs = fake
      .chatCalls()
      .flatMap((c) => c.body.messages)
      .filter((m: any) => m.role === 'tool')
    expect(toolMsgs.length).toBeGreaterThan(0)
    expect(leaks(JSON.stringify(fake.chatCalls().map((c) => c.body)))).toBe(false)

    const calls = await owner.api.get(`/actions/${id}/calls`)
    expect(calls.body.items.length).toBeGreaterThan(0)
    expect(leaks(calls.text)).toBe(false)
    expect(leaks(JSON.stringify(await t.ctx.db.selectFrom('action_calls').selectAll().execute()))).toBe(false)
    expect(leaks(JSON.stringify(await t.ctx.db.selectFrom('chat_messages').select(['content', 'debug']).execute()))).toBe(false)
    const transcript = await owner.api.get(`/chat/logs/session/${session}`)
    expect(transcript.text).toContain('in transit')
    expect(leaks(transcript.text)).toBe(false)
    const today = t.clock.now().toISOString().slice(0, 10)
    for (const kind of ['messages', 'conversations']) {
      const started = await owner.api.post('/exports', { kind, format: 'jsonl', from: today, to: today })
      expect(started.status, started.text).toBe(202)
      const ready = await until(`the ${kind} export`, async () => {
        const x = await owner.api.get(`/exports/${started.body.id}`)
        return x.body.status === 'done' || x.body.status === 'failed' ? x.body : null
      })
      expect(ready.status).toBe('done')
      const file = await (await fetch(owner.api.base + ready.download_url, { headers: { authorization: `Bearer ${owner.api.token}` } })).text()
      if (kind === 'messages') expect(file).toContain('in transit')
      expect(leaks(file), kind).toBe(false)
    }
    expect(leaks(logs.text())).toBe(false)
    await owner.api.patch(`/actions/${id}`, { enabled: false })
  })
})

describe('a dot segment from the model never moves the call', () => {
  it('refuses ".", "..", "%2E%2E" and ".%2e" in a path: a failed call said to the visitor, nothing sent', async () => {
    const created = await owner.api.post('/actions', {
      name: 'order_details',
      description: 'Look up the details of an order by its number.',
      method: 'GET',
      url: `${api.url}/orders/{order}/details`,
      parameters: [{ name: 'order', source: 'model', schema: { type: 'string', maxLength: 20 }, required: true }],
      enabled: true,
    })
    expect(created.status, created.text).toBe(201)
    const id = created.body.id as string
    for (const value of ['..', '.', '%2E%2E', '.%2e', '%252e%252E']) {
      const before = api.requests.length
      callTool('order_details', { order: value })
      const { done } = await ask('Show me the details of my order')
      expect(api.requests.length, value).toBe(before)
      expect(done.text, value).toMatch(/couldn't get that done/)
      expect(done.text, value).toMatch(/person from our support team/)
      fake.reset()
    }
    const calls = await owner.api.get(`/actions/${id}/calls`)
    expect(calls.body.items.map((c: any) => c.status)).toEqual(['refused', 'refused', 'refused', 'refused', 'refused'])
    // the test console refuses it too, naming the argument; a dot inside a value is fine
    const dry = await owner.api.post(`/actions/${id}/test`, { arguments: { order: '%2e%2E' }, live: true })
    expect(dry.status).toBe(422)
    expect(dry.body.detail[0].loc).toEqual(['body', 'arguments', 'order'])
    const ok = await owner.api.post(`/actions/${id}/test`, { arguments: { order: 'a..b' }, live: true })
    expect(ok.body.status, ok.text).toBe('ok')
    expect(api.requests.at(-1)!.url).toBe('/orders/a..b/details')
    await owner.api.patch(`/actions/${id}`, { enabled: false })
  })
})

describe("a tenant's parameter pattern", () => {
  it('runs in linear time, and one the engine cannot run is a 422 naming the pattern', async () => {
    const base = {
      description: 'Find a coupon.',
      method: 'GET',
      url: `${api.url}/coupons/{code}`,
      enabled: false,
    }
    const bad = await owner.api.post('/actions', {
      ...base,
      name: 'coupon_bad',
      parameters: [{ name: 'code', source: 'model', schema: { type: 'string', pattern: '^(\\w)\\1$' }, required: true }],
    })
    expect(bad.status, bad.text).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(['body', 'parameters', 0, 'schema', 'pattern'])
    expect(bad.body.detail[0].msg).toMatch(/backreference/)
    const look = await owner.api.post('/actions', {
      ...base,
      name: 'coupon_look',
      parameters: [{ name: 'code', source: 'model', schema: { type: 'object', properties: { x: { type: 'string', pattern: '(?<!a)b' } } } }],
    })
    expect(look.status, look.text).toBe(422)
    expect(look.body.detail[0].loc).toEqual(['body', 'parameters', 0, 'schema', 'properties', 'x', 'pattern'])

    const created = await owner.api.post('/actions', {
      ...base,
      name: 'coupon',
      parameters: [{ name: 'code', source: 'model', schema: { type: 'string', pattern: '^(a+)+$' }, required: true }],
    })
    expect(created.status, created.text).toBe(201)
    // exponential for a backtracking engine; the request still answers (the argument does not match)
    const started = performance.now()
    const dry = await owner.api.post(`/actions/${created.body.id}/test`, { arguments: { code: `${'a'.repeat(29)}!` } })
    expect(dry.status, dry.text).toBe(422)
    expect(dry.body.detail[0].loc).toEqual(['body', 'arguments', 'code'])
    expect(performance.now() - started).toBeLessThan(5000)
    const good = await owner.api.post(`/actions/${created.body.id}/test`, { arguments: { code: 'aaaa' } })
    expect(good.status, good.text).toBe(200)
  })
})

/** Runs `work` while asking `/health` every 25 ms; the slowest answer's wait in ms. */
async function healthDuring<T>(work: () => Promise<T>): Promise<{ result: T; slowestMs: number }> {
  let slowestMs = 0
  let running = true
  const poll = (async () => {
    while (running) {
      const started = performance.now()
      const r = await fetch(`${t.url}/health`)
      await r.arrayBuffer()
      slowestMs = Math.max(slowestMs, performance.now() - started)
      await new Promise((r) => setTimeout(r, 25))
    }
  })()
  try {
    return { result: await work(), slowestMs }
  } finally {
    running = false
    await poll
  }
}

describe('issue 50, finding 3: a secret of backslashes', () => {
  it('is masked in linear time: the live test and a visitor’s tool call answer at once and /health stays quick', async () => {
    const created = await owner.api.post('/actions', {
      name: 'backslashes',
      description: 'Look up a parcel by its number.',
      method: 'GET',
      url: `${api.url}/bs/{parcel}`,
      headers: { 'X-Key': '{key}', 'X-Long': '{long}' },
      parameters: [
        { name: 'parcel', source: 'model', schema: { type: 'string', pattern: '^[0-9]{3,10}$' }, required: true },
        { name: 'key', source: 'secret' },
        { name: 'long', source: 'secret' },
      ],
      // 27 took the backtracking pattern 17 s against 54 (times 1.7 for each more); the longest a secret may be
      secrets: { key: '\\'.repeat(27), long: '\\'.repeat(4096) },
      response_fields: ['$.echo'],
      enabled: true,
    })
    expect(created.status, created.text).toBe(201)
    const id = created.body.id as string
    api.handler = (_req, res) => json(res, 200, { echo: `${'\\'.repeat(54)}x${'\\'.repeat(8190)}y` })

    const started = performance.now()
    const { result: live, slowestMs } = await healthDuring(() => owner.api.post(`/actions/${id}/test`, { arguments: { parcel: '12345' }, live: true }))
    expect(live.status, live.text).toBe(200)
    expect(live.body.status, live.text).toBe('ok')
    expect(live.body.response.body).toContain('••••')
    // measured 0.9 s for the call and 48 ms for /health's slowest wait under a load of 15 on 2 cores; the
    // backtracking pattern took 17 s on the 27 alone, and the 4,096 would never end
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(slowestMs).toBeLessThan(2500)

    callTool('backslashes', { parcel: '12345' })
    const chat = await healthDuring(() => ask('Where is parcel 12345?'))
    expect(chat.result.done).toBeTruthy()
    expect(chat.slowestMs).toBeLessThan(2500)
    const toolMsg = fake
      .chatCalls()
      .flatMap((c) => c.body.messages)
      .find((m: any) => m.role === 'tool')
    // the echo reached the model masked (each mask shows its secret's last 4 characters: backslashes here)
    expect(toolMsg.content).toMatch(/^\{"echo":"••••/)

    await owner.api.patch(`/actions/${id}`, { enabled: false })
  })
})

describe('issue 50, finding 11: the answer is masked too', () => {
  it('a secret the API echoed escaped twice, and a prefix of it, never reach the visitor, streamed or stored', async () => {
    // a quote and a backslash: characters every JSON escaping writes differently
    const KEY = 'tok_live\\Secr3t"echoed=42'
    const created = await owner.api.post('/actions', {
      name: 'echo_order',
      description: 'Look up an order by its number.',
      method: 'POST',
      url: `${api.url}/orders`,
      body_template: '{"order": "{order}", "key": "{key}"}',
      parameters: [
        { name: 'order', source: 'model', schema: { type: 'string', pattern: '^[0-9]{3,10}$' }, required: true },
        { name: 'key', source: 'secret' },
      ],
      secrets: { key: KEY },
      response_fields: ['$.error'],
      enabled: true,
    })
    expect(created.status, created.text).toBe(201)
    const id = created.body.id as string
    // an API that echoes the request (a JSON text) inside its JSON error: the secret escaped twice
    api.handler = (req, res) => json(res, 200, { error: `bad request: ${req.body}` })
    const twice = JSON.stringify(JSON.stringify(KEY)).slice(1, -1)
    fake.script((req) => {
      if (req.body.tools && !req.messages.some((m) => m.role === 'tool')) return { toolCalls: [{ name: 'echo_order', arguments: { order: '12345' } }] }
      if (req.messages.some((m) => m.role === 'tool'))
        // the model repeats what it read, cut across pieces, and a prefix of the key on its own
        return {
          chunks: ['The order API said: ', twice.slice(0, 9), twice.slice(9, 20), twice.slice(20), '. Your key begins tok_li', 've\\Secr and that is all.'],
        }
      return undefined
    })
    const init = await t.api().post('/widget/session/init', { bot_id: owner.bot.public_id })
    const s = init.body.session_id as string
    const r = await t.api().post(`/widget/chat?bot_id=${owner.bot.public_id}&session_id=${s}`, { message: 'What about order 12345?' })
    expect(r.status, r.text).toBe(200)
    const frames = sseFrames(r.text)
    const streamed = frames
      .filter((f) => f.type === 'chunk')
      .map((f) => f.text)
      .join('')
    expect(streamed).toContain('The order API said')
    expect(streamed).toContain('••••d=42')
    const leak = (text: string) => /secr3t|tok_live\\*s/i.test(text)
    expect(leak(streamed), streamed).toBe(false)
    expect(leak(JSON.stringify(frames)), r.text).toBe(false)
    const transcript = await owner.api.get(`/chat/logs/session/${s}`)
    expect(transcript.text).toContain('The order API said')
    expect(leak(transcript.text), transcript.text).toBe(false)
    expect(leak(JSON.stringify(await t.ctx.db.selectFrom('chat_messages').select(['content']).execute()))).toBe(false)
    await owner.api.patch(`/actions/${id}`, { enabled: false })
  })
})
