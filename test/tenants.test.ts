import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { USER_CACHE_MS } from '../src/http/auth.js'
import { createTenantsRepo } from '../src/modules/tenants/tenants.repo.js'
import { createTenantsService } from '../src/modules/tenants/tenants.service.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { tokenFromMail } from './fakes/smtp.js'
import { startApp, type TestApp } from './helpers/app.js'
import { PASSWORD, createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import type { Api } from './helpers/http.js'

const HOUR = 3600_000
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

let t: TestApp
let fake: FakeLlm
beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url } })
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

/** Logs in again (the JWT expires when a test moves the clock a day on). */
async function relogin(tenant: Tenant): Promise<Api> {
  const api = t.api()
  const res = await api.post('/auth/login', { email: tenant.email, password: tenant.password })
  expect(res.status).toBe(200)
  return api.withToken(res.body.token)
}

/** Whether a widget API key authenticates an X-API-Key route (anything but 401 from POST /chat means it was accepted). */
async function keyWorks(key: string): Promise<boolean> {
  const res = await t.api().withApiKey(key).post('/chat', { question: 'hello?' })
  return res.status !== 401
}

describe('GET /tenants/me', () => {
  it('answers the TenantMeResponse of a fresh tenant field by field, without secrets', async () => {
    const tenant = await createTenant(t, { llmKey: null })
    const res = await tenant.api.get('/tenants/me')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      id: tenant.tenantId,
      name: 'My Workspace',
      has_llm_key: false,
      llm_key_hint: null,
      api_key_hint: `ck_...${tenant.apiKey.slice(-4)}`,
      support_email: null,
      is_verified: true,
      is_active: true,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    expect(res.text).not.toContain(tenant.apiKey)
  })

  it('answers 403 to an unverified user on every tenant route and 401 without credentials', async () => {
    const api = t.api()
    const email = uniqueEmail()
    await api.post('/auth/register', { email, password: PASSWORD })
    const login = await api.post('/auth/login', { email, password: PASSWORD })
    api.withToken(login.body.token)
    for (const [method, path] of [
      ['GET', '/tenants/me'],
      ['PATCH', '/tenants/me'],
      ['POST', '/tenants/me/kyc/secret'],
      ['GET', '/tenants/me/kyc/status'],
      ['GET', '/tenants/me/api-keys'],
      ['POST', '/tenants/me/api-keys/rotate'],
      ['GET', '/tenants/me/privacy'],
      ['GET', '/tenants/me/support-settings'],
    ] as const) {
      const body = method === 'GET' ? undefined : {}
      const res = await api.request(method, path, body)
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body).toEqual({ detail: 'Email not verified' })
      expect((await t.api().request(method, path, body)).status, `${method} ${path} anonymous`).toBe(401)
    }
  })

  it('lets a session opened before verification use tenant routes right after verifying', async () => {
    const api = t.api()
    const email = uniqueEmail()
    await api.post('/auth/register', { email, password: PASSWORD })
    api.withToken((await api.post('/auth/login', { email, password: PASSWORD })).body.token)
    expect((await api.get('/tenants/me')).status).toBe(403)
    const mail = await t.smtp.waitFor((m) => m.to.includes(email))
    expect((await t.api().post('/auth/verify-email', { token: tokenFromMail(mail) })).status).toBe(200)
    const me = await api.get('/tenants/me')
    expect(me.status).toBe(200)
    expect(me.body.is_verified).toBe(true)
    expect((await api.get('/auth/me')).body).toMatchObject({ is_verified: true, tenant_id: me.body.id })
  })

  it('answers 404 when the verified user has no tenant (any more)', async () => {
    const tenant = await createTenant(t)
    await t.ctx.db.deleteFrom('tenants').where('id', '=', tenant.tenantId).execute()
    // Deleted behind the service's back: noticed once the guard's cached user row has lapsed.
    t.clock.advance(USER_CACHE_MS + 1)
    const res = await tenant.api.get('/tenants/me')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: expect.any(String) })
    expect((await tenant.api.get('/bots')).status).toBe(404)
  })

  it('refuses a widget API key on dashboard routes, as a header or as a bearer token', async () => {
    const tenant = await createTenant(t)
    expect((await t.api().withApiKey(tenant.apiKey).get('/tenants/me')).status).toBe(401)
    expect((await t.api().withToken(tenant.apiKey).get('/tenants/me')).status).toBe(401)
    expect((await t.api().withToken(tenant.apiKey).get('/tenants/me/api-keys')).status).toBe(401)
  })
})

