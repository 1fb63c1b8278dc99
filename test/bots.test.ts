import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyIdentityToken } from '../src/modules/tenants/identity-token.fns.js'
import { startApp, type TestApp } from './helpers/app.js'
import { PASSWORD, createTenant, uniqueEmail } from './helpers/factories.js'

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
const PUBLIC_ID = /^ch_[a-z0-9]{18}$/

let t: TestApp
beforeAll(async () => {
  t = await startApp()
})
afterAll(async () => {
  await t?.close()
})

describe('bots CRUD', () => {
  it('lists the default bot of a new tenant with the full Bot shape', async () => {
    const tenant = await createTenant(t)
    const res = await tenant.api.get('/bots')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      items: [
        {
          id: tenant.bot.id,
          tenant_id: tenant.tenantId,
          name: expect.any(String),
          public_id: expect.stringMatching(PUBLIC_ID),
          is_active: true,
          link_safety_enabled: false,
          allowed_domains: [],
          agent_instructions: null,
          website_url: null,
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      ],
    })
  })

  it('creates a bot with 201, normalising allowed domains, and reads it back', async () => {
    const tenant = await createTenant(t)
    const res = await tenant.api.post('/bots', {
      name: '  Sales bot  ',
      agent_instructions: 'Be brief.',
      website_url: 'https://shop.example.com',
      link_safety_enabled: true,
      allowed_domains: ['https://Shop.Example.COM:8443/path?q=1', '*.example.org', 'EXAMPLE.org.', 'shop.example.com', 'http://user@docs.example.net/'],
    })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant_id: tenant.tenantId,
      name: 'Sales bot',
      public_id: expect.stringMatching(PUBLIC_ID),
      is_active: true,
      link_safety_enabled: true,
      allowed_domains: ['shop.example.com', 'example.org', 'docs.example.net'],
      agent_instructions: 'Be brief.',
      website_url: 'https://shop.example.com',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    expect(res.body.public_id).not.toBe(tenant.bot.public_id)
    expect((await tenant.api.get(`/bots/${res.body.id}`)).body).toEqual(res.body)
    const list = await tenant.api.get('/bots')
    expect(list.body.items.map((b: { id: string }) => b.id)).toEqual([tenant.bot.id, res.body.id])
  })

  it('creates with only a name, and nulls count as absent', async () => {
    const tenant = await createTenant(t)
    const res = await tenant.api.post('/bots', { name: 'Bare', agent_instructions: null, website_url: null, link_safety_enabled: null, allowed_domains: null })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ name: 'Bare', agent_instructions: null, website_url: null, link_safety_enabled: false, allowed_domains: [] })
  })

  it('refuses entries that are no host name with 422 naming the entry', async () => {
    const tenant = await createTenant(t)
    // 'intranet' stands where 'localhost' stood before the contract's later decision: one label, no dot.
    for (const bad of ['intranet', 'not a host', 'http://', '*.', 'exa mple.com', '-bad-.example.com']) {
      const res = await tenant.api.post('/bots', { name: 'X', allowed_domains: ['good.example.com', bad] })
      expect(res.status, bad).toBe(422)
      expect(res.body.detail).toEqual([{ loc: ['body', 'allowed_domains', 1], msg: expect.any(String), type: expect.any(String) }])
    }
    const patch = await tenant.api.patch(`/bots/${tenant.bot.id}`, { allowed_domains: ['intranet:8080'] })
    expect(patch.status).toBe(422)
    expect((await tenant.api.get('/bots')).body.items).toHaveLength(1)
  })

  it('accepts localhost and host:port for local development (contract, later decisions)', async () => {
    const tenant = await createTenant(t)
    const res = await tenant.api.patch(`/bots/${tenant.bot.id}`, {
      allowed_domains: ['localhost', 'LOCALHOST:5173', 'http://localhost:3000/demo', '127.0.0.1:8080', 'docs.example.com:8443'],
    })
    expect(res.status, res.text).toBe(200)
    expect(res.body.allowed_domains).toEqual(['localhost', '127.0.0.1', 'docs.example.com'])
  })

  it('validates the create body', async () => {
    const tenant = await createTenant(t)
    const missing = await tenant.api.post('/bots', {})
    expect(missing.status).toBe(422)
    expect(missing.body.detail[0]).toEqual({ loc: ['body', 'name'], msg: 'Field required', type: 'missing' })
    expect((await tenant.api.post('/bots', { name: '' })).status).toBe(422)
    expect((await tenant.api.post('/bots', { name: 'n'.repeat(201) })).status).toBe(422)
    expect((await tenant.api.post('/bots', { name: 7 })).status).toBe(422)
    expect((await tenant.api.post('/bots', { name: 'X', link_safety_enabled: 'yes' })).status).toBe(422)
    expect((await tenant.api.post('/bots', { name: 'X', allowed_domains: 'example.com' })).status).toBe(422)
    expect((await tenant.api.post('/bots', { name: 'X', allowed_domains: Array(101).fill('a.example.com') })).status).toBe(422)
    expect((await tenant.api.post('/bots', { name: 'X', agent_instructions: 'i'.repeat(8001) })).status).toBe(422)
    expect((await tenant.api.post('/bots', { name: 'bad\u0000name' })).status).toBe(422)
    expect((await tenant.api.get('/bots')).body.items).toHaveLength(1)
  })

  it('updates fields one by one; absent and null fields stay as they were', async () => {
    const tenant = await createTenant(t)
    const id = tenant.bot.id
    const before = (await tenant.api.get(`/bots/${id}`)).body
    t.clock.advance(1000)
    const renamed = await tenant.api.patch(`/bots/${id}`, { name: 'Renamed' })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toEqual({ ...before, name: 'Renamed', updated_at: expect.stringMatching(ISO) })
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThan(Date.parse(before.updated_at))

    const more = await tenant.api.patch(`/bots/${id}`, {
      agent_instructions: 'Answer in French.',
      link_safety_enabled: true,
      allowed_domains: ['WWW.Example.com', 'www.example.com:443'],
    })
    expect(more.body).toMatchObject({
      name: 'Renamed',
      agent_instructions: 'Answer in French.',
      link_safety_enabled: true,
      allowed_domains: ['www.example.com'],
    })

    const nulls = await tenant.api.patch(`/bots/${id}`, { name: null, is_active: null, link_safety_enabled: null })
    expect(nulls.body).toMatchObject({ name: 'Renamed', is_active: true, link_safety_enabled: true })
    const cleared = await tenant.api.patch(`/bots/${id}`, { agent_instructions: null, allowed_domains: null })
    expect(cleared.body).toMatchObject({ agent_instructions: null, allowed_domains: [] })
    expect((await tenant.api.patch(`/bots/${id}`, { name: '' })).status).toBe(422)
    expect((await tenant.api.patch(`/bots/${id}`, { is_active: 'no' })).status).toBe(422)
  })

  it('keeps one active bot: deactivating or deleting the last active one is 409', async () => {
    const tenant = await createTenant(t)
    const first = tenant.bot.id
    const deact = await tenant.api.patch(`/bots/${first}`, { is_active: false })
    expect(deact.status).toBe(409)
    expect(deact.body).toEqual({ detail: expect.any(String) })
    expect((await tenant.api.delete(`/bots/${first}`)).status).toBe(409)
    expect((await tenant.api.get(`/bots/${first}`)).body.is_active).toBe(true)

    const second = (await tenant.api.post('/bots', { name: 'Second' })).body.id
    expect((await tenant.api.patch(`/bots/${first}`, { is_active: false })).body.is_active).toBe(false)
    // `second` is now the last active bot.
    expect((await tenant.api.patch(`/bots/${second}`, { is_active: false })).status).toBe(409)
    expect((await tenant.api.delete(`/bots/${second}`)).status).toBe(409)
    // An inactive bot can go; a bot can be activated again.
    expect((await tenant.api.patch(`/bots/${first}`, { is_active: true })).body.is_active).toBe(true)
    const del = await tenant.api.delete(`/bots/${second}`)
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    expect((await tenant.api.get(`/bots/${second}`)).status).toBe(404)
    expect((await tenant.api.get('/bots')).body.items.map((b: { id: string }) => b.id)).toEqual([first])
  })

  it('answers 404 for unknown ids and 422 for ids that are not UUIDs', async () => {
    const tenant = await createTenant(t)
    const unknown = '00000000-0000-4000-8000-000000000000'
    expect((await tenant.api.get(`/bots/${unknown}`)).status).toBe(404)
    expect((await tenant.api.get(`/bots/${unknown}`)).body).toEqual({ detail: expect.any(String) })
    const bad = await tenant.api.get('/bots/not-a-uuid')
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(['path', 'bot_id'])
    // A public id is not a bot id here.
    expect((await tenant.api.get(`/bots/${tenant.bot.public_id}`)).status).toBe(422)
  })
})

