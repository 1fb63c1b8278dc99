import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { reads, type Api } from './helpers/http.js'
import { signIdentityToken } from '../src/modules/tenants/identity-token.fns.js'

const nowS = () => Math.floor(t.clock.now().getTime() / 1000)

let t: TestApp
let fake: FakeLlm
beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, WIDGET_SSE_HEARTBEAT_MS: '200' } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

async function botWith(tenant: Tenant, patch: Record<string, unknown>) {
  const res = await tenant.api.post('/bots', { name: 'Widget bot', ...patch })
  expect(res.status).toBe(201)
  return res.body as { id: string; public_id: string }
}

describe('loader and UI bundle', () => {
  it('serves /embed.js as a small script that loads widget.js from this service', async () => {
    const res = await fetch(`${t.url}/embed.js`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/)
    expect(res.headers.get('cache-control')).toContain('max-age')
    const code = await res.text()
    expect(code).toContain('SupportChat')
    expect(code).toMatch(/widget\.js\?v=[A-Za-z0-9_-]+/)
    expect(code).not.toContain('__SCB_WIDGET_URL__')

    const gz = await fetch(`${t.url}/embed.js`, { headers: { 'accept-encoding': 'gzip' } })
    expect(gz.headers.get('content-encoding')).toBe('gzip')
    expect(await gz.text()).toBe(code)
  })

  it('keeps the loader under 2 KB and the UI under 35 KB gzipped, and answers 304 to a matching ETag', async () => {
    const sizes: Record<string, number> = {}
    for (const path of ['/embed.js', '/widget.js']) {
      const res = await t.app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'gzip' } })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-encoding']).toBe('gzip')
      sizes[path] = res.rawPayload.length
      expect(gunzipSync(res.rawPayload).length).toBeGreaterThan(res.rawPayload.length)
      const again = await t.app.inject({ method: 'GET', url: path, headers: { 'if-none-match': String(res.headers.etag) } })
      expect(again.statusCode).toBe(304)
    }
    expect(sizes['/embed.js']).toBeLessThan(2 * 1024)
    expect(sizes['/widget.js']).toBeLessThan(35 * 1024)
  })

  it('points the loader at WIDGET_LOADER_URL when it is set', async () => {
    const other = await startApp({ env: { WIDGET_LOADER_URL: 'https://cdn.example.com/chat', PUBLIC_BASE_URL: 'https://api.example.com' } })
    try {
      const code = await (await fetch(`${other.url}/embed.js`)).text()
      expect(code).toMatch(/https:\/\/cdn\.example\.com\/chat\/widget\.js\?v=/)
      expect(code).toContain('https://api.example.com')
    } finally {
      await other.close()
    }
    // a second service of its own (a new embedded database and its migrations): on a loaded machine past 30 s
  }, 120_000)

  it('serves widget.js cacheable for a year when asked by its version', async () => {
    const loader = await (await fetch(`${t.url}/embed.js`)).text()
    const v = /widget\.js\?v=([A-Za-z0-9_-]+)/.exec(loader)![1]
    const res = await fetch(`${t.url}/widget.js?v=${v}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toContain('immutable')
    expect(await res.text()).toContain('attachShadow')
  })
})

describe('GET /widget/health and /widget/config', () => {
  it('health answers string values', async () => {
    const res = await t.api().get('/widget/health')
    expect(res.status).toBe(200)
    expect(res.body.status).toBe('ok')
    for (const v of Object.values(res.body)) expect(typeof v).toBe('string')
  })

  it('answers the config with English labels by default and localised ones for a locale', async () => {
    const tenant = await createTenant(t)
    const bot = await botWith(tenant, { link_safety_enabled: true, allowed_domains: ['docs.example.com'] })
    const res = await t.api().get(`/widget/config?bot_id=${bot.public_id}`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      bot_id: bot.public_id,
      name: 'Widget bot',
      link_safety_enabled: true,
      allowed_domains: ['docs.example.com'],
      link_safety_labels: { title: 'Open external link?', body: 'You are going to {hostname}. Continue?', continue_label: 'Open', cancel_label: 'Cancel' },
      locale: 'en',
    })
    expect(res.body.labels.talk_to_human).toBe('Talk to a human')

    const de = await t.api().get(`/widget/config?bot_id=${bot.public_id}&locale=de-DE`)
    expect(de.body.locale).toBe('de')
    expect(de.body.link_safety_labels.title).toBe('Externen Link öffnen?')
    expect(de.body.labels.send).toBe('Senden')
    for (const [locale, cancel] of [
      ['fr', 'Annuler'],
      ['es', 'Cancelar'],
      ['ru', 'Отмена'],
      ['pt-BR', 'Cancelar'],
      ['nl', 'Annuleren'],
      ['ja', 'Cancel'],
    ]) {
      const r = await t.api().get(`/widget/config?bot_id=${bot.public_id}&locale=${locale}`)
      expect(r.body.link_safety_labels.cancel_label, locale).toBe(cancel)
    }
  })

  it('answers 404 for an unknown or deactivated bot', async () => {
    expect((await t.api().get('/widget/config?bot_id=ch_doesnotexist000000')).status).toBe(404)
    const tenant = await createTenant(t)
    const bot = await botWith(tenant, {})
    await tenant.api.patch(`/bots/${bot.id}`, { is_active: false })
    const res = await t.api().get(`/widget/config?bot_id=${bot.public_id}`)
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: 'Bot not found' })
  })

  it('validates the query (missing bot_id is 422)', async () => {
    const res = await t.api().get('/widget/config')
    expect(res.status).toBe(422)
    expect(res.body.detail[0].loc).toEqual(['query', 'bot_id'])
  })
})

describe('CORS per bot', () => {
  it('a bot with allowed domains answers browsers only on those hosts and their subdomains', async () => {
    const tenant = await createTenant(t)
    const bot = await botWith(tenant, { allowed_domains: ['shop.example.com'] })
    const api = t.api()
    const path = `/widget/config?bot_id=${bot.public_id}`

    for (const origin of ['https://shop.example.com', 'https://www.shop.example.com']) {
      const ok = await api.get(path, { origin })
      expect(ok.status, origin).toBe(200)
      expect(ok.headers.get('access-control-allow-origin')).toBe(origin)
    }
    for (const origin of ['https://evil.example.net', 'https://shop.example.com.evil.net', 'null']) {
      const bad = await api.get(path, { origin })
      expect(bad.status, origin).toBe(403)
      expect(bad.headers.get('access-control-allow-origin')).toBeNull()
      expect(bad.body.detail).toBe('This website is not allowed to use this chat bot')
    }
    // A request without Origin is not a browser page on another site (server-side use, same-origin).
    expect((await api.get(path)).status).toBe(200)

    const preflightOk = await api.request('OPTIONS', path, undefined, {
      origin: 'https://shop.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    })
    expect(preflightOk.status).toBe(204)
    expect(preflightOk.headers.get('access-control-allow-origin')).toBe('https://shop.example.com')
    expect(preflightOk.headers.get('access-control-allow-headers')).toMatch(/content-type/i)
    const preflightBad = await api.request('OPTIONS', path, undefined, { origin: 'https://evil.example.net', 'access-control-request-method': 'POST' })
    expect(preflightBad.headers.get('access-control-allow-origin')).toBeNull()
    expect(preflightBad.status).not.toBe(204)
  })

  it('a bot allowing localhost answers a local test page on any port', async () => {
    const tenant = await createTenant(t)
    const bot = await botWith(tenant, { allowed_domains: ['localhost:5173'] })
    const path = `/widget/config?bot_id=${bot.public_id}`
    for (const origin of ['http://localhost:5173', 'http://localhost:8001']) {
      const ok = await t.api().get(path, { origin })
      expect(ok.status, origin).toBe(200)
      expect(ok.headers.get('access-control-allow-origin')).toBe(origin)
    }
    expect((await t.api().get(path, { origin: 'http://localhost.evil.net' })).status).toBe(403)
  })

  it('a bot without allowed domains is open to every page', async () => {
    const tenant = await createTenant(t)
    const res = await t.api().get(`/widget/config?bot_id=${tenant.bot.public_id}`, { origin: 'https://any.example.org' })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://any.example.org')
  })

  it('session init (bot in the body) is refused from a foreign page', async () => {
    const tenant = await createTenant(t)
    const bot = await botWith(tenant, { allowed_domains: ['shop.example.com'] })
    const res = await t.api().post('/widget/session/init', { bot_id: bot.public_id }, { origin: 'https://evil.example.net' })
    expect(res.status).toBe(403)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('rate limits per visitor IP', () => {
  const cases: [string, string, number, (api: Api, q: string) => Promise<{ status: number; body: any; headers: Headers }>][] = [
    ['config', '60 per 1 minute', 60, (api) => api.get('/widget/config?bot_id=ch_nope00000000000000')],
    ['session init', '10 per 1 minute', 10, (api) => api.post('/widget/session/init', { bot_id: 'ch_nope00000000000000' })],
    ['chat', '30 per 1 minute', 30, (api) => api.post('/widget/chat?bot_id=ch_nope00000000000000', { message: 'hi' })],
    ['history', '30 per 1 minute', 30, (api, q) => api.get(`/widget/history?bot_id=ch_nope00000000000000&session_id=${q}`)],
    ['escalate', '20 per 1 minute', 20, (api, q) => api.post(`/widget/escalate?bot_id=ch_nope00000000000000&session_id=${q}`, {})],
  ]
  it.each(cases)('%s: %s, then the contract 429 with Retry-After; another visitor is unaffected', async (_name, text, max, call) => {
    const sid = '00000000-0000-4000-8000-000000000000'
    const api = t.api()
    for (let i = 0; i < max; i++) expect((await call(api, sid)).status).toBe(404)
    const limited = await call(api, sid)
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({ error: `Rate limit exceeded: ${text}` })
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await call(t.api(), sid)).status).toBe(404)
  })
})

// --- the answer stream and the session endpoints (need the chat pipeline and document upload) ----------

const KNOWLEDGE = `# Resetting your password

To reset your password, open Settings, choose Security and press the Reset password button. We then send a reset link to your e-mail address, and the link stays valid for one hour.

# Billing

Invoices are sent on the first day of every month and can be downloaded from the Billing page as PDF files.
`

interface Frame {
  type: string
  [k: string]: any
}

/** POSTs to /widget/chat and reads the whole event stream (or until `until` says stop). */
async function chat(
  api: Api,
  query: string,
  body: unknown,
  opts: { headers?: Record<string, string>; until?: (f: Frame) => boolean } = {},
): Promise<{ status: number; headers: Headers; frames: Frame[]; raw: string; json: any }> {
  const ctl = new AbortController()
  const res = await fetch(`${api.base}/widget/chat?${query}`, {
    method: 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), 'x-forwarded-for': api.ip, ...opts.headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: ctl.signal,
  })
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const text = await res.text()
    return { status: res.status, headers: res.headers, frames: [], raw: text, json: text ? JSON.parse(text) : null }
  }
  const frames: Frame[] = []
  let raw = ''
  const decoder = new TextDecoder()
  try {
    for await (const part of reads(res.body!)) {
      raw += decoder.decode(part, { stream: true })
      const blocks = raw.split('\n\n')
      frames.length = 0
      for (const b of blocks.slice(0, -1)) if (b.startsWith('data: ')) frames.push(JSON.parse(b.slice(6)))
      if (opts.until && frames.length && opts.until(frames[frames.length - 1]!)) {
        ctl.abort()
        break
      }
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err
  }
  return { status: res.status, headers: res.headers, frames, raw, json: null }
}

async function addKnowledge(tenant: Tenant) {
  const form = new FormData()
  form.append('file', new Blob([KNOWLEDGE], { type: 'text/markdown' }), 'help.md')
  const up = await tenant.api.post('/documents', form)
  expect(up.status, up.text).toBe(201)
  const deadline = Date.now() + 20_000
  for (;;) {
    const doc = await tenant.api.get(`/documents/${up.body.id}`)
    if (doc.body.status === 'ready') return
    if (doc.body.status === 'error' || Date.now() > deadline) throw new Error(`document not indexed: ${doc.text.slice(0, 300)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function newSession(botPublicId: string, api = t.api()) {
  const res = await api.post('/widget/session/init', { bot_id: botPublicId })
  expect(res.status, res.text).toBe(200)
  return res.body.session_id as string
}

describe('POST /widget/session/init', () => {
  it('starts an anonymous session without a token, and with a token that does not verify', async () => {
    const tenant = await createTenant(t)
    await tenant.api.post('/tenants/me/kyc/secret')
    const none = await t.api().post('/widget/session/init', { bot_id: tenant.bot.public_id, locale: 'de-DE' })
    expect(none.status).toBe(200)
    expect(none.body).toEqual({ session_id: expect.stringMatching(/^[0-9a-f-]{36}$/), mode: 'anonymous' })
    const forged = signIdentityToken({ user_id: 'u1', exp: nowS() + 300 }, 'f'.repeat(64))
    for (const identity_token of [forged, 'garbage', 'x.y', '']) {
      const r = await t.api().post('/widget/session/init', { bot_id: tenant.bot.public_id, identity_token })
      expect(r.status).toBe(200)
      expect(r.body.mode).toBe('anonymous')
    }
  })

  it('identifies a visitor with a token signed by the current secret, or the previous one within its hour', async () => {
    const tenant = await createTenant(t)
    const first = (await tenant.api.post('/tenants/me/kyc/secret')).body.secret_key as string
    const token = (secret: string) => signIdentityToken({ user_id: 'visitor-7', email: 'v@example.com', exp: nowS() + 600 }, secret)
    const init = (identity_token: string) => t.api().post('/widget/session/init', { bot_id: tenant.bot.public_id, identity_token })

    expect((await init(token(first))).body.mode).toBe('identified')
    // An expired token is anonymous.
    expect((await init(signIdentityToken({ user_id: 'v', exp: nowS() - 1 }, first))).body.mode).toBe('anonymous')

    const second = (await tenant.api.post('/tenants/me/kyc/rotate')).body.secret_key as string
    expect((await init(token(second))).body.mode).toBe('identified')
    expect((await init(token(first))).body.mode).toBe('identified')
    t.clock.advance(61 * 60_000)
    expect((await init(token(first))).body.mode).toBe('anonymous')
    expect((await init(token(second))).body.mode).toBe('identified')

    // The identified sessions feed the KYC status of the dashboard.
    const login = await t.api().post('/auth/login', { email: tenant.email, password: tenant.password })
    const status = await t.api().withToken(login.body.token).get('/tenants/me/kyc/status')
    expect(status.body.identified_sessions_7d).toBe(4)
    expect(status.body.identified_session_rate_7d).toBeCloseTo(4 / 6, 3)
    expect(status.body.last_identified_session).toMatch(/Z$/)
  })

  it('answers 404 for an unknown or inactive bot, 403 for an inactive tenant, 400 without a language-model key', async () => {
    expect((await t.api().post('/widget/session/init', { bot_id: 'ch_unknown0000000000' })).status).toBe(404)
    const tenant = await createTenant(t)
    const bot = await botWith(tenant, {})
    await tenant.api.patch(`/bots/${bot.id}`, { is_active: false })
    expect((await t.api().post('/widget/session/init', { bot_id: bot.public_id })).status).toBe(404)

    await t.ctx.db.updateTable('tenants').set({ is_active: false }).where('id', '=', tenant.tenantId).execute()
    const inactive = await t.api().post('/widget/session/init', { bot_id: tenant.bot.public_id })
    expect(inactive.status).toBe(403)
    expect(inactive.body).toEqual({ detail: 'Tenant is inactive' })

    const keyless = await createTenant(t, { llmKey: null })
    const noKey = await t.api().post('/widget/session/init', { bot_id: keyless.bot.public_id })
    expect(noKey.status).toBe(400)
    expect(typeof noKey.body.detail).toBe('string')
  })
})

describe('POST /widget/chat', () => {
  let tenant: Tenant
  beforeAll(async () => {
    tenant = await createTenant(t)
    await addKnowledge(tenant)
  })

  it('streams status, several chunks and exactly one done frame, with the SSE headers', async () => {
    fake.script((req) => (req.stream ? { chunkDelayMs: 5 } : undefined))
    const api = t.api()
    const r = await chat(api, `bot_id=${tenant.bot.public_id}`, { message: 'How do I reset my password?' }, { headers: { origin: 'https://any.example.org' } })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(r.headers.get('cache-control')).toBe('no-cache')
    expect(r.headers.get('x-accel-buffering')).toBe('no')
    expect(r.headers.get('access-control-allow-origin')).toBe('https://any.example.org')

    expect(r.frames[0]).toEqual({ type: 'status', stage: 'thinking' })
    const chunks = r.frames.filter((f) => f.type === 'chunk')
    expect(chunks.length).toBeGreaterThanOrEqual(3)
    const ends = r.frames.filter((f) => f.type === 'done' || f.type === 'error')
    expect(ends).toHaveLength(1)
    const done = r.frames[r.frames.length - 1]!
    expect(done).toEqual({
      type: 'done',
      text: expect.stringMatching(/reset/i),
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      message_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      chat_ended: false,
      owner: 'bot',
      sources: expect.any(Array),
      // the session's language, detected from the question (#40): the widget's texts follow it
      language: 'en',
    })
    expect(chunks.map((c) => c.text).join('')).toBe(done.text)
    for (const f of r.frames.filter((f) => f.type === 'status')) expect(['thinking', 'searching', 'writing']).toContain(f.stage)

    // The session goes on with the same id; history has both turns in order.
    const again = await chat(api, `bot_id=${tenant.bot.public_id}&session_id=${done.session_id}`, { message: 'How long is the reset link valid?' })
    expect(again.frames.at(-1)!.session_id).toBe(done.session_id)
    const hist = await api.get(`/widget/history?bot_id=${tenant.bot.public_id}&session_id=${done.session_id}`)
    expect(hist.status).toBe(200)
    expect(hist.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(hist.body.messages[1]).toEqual({
      id: done.message_id,
      role: 'assistant',
      content: done.text,
      created_at: expect.stringMatching(/Z$/),
      from_operator: false,
      author_name: null,
      sources: expect.any(Array),
      attachments: [],
    })
    expect(hist.body).toMatchObject({ session_id: done.session_id, chat_ended: false, ticket_number: null, owner: 'bot', assignee_name: null })
  })

  it('refuses before streaming: unknown bot, bad session id, empty or too long message', async () => {
    const api = t.api()
    const bot = tenant.bot.public_id
    expect((await chat(api, 'bot_id=ch_unknown0000000000', { message: 'hi' })).status).toBe(404)

    const badId = await chat(api, `bot_id=${bot}&session_id=not-a-uuid`, { message: 'hi' })
    expect(badId.status).toBe(422)
    expect(badId.json.detail[0].loc).toEqual(['query', 'session_id'])

    for (const body of [{ message: '' }, { message: '   ' }, {}, undefined]) {
      const r = await chat(api, `bot_id=${bot}`, body)
      expect(r.status, JSON.stringify(body)).toBe(422)
      expect(r.json).toEqual({ detail: { code: 'message_required', message: expect.any(String) } })
    }
    const long = await chat(api, `bot_id=${bot}`, { message: 'a'.repeat(1001) })
    expect(long.status).toBe(422)
    expect(long.json).toEqual({ detail: { code: 'message_too_long', message: expect.any(String), max_chars: 1000 } })
    expect((await chat(api, `bot_id=${bot}`, { message: 'é'.repeat(1000) })).status).toBe(200)
  })

  it("treats another bot's or another tenant's session as not found", async () => {
    const sameTenantBot = await botWith(tenant, {})
    const foreignSession = await newSession(sameTenantBot.public_id)
    const other = await createTenant(t)
    const otherSession = await newSession(other.bot.public_id)
    const api = t.api()
    for (const sid of [foreignSession, otherSession, '00000000-0000-4000-8000-000000000000']) {
      const r = await chat(api, `bot_id=${tenant.bot.public_id}&session_id=${sid}`, { message: 'hello' })
      expect(r.status).toBe(404)
      expect(r.json).toEqual({ detail: { code: 'session_not_found', message: expect.any(String) } })
      const h = await api.get(`/widget/history?bot_id=${tenant.bot.public_id}&session_id=${sid}`)
      expect(h.status).toBe(404)
      expect(h.body.detail.code).toBe('session_not_found')
      const e = await api.post(`/widget/escalate?bot_id=${tenant.bot.public_id}&session_id=${sid}`, {})
      expect(e.status).toBe(404)
    }
  })

  it('ends with one error frame when the model fails after the stream opened', async () => {
    fake.fail('http500', { match: (r) => r.body?.stream === true })
    try {
      const r = await chat(t.api(), `bot_id=${tenant.bot.public_id}`, { message: 'How do I reset my password?' })
      expect(r.status).toBe(200)
      expect(r.frames[0]).toEqual({ type: 'status', stage: 'thinking' })
      const ends = r.frames.filter((f) => f.type === 'done' || f.type === 'error')
      expect(ends).toEqual([{ type: 'error', code: expect.any(String), message: expect.any(String) }])
      expect(r.frames.at(-1)!.type).toBe('error')
      expect(r.raw).not.toMatch(/stack|at \w+ \(/)
    } finally {
      fake.reset()
    }
  })

  it('sends heartbeat comments while the model is slow', async () => {
    fake.script((req) => (req.stream ? { delayMs: 700 } : undefined))
    try {
      const r = await chat(t.api(), `bot_id=${tenant.bot.public_id}`, { message: 'How do I reset my password?' })
      expect(r.raw).toMatch(/^: ping$/m)
      expect(r.frames.at(-1)!.type).toBe('done')
    } finally {
      fake.reset()
    }
  })

  it('cancels the model call when the visitor goes away, and stores the turn consistently', async () => {
    const long = Array.from({ length: 80 }, (_, i) => `word${i} `)
    fake.script((req) => (req.stream ? { chunks: long, chunkDelayMs: 50 } : undefined))
    try {
      const sid = await newSession(tenant.bot.public_id)
      const before = fake.requests.length
      const r = await chat(
        t.api(),
        `bot_id=${tenant.bot.public_id}&session_id=${sid}`,
        { message: 'How do I reset my password?' },
        { until: (f) => f.type === 'chunk' },
      )
      expect(r.frames.some((f) => f.type === 'chunk')).toBe(true)
      const streamCall = () => fake.requests.slice(before).find((q) => q.body?.stream === true)
      await expect.poll(() => streamCall()?.clientAborted, { timeout: 5000 }).toBe(true)
      expect(streamCall()!.completed).toBe(false)
      // The question is stored, and at most one (partial, marked) answer after it.
      await expect
        .poll(
          async () =>
            (await t.api().get(`/widget/history?bot_id=${tenant.bot.public_id}&session_id=${sid}`)).body.messages.map((m: { role: string }) => m.role),
          { timeout: 5000 },
        )
        .toEqual(expect.arrayContaining(['user']))
      const hist = (await t.api().get(`/widget/history?bot_id=${tenant.bot.public_id}&session_id=${sid}`)).body
      expect(hist.messages.filter((m: { role: string }) => m.role === 'user')).toHaveLength(1)
      expect(hist.messages.filter((m: { role: string }) => m.role === 'assistant').length).toBeLessThanOrEqual(1)
      expect(hist.messages.map((m: { content: string }) => m.content).join(' ')).not.toContain('word79')
    } finally {
      fake.reset()
    }
  })
})

describe('escalate, history and read receipts', () => {
  it('escalates: ticket number, chat ended (owner queue) in history, next message delivered to the team, not answered', async () => {
    const tenant = await createTenant(t)
    const api = t.api()
    const sid = await newSession(tenant.bot.public_id, api)
    await chat(api, `bot_id=${tenant.bot.public_id}&session_id=${sid}`, { message: 'My invoice is wrong' })
    const esc = await api.post(`/widget/escalate?bot_id=${tenant.bot.public_id}&session_id=${sid}`, { user_note: 'please call me', trigger: 'user_request' })
    expect(esc.status).toBe(200)
    expect(esc.body).toMatchObject({ message: expect.any(String), ticket_number: expect.stringMatching(/^ESC-\d{4}$/), owner: 'queue' })
    const hist = await api.get(`/widget/history?bot_id=${tenant.bot.public_id}&session_id=${sid}`)
    expect(hist.body).toMatchObject({ chat_ended: true, owner: 'queue', assignee_name: null })
    expect(hist.body.ticket_number).toBe(esc.body.ticket_number)
    // a person owns the conversation now: the message is stored and delivered, nobody answers it here
    const waiting = await chat(api, `bot_id=${tenant.bot.public_id}&session_id=${sid}`, { message: 'hello?' })
    expect(waiting.status).toBe(200)
    const delivered = waiting.frames.find((f) => f.type === 'delivered')
    expect(delivered).toEqual({ type: 'delivered', message_id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    expect(waiting.frames.filter((f) => f.type === 'chunk')).toEqual([])
    expect(waiting.frames.at(-1)).toMatchObject({ type: 'done', text: '', message_id: delivered!.message_id, chat_ended: true, owner: 'queue' })
    const after = await api.get(`/widget/history?bot_id=${tenant.bot.public_id}&session_id=${sid}`)
    expect(after.body.messages.at(-1)).toMatchObject({ id: delivered!.message_id, role: 'user', content: 'hello?' })
    // The body is optional: trigger defaults to user_request.
    const sid2 = await newSession(tenant.bot.public_id, api)
    expect((await api.post(`/widget/escalate?bot_id=${tenant.bot.public_id}&session_id=${sid2}`)).status).toBe(200)
    // A visitor who asks for a human before asking anything: the ticket's question is their note, not a placeholder.
    const sid3 = await newSession(tenant.bot.public_id, api)
    await api.post(`/widget/escalate?bot_id=${tenant.bot.public_id}&session_id=${sid3}`, { user_note: 'My order 1182 never arrived' })
    const tickets = (await t.api().withToken(tenant.token).get('/escalations')).body.tickets as { session_id: string; primary_question: string }[]
    expect(tickets.find((x) => x.session_id === sid3)?.primary_question).toBe('My order 1182 never arrived')
  })

  it('moves the read cursor forward only; an older receipt is accepted and ignored; a foreign message is 404', async () => {
    const tenant = await createTenant(t)
    const api = t.api()
    const sid = await newSession(tenant.bot.public_id, api)
    await chat(api, `bot_id=${tenant.bot.public_id}&session_id=${sid}`, { message: 'hello there' })
    await chat(api, `bot_id=${tenant.bot.public_id}&session_id=${sid}`, { message: 'what about invoices?' })
    const msgs = (await api.get(`/widget/history?bot_id=${tenant.bot.public_id}&session_id=${sid}`)).body.messages as { id: string; role: string }[]
    const [firstAnswer, secondAnswer] = msgs.filter((m) => m.role === 'assistant')
    const read = (message_id: string) => api.post(`/widget/messages/read?bot_id=${tenant.bot.public_id}&session_id=${sid}`, { message_id })
    const cursor = async () =>
      (await t.ctx.db.selectFrom('chat_sessions').select('read_message_id').where('id', '=', sid).executeTakeFirstOrThrow()).read_message_id

    expect((await read(firstAnswer!.id)).body).toEqual({ session_id: sid, read_message_id: firstAnswer!.id })
    expect(await cursor()).toBe(firstAnswer!.id)
    expect((await read(secondAnswer!.id)).body).toEqual({ session_id: sid, read_message_id: secondAnswer!.id })
    const older = await read(firstAnswer!.id)
    expect(older.status).toBe(200)
    expect(older.body).toEqual({ session_id: sid, read_message_id: secondAnswer!.id })
    expect(await cursor()).toBe(secondAnswer!.id)

    const otherSid = await newSession(tenant.bot.public_id, api)
    await chat(api, `bot_id=${tenant.bot.public_id}&session_id=${otherSid}`, { message: 'hi' })
    const foreign = (await api.get(`/widget/history?bot_id=${tenant.bot.public_id}&session_id=${otherSid}`)).body.messages[0].id
    expect((await read(foreign)).status).toBe(404)
    expect((await read('00000000-0000-4000-8000-000000000000')).status).toBe(404)
    expect((await read('nope')).status).toBe(422)
    expect(await cursor()).toBe(secondAnswer!.id)
  })
})