describe('PATCH /tenants/me', () => {
  it('sets, keeps, and removes the language-model key by the presence of the field', async () => {
    const tenant = await createTenant(t, { llmKey: null })
    const service = createTenantsService({ db: t.ctx.db, clock: t.ctx.clock, cipher: t.ctx.cipher, repo: createTenantsRepo(t.ctx.db, t.ctx.database.changes) })
    const before = (await tenant.api.get('/tenants/me')).body

    t.clock.advance(1000)
    const set = await tenant.api.patch('/tenants/me', { llm_api_key: 'sk-live-abcdefgh1234' })
    expect(set.status).toBe(200)
    expect(set.body).toMatchObject({ has_llm_key: true, llm_key_hint: 'sk-...1234', name: 'My Workspace' })
    expect(set.text).not.toContain('sk-live-abcdefgh1234')
    expect(Date.parse(set.body.updated_at)).toBeGreaterThan(Date.parse(before.updated_at))
    expect(await service.llmKey(tenant.tenantId)).toBe('sk-live-abcdefgh1234')

    const renamed = await tenant.api.patch('/tenants/me', { name: 'Acme Support' })
    expect(renamed.body).toMatchObject({ name: 'Acme Support', has_llm_key: true, llm_key_hint: 'sk-...1234' })
    expect((await tenant.api.patch('/tenants/me', {})).body.has_llm_key).toBe(true)

    const removedNull = await tenant.api.patch('/tenants/me', { llm_api_key: null })
    expect(removedNull.body).toMatchObject({ has_llm_key: false, llm_key_hint: null })
    expect(await service.llmKey(tenant.tenantId)).toBeNull()

    await tenant.api.patch('/tenants/me', { llm_api_key: 'sk-second-key-9876' })
    const removedEmpty = await tenant.api.patch('/tenants/me', { llm_api_key: '' })
    expect(removedEmpty.body).toMatchObject({ has_llm_key: false, llm_key_hint: null })
    expect((await tenant.api.get('/tenants/me')).body).toMatchObject({ has_llm_key: false, name: 'Acme Support' })
  })

  it('refuses a key that does not start with sk- with 422 and keeps the old one', async () => {
    const tenant = await createTenant(t, { llmKey: 'sk-original-key-0000' })
    for (const bad of ['pk-abcdefgh', 'abc', 'sk- spaced key', 'x'.repeat(600)]) {
      const res = await tenant.api.patch('/tenants/me', { llm_api_key: bad })
      expect(res.status, bad).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body', 'llm_api_key'])
    }
    expect((await tenant.api.patch('/tenants/me', { llm_api_key: 42 })).status).toBe(422)
    expect((await tenant.api.get('/tenants/me')).body).toMatchObject({ has_llm_key: true, llm_key_hint: 'sk-...0000' })
  })

  it('sets and clears the support e-mail and validates it and the name', async () => {
    const tenant = await createTenant(t)
    const set = await tenant.api.patch('/tenants/me', { support_email: 'Help@Acme.example' })
    expect(set.status).toBe(200)
    expect(set.body.support_email).toBe('help@acme.example')
    expect((await tenant.api.patch('/tenants/me', { name: 'X' })).body.support_email).toBe('help@acme.example')
    expect((await tenant.api.patch('/tenants/me', { support_email: 'not-an-email' })).status).toBe(422)
    expect((await tenant.api.patch('/tenants/me', { support_email: '' })).body.support_email).toBeNull()
    await tenant.api.patch('/tenants/me', { support_email: 'a@b.example' })
    expect((await tenant.api.patch('/tenants/me', { support_email: null })).body.support_email).toBeNull()

    const emptyName = await tenant.api.patch('/tenants/me', { name: '' })
    expect(emptyName.status).toBe(422)
    expect(emptyName.body.detail[0].loc).toEqual(['body', 'name'])
    expect((await tenant.api.patch('/tenants/me', { name: 'n'.repeat(201) })).status).toBe(422)
  })
})