describe('disclosure', () => {
  it('defaults to standard and changes only through a known level', async () => {
    const tenant = await createTenant(t)
    const id = tenant.bot.id
    const def = await tenant.api.get(`/bots/${id}/disclosure`)
    expect(def.status).toBe(200)
    expect(def.body).toEqual({ bot_id: id, level: 'standard', updated_at: expect.stringMatching(ISO) })
    for (const level of ['detailed', 'corporate', 'standard', 'corporate']) {
      const put = await tenant.api.put(`/bots/${id}/disclosure`, { level })
      expect(put.status).toBe(200)
      expect(put.body).toMatchObject({ bot_id: id, level })
    }
    expect((await tenant.api.get(`/bots/${id}/disclosure`)).body.level).toBe('corporate')
    for (const bad of [{ level: 'loud' }, { level: 'Standard' }, {}, { level: null }]) {
      const res = await tenant.api.put(`/bots/${id}/disclosure`, bad)
      expect(res.status, JSON.stringify(bad)).toBe(422)
      expect(res.body.detail[0].loc.slice(0, 2)).toEqual(['body', 'level'])
    }
    expect((await tenant.api.get(`/bots/${id}/disclosure`)).body.level).toBe('corporate')
  })
})

describe('tenant isolation', () => {
  it("answers 404 to every bot route for another tenant's bot and changes nothing", async () => {
    const a = await createTenant(t)
    const b = await createTenant(t)
    const extra = (await a.api.post('/bots', { name: 'Second of A' })).body
    const before = (await a.api.get('/bots')).body
    for (const id of [a.bot.id, extra.id]) {
      for (const [method, path, body] of [
        ['GET', `/bots/${id}`, undefined],
        ['PATCH', `/bots/${id}`, { name: 'hijacked', is_active: false }],
        ['DELETE', `/bots/${id}`, undefined],
        ['GET', `/bots/${id}/disclosure`, undefined],
        ['PUT', `/bots/${id}/disclosure`, { level: 'detailed' }],
      ] as const) {
        const res = await b.api.request(method, path, body)
        expect(res.status, `${method} ${path}`).toBe(404)
        expect(res.body).toEqual({ detail: expect.any(String) })
      }
    }
    expect((await a.api.get('/bots')).body).toEqual(before)
    expect((await a.api.get(`/bots/${a.bot.id}/disclosure`)).body.level).toBe('standard')
    expect((await b.api.get('/bots')).body.items.map((x: { id: string }) => x.id)).toEqual([b.bot.id])
  })

  it('refuses a widget API key and an unverified user on bot routes', async () => {
    const tenant = await createTenant(t)
    expect((await t.api().withApiKey(tenant.apiKey).get('/bots')).status).toBe(401)
    expect((await t.api().withApiKey(tenant.apiKey).post('/bots', { name: 'x' })).status).toBe(401)
    const api = t.api()
    const email = uniqueEmail()
    await api.post('/auth/register', { email, password: PASSWORD })
    api.withToken((await api.post('/auth/login', { email, password: PASSWORD })).body.token)
    expect((await api.post('/bots', { name: 'x' })).status).toBe(403)
  })
})

