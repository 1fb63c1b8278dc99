import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import type { Api } from './helpers/http.js'

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
  })

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
    for (const [locale, cancel] of [['fr', 'Annuler'], ['es', 'Cancelar'], ['ru', 'Отмена'], ['pt-BR', 'Cancel']]) {
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

    const preflightOk = await api.request('OPTIONS', path, undefined, { origin: 'https://shop.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' })
    expect(preflightOk.status).toBe(204)
    expect(preflightOk.headers.get('access-control-allow-origin')).toBe('https://shop.example.com')
    expect(preflightOk.headers.get('access-control-allow-headers')).toMatch(/content-type/i)
    const preflightBad = await api.request('OPTIONS', path, undefined, { origin: 'https://evil.example.net', 'access-control-request-method': 'POST' })
    expect(preflightBad.headers.get('access-control-allow-origin')).toBeNull()
    expect(preflightBad.status).not.toBe(204)
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