describe('signing (KYC) secret', () => {
  it('reports no secret, creates one shown once (409 the second time), and reports a hint', async () => {
    const tenant = await createTenant(t)
    const empty = await tenant.api.get('/tenants/me/kyc/status')
    expect(empty.status).toBe(200)
    expect(empty.body).toEqual({
      has_secret: false,
      masked_secret_hint: null,
      previous_valid_until: null,
      identified_sessions_7d: 0,
      identified_session_rate_7d: 0,
      last_identified_session: null,
    })
    expect((await tenant.api.post('/tenants/me/kyc/rotate')).status).toBe(400)

    const created = await tenant.api.post('/tenants/me/kyc/secret')
    expect(created.status).toBe(200)
    expect(created.body).toEqual({ secret_key: expect.stringMatching(/^[0-9a-f]{64}$/), message: expect.any(String) })
    const secret: string = created.body.secret_key

    const again = await tenant.api.post('/tenants/me/kyc/secret')
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ detail: expect.any(String) })
    expect(again.text).not.toContain(secret)

    const status = await tenant.api.get('/tenants/me/kyc/status')
    expect(status.body).toMatchObject({ has_secret: true, previous_valid_until: null })
    expect(status.body.masked_secret_hint).toMatch(new RegExp(`${secret.slice(-4)}$`))
    expect(status.text).not.toContain(secret.slice(0, 16))
    expect((await tenant.api.get('/tenants/me')).text).not.toContain(secret)
  })

  it('rotates to a new secret and keeps the previous one valid for one hour', async () => {
    const tenant = await createTenant(t)
    const service = createTenantsService({ db: t.ctx.db, clock: t.ctx.clock, cipher: t.ctx.cipher, repo: createTenantsRepo(t.ctx.db, t.ctx.database.changes) })
    const first = (await tenant.api.post('/tenants/me/kyc/secret')).body.secret_key as string

    const rotated = await tenant.api.post('/tenants/me/kyc/rotate')
    expect(rotated.status).toBe(200)
    expect(rotated.body).toEqual({ secret_key: expect.stringMatching(/^[0-9a-f]{64}$/), message: expect.any(String) })
    const second = rotated.body.secret_key as string
    expect(second).not.toBe(first)

    const status = await tenant.api.get('/tenants/me/kyc/status')
    const until = Date.parse(status.body.previous_valid_until)
    expect(until - t.clock.now().getTime()).toBeGreaterThan(HOUR - 60_000)
    expect(until - t.clock.now().getTime()).toBeLessThanOrEqual(HOUR)
    expect(status.body.masked_secret_hint).toMatch(new RegExp(`${second.slice(-4)}$`))
    expect(await service.signingSecrets(tenant.tenantId)).toEqual([second, first])

    t.clock.advance(HOUR - 60_000)
    expect(await service.signingSecrets(tenant.tenantId)).toEqual([second, first])
    t.clock.advance(61_000)
    expect(await service.signingSecrets(tenant.tenantId)).toEqual([second])
    const later = await tenant.api.get('/tenants/me/kyc/status')
    expect(later.body).toMatchObject({ has_secret: true, previous_valid_until: null })
  })
})