describe('GET /auth/me/widget-token', () => {
  it('needs a signing secret (400), then signs a 5-minute identity token with it', async () => {
    const tenant = await createTenant(t)
    const none = await tenant.api.get('/auth/me/widget-token')
    expect(none.status).toBe(400)
    expect(none.body).toEqual({ detail: expect.any(String) })

    const secret = (await tenant.api.post('/tenants/me/kyc/secret')).body.secret_key as string
    const res = await tenant.api.get('/auth/me/widget-token')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ identity_token: expect.any(String), expires_in: 300 })
    const now = Math.floor(t.clock.now().getTime() / 1000)
    const claims = verifyIdentityToken(res.body.identity_token, [secret], now)
    expect(claims).toMatchObject({ user_id: tenant.userId, email: tenant.email })
    expect(claims!.exp - now).toBeGreaterThan(290)
    expect(claims!.exp - now).toBeLessThanOrEqual(300)
    expect(verifyIdentityToken(res.body.identity_token, ['0'.repeat(64)], now)).toBeNull()
    expect(verifyIdentityToken(res.body.identity_token, [secret], now + 301)).toBeNull()

    const forBot = await tenant.api.get(`/auth/me/widget-token?bot_id=${tenant.bot.public_id}`)
    expect(verifyIdentityToken(forBot.body.identity_token, [secret], now)).toMatchObject({ user_id: tenant.userId })
  })

  it("answers 404 for another tenant's bot exactly as for an unknown one, and signs nothing with its secret", async () => {
    const a = await createTenant(t)
    const b = await createTenant(t)
    await a.api.post('/tenants/me/kyc/secret')
    const bSecret = (await b.api.post('/tenants/me/kyc/secret')).body.secret_key as string
    const foreign = await a.api.get(`/auth/me/widget-token?bot_id=${b.bot.public_id}`)
    expect(foreign.status).toBe(404)
    expect(foreign.text).not.toContain('identity_token')
    expect(foreign.text).not.toContain(b.bot.public_id)

    const unknown = await a.api.get('/auth/me/widget-token?bot_id=ch_doesnotexist000000')
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ detail: expect.any(String) })
    expect(foreign.body).toEqual(unknown.body)
    // b's own owner still gets a token signed with b's secret
    const own = await b.api.get(`/auth/me/widget-token?bot_id=${b.bot.public_id}`)
    const now = Math.floor(t.clock.now().getTime() / 1000)
    expect(verifyIdentityToken(own.body.identity_token, [bSecret], now)).toMatchObject({ user_id: b.userId })
    expect((await t.api().get('/auth/me/widget-token')).status).toBe(401)
    expect((await t.api().withApiKey(a.apiKey).get('/auth/me/widget-token')).status).toBe(401)
  })
})