describe('widget API keys', () => {
  it('lists keys without plaintext, newest first', async () => {
    const tenant = await createTenant(t)
    const list = await tenant.api.get('/tenants/me/api-keys')
    expect(list.status).toBe(200)
    expect(list.body.items).toEqual([
      {
        id: expect.any(String),
        key_hint: tenant.apiKey.slice(-4),
        status: 'active',
        created_at: expect.stringMatching(ISO),
        expires_at: null,
        revoked_at: null,
        revoked_reason: null,
        last_used_at: null,
      },
    ])
    expect(list.text).not.toContain(tenant.apiKey)
    t.clock.advance(1000)
    const rotated = await tenant.api.post('/tenants/me/api-keys/rotate', {})
    const after = await tenant.api.get('/tenants/me/api-keys')
    expect(after.body.items.map((k: { id: string }) => k.id)).toEqual([rotated.body.key.id, list.body.items[0].id])
    expect(after.text).not.toContain(rotated.body.api_key)
  })

  it('rotates with a 24-hour grace window, after which the old key stops authenticating', async () => {
    const tenant = await createTenant(t)
    const old = tenant.apiKey
    expect(await keyWorks(old)).toBe(true)

    const res = await tenant.api.post('/tenants/me/api-keys/rotate', { revoke_old_immediately: false, reason: 'scheduled' })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      api_key: expect.stringMatching(/^ck_[0-9a-f]{32}$/),
      key: expect.objectContaining({ status: 'active', key_hint: res.body.api_key.slice(-4), expires_at: null }),
      message: expect.any(String),
    })
    const fresh: string = res.body.api_key
    expect(fresh).not.toBe(old)

    const keys = (await tenant.api.get('/tenants/me/api-keys')).body.items
    const oldRow = keys.find((k: { key_hint: string }) => k.key_hint === old.slice(-4))
    expect(oldRow).toMatchObject({ status: 'revoking', revoked_at: null, revoked_reason: 'scheduled' })
    const graceMs = Date.parse(oldRow.expires_at) - t.clock.now().getTime()
    expect(graceMs).toBeGreaterThan(24 * HOUR - 60_000)
    expect(graceMs).toBeLessThanOrEqual(24 * HOUR)

    expect(await keyWorks(old)).toBe(true)
    expect(await keyWorks(fresh)).toBe(true)
    t.clock.advance(24 * HOUR - 60_000)
    expect(await keyWorks(old)).toBe(true)
    t.clock.advance(61_000)
    expect(await keyWorks(old)).toBe(false)
    expect(await keyWorks(fresh)).toBe(true)

    const api = await relogin(tenant)
    const lapsed = (await api.get('/tenants/me/api-keys')).body.items.find((k: { id: string }) => k.id === oldRow.id)
    expect(lapsed).toMatchObject({ status: 'revoked', revoked_at: expect.stringMatching(ISO) })
  })

  it('revokes the old key at once with revoke_old_immediately', async () => {
    const tenant = await createTenant(t)
    const res = await tenant.api.post('/tenants/me/api-keys/rotate', { revoke_old_immediately: true, reason: 'leaked' })
    expect(res.status).toBe(201)
    expect(await keyWorks(tenant.apiKey)).toBe(false)
    expect(await keyWorks(res.body.api_key)).toBe(true)
    const old = (await tenant.api.get('/tenants/me/api-keys')).body.items[1]
    expect(old).toMatchObject({ status: 'revoked', revoked_reason: 'leaked', revoked_at: expect.stringMatching(ISO) })
  })

  it('validates the rotation body', async () => {
    const tenant = await createTenant(t)
    expect((await tenant.api.post('/tenants/me/api-keys/rotate', { reason: 'boredom' })).status).toBe(422)
    expect((await tenant.api.post('/tenants/me/api-keys/rotate', { revoke_old_immediately: 'maybe' })).status).toBe(422)
    // Nothing was rotated by the refused requests.
    expect((await tenant.api.get('/tenants/me/api-keys')).body.items).toHaveLength(1)
    // An empty POST (no body at all) rotates with the defaults.
    const noBody = await tenant.api.post('/tenants/me/api-keys/rotate')
    expect(noBody.status).toBe(201)
    expect((await tenant.api.get('/tenants/me/api-keys')).body.items[1].status).toBe('revoking')
  })

  it('revokes a key with DELETE, refusing the last usable one with 409', async () => {
    const tenant = await createTenant(t)
    const [only] = (await tenant.api.get('/tenants/me/api-keys')).body.items
    const refused = await tenant.api.delete(`/tenants/me/api-keys/${only.id}`)
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({ detail: expect.any(String) })
    expect(await keyWorks(tenant.apiKey)).toBe(true)

    const rotated = await tenant.api.post('/tenants/me/api-keys/rotate', {})
    // The new key is now the only active one: the old one is in its grace window and about to stop working.
    expect((await tenant.api.delete(`/tenants/me/api-keys/${rotated.body.key.id}`)).status).toBe(409)

    const revoked = await tenant.api.delete(`/tenants/me/api-keys/${only.id}`)
    expect(revoked.status).toBe(200)
    expect(revoked.body).toEqual({
      id: only.id,
      key_hint: only.key_hint,
      status: 'revoked',
      created_at: only.created_at,
      expires_at: expect.stringMatching(ISO),
      revoked_at: expect.stringMatching(ISO),
      revoked_reason: expect.any(String),
      last_used_at: expect.anything(),
    })
    expect(await keyWorks(tenant.apiKey)).toBe(false)
    expect(await keyWorks(rotated.body.api_key)).toBe(true)
    // Revoking a revoked key again is harmless.
    expect((await tenant.api.delete(`/tenants/me/api-keys/${only.id}`)).status).toBe(200)

    expect((await tenant.api.delete('/tenants/me/api-keys/00000000-0000-4000-8000-000000000000')).status).toBe(404)
    expect((await tenant.api.delete('/tenants/me/api-keys/not-a-uuid')).status).toBe(422)
  })

  it("answers 404 for another tenant's key and leaves it working", async () => {
    const a = await createTenant(t)
    const b = await createTenant(t)
    await a.api.post('/tenants/me/api-keys/rotate', {})
    const aKeys = (await a.api.get('/tenants/me/api-keys')).body.items
    for (const k of aKeys) {
      const res = await b.api.delete(`/tenants/me/api-keys/${k.id}`)
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ detail: expect.any(String) })
    }
    expect((await a.api.get('/tenants/me/api-keys')).body.items).toEqual(aKeys)
    expect(await keyWorks(a.apiKey)).toBe(true)
  })

  it('records when a key was last used', async () => {
    const tenant = await createTenant(t)
    await keyWorks(tenant.apiKey)
    await expect.poll(async () => (await tenant.api.get('/tenants/me/api-keys')).body.items[0].last_used_at, { timeout: 3000 }).toMatch(ISO)
  })

  it('refuses a JWT on the X-API-Key route', async () => {
    const tenant = await createTenant(t)
    if (!t.app.hasRoute({ method: 'POST', url: '/chat' })) {
      // The guard reads only X-API-Key, whatever else the request carries.
      expect(await keyWorks(tenant.token)).toBe(false)
      return
    }
    const asBearer = await t.api().withToken(tenant.token).post('/chat', { question: 'hello?' })
    expect(asBearer.status).toBe(401)
    const asKey = await t.api().withApiKey(tenant.token).post('/chat', { question: 'hello?' })
    expect(asKey.status).toBe(401)
  })
})

describe('privacy configuration', () => {
  it('defaults to every optional type, updates the set and refuses unknown or mandatory types', async () => {
    const tenant = await createTenant(t)
    const def = await tenant.api.get('/tenants/me/privacy')
    expect(def.status).toBe(200)
    expect(def.body.optional_entity_types).toEqual(['ID_DOC', 'IP', 'URL_TOKEN'])
    expect(def.body.mandatory_entity_types).toEqual(expect.arrayContaining(['EMAIL', 'PHONE', 'CARD', 'API_KEY', 'PASSWORD']))

    const put = await tenant.api.put('/tenants/me/privacy', { optional_entity_types: ['URL_TOKEN', 'IP', 'IP'] })
    expect(put.status).toBe(200)
    expect(put.body.optional_entity_types).toEqual(['IP', 'URL_TOKEN'])
    expect((await tenant.api.get('/tenants/me/privacy')).body.optional_entity_types).toEqual(['IP', 'URL_TOKEN'])
    expect((await tenant.api.put('/tenants/me/privacy', { optional_entity_types: [] })).body.optional_entity_types).toEqual([])

    for (const bad of [{ optional_entity_types: ['EMAIL'] }, { optional_entity_types: ['NOPE'] }, { optional_entity_types: 'IP' }, {}]) {
      const res = await tenant.api.put('/tenants/me/privacy', bad)
      expect(res.status, JSON.stringify(bad)).toBe(422)
      expect(res.body.detail[0].loc[0]).toBe('body')
    }
    expect((await tenant.api.get('/tenants/me/privacy')).body.optional_entity_types).toEqual([])
  })
})

describe('support settings', () => {
  /** auto-assignment's settings (live conversation), off with capacity 3 unless set */
  const ASSIGN = { auto_assign: false, agent_capacity: 3 }

  it('starts empty and updates partially', async () => {
    const tenant = await createTenant(t)
    const empty = await tenant.api.get('/tenants/me/support-settings')
    expect(empty.status).toBe(200)
    expect(empty.body).toEqual({ l2_email: null, escalation_language: null, ...ASSIGN })

    expect((await tenant.api.put('/tenants/me/support-settings', { l2_email: 'L2@Acme.example' })).body).toEqual({
      l2_email: 'l2@acme.example',
      escalation_language: null,
      ...ASSIGN,
    })
    expect((await tenant.api.put('/tenants/me/support-settings', { escalation_language: 'de-CH' })).body).toEqual({
      l2_email: 'l2@acme.example',
      escalation_language: 'de-CH',
      ...ASSIGN,
    })
    expect((await tenant.api.put('/tenants/me/support-settings', {})).body).toEqual({ l2_email: 'l2@acme.example', escalation_language: 'de-CH', ...ASSIGN })
    expect((await tenant.api.get('/tenants/me/support-settings')).body).toEqual({ l2_email: 'l2@acme.example', escalation_language: 'de-CH', ...ASSIGN })
    expect((await tenant.api.put('/tenants/me/support-settings', { l2_email: null })).body).toEqual({ l2_email: null, escalation_language: 'de-CH', ...ASSIGN })
    expect((await tenant.api.put('/tenants/me/support-settings', { escalation_language: null })).body).toEqual({
      l2_email: null,
      escalation_language: null,
      ...ASSIGN,
    })
    // An empty string clears a field too, like null.
    await tenant.api.put('/tenants/me/support-settings', { l2_email: 'x@acme.example', escalation_language: 'pt-BR' })
    expect((await tenant.api.put('/tenants/me/support-settings', { l2_email: '', escalation_language: '' })).body).toEqual({
      l2_email: null,
      escalation_language: null,
      ...ASSIGN,
    })
  })

  it('refuses a bad e-mail or language tag with 422 and changes nothing', async () => {
    const tenant = await createTenant(t)
    await tenant.api.put('/tenants/me/support-settings', { l2_email: 'ops@acme.example', escalation_language: 'fr' })
    for (const [body, field] of [
      [{ l2_email: 'nope' }, 'l2_email'],
      [{ l2_email: 'a@' + 'b'.repeat(300) + '.example' }, 'l2_email'],
      [{ escalation_language: 'not a tag' }, 'escalation_language'],
      [{ escalation_language: 'english-please-thanks' }, 'escalation_language'],
    ] as const) {
      const res = await tenant.api.put('/tenants/me/support-settings', body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body', field])
    }
    expect((await tenant.api.get('/tenants/me/support-settings')).body).toEqual({ l2_email: 'ops@acme.example', escalation_language: 'fr', ...ASSIGN })
  })
})
