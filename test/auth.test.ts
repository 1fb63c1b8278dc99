import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tokenFromMail } from './fakes/smtp.js'
import { startApp, type TestApp } from './helpers/app.js'
import { PASSWORD, createTenant, uniqueEmail } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await startApp()
})
afterAll(async () => {
  await t?.close()
})

describe('register', () => {
  it('returns the user without a token and mails a verification link', async () => {
    const api = t.api()
    const email = uniqueEmail()
    const res = await api.post('/auth/register', { email: email.toUpperCase(), password: PASSWORD })
    expect(res.status).toBe(200)
    expect(res.body.user).toEqual({
      id: expect.any(String),
      email,
      is_verified: false,
      tenant_id: null,
      created_at: expect.stringMatching(/Z$/),
      // no workspace yet: no role, no permissions
      role: null,
      bot_ids: null,
      can_view_original: false,
      notify_on_assignment: true,
      display_name: null,
      permissions: [],
    })
    expect(res.body.token).toBeUndefined()
    const mail = await t.smtp.waitFor((m) => m.to.includes(email))
    expect(mail.text).toContain('http://app.test/verify?token=')
    expect(tokenFromMail(mail).length).toBeGreaterThan(20)
  })

  it('names the broken password rule with 422', async () => {
    const api = t.api()
    for (const [password, rule] of [
      ['Sh0rt!', 'at least 8'],
      ['alllowercase1!', 'upper-case'],
      ['NoDigitsHere!', 'digit'],
      ['NoSpecial123', 'special'],
      ['A1!' + 'x'.repeat(130), 'at most 128'],
    ] as const) {
      const res = await api.post('/auth/register', { email: uniqueEmail(), password })
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body', 'password'])
      expect(res.body.detail[0].msg).toContain(rule)
    }
  })

  it('rejects an invalid e-mail and missing fields in FastAPI shape', async () => {
    const api = t.api()
    const bad = await api.post('/auth/register', { email: 'not-an-email', password: PASSWORD })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'email'], type: expect.any(String), msg: expect.any(String) })
    const missing = await api.post('/auth/register', { email: uniqueEmail() })
    expect(missing.status).toBe(422)
    expect(missing.body.detail[0]).toEqual({ loc: ['body', 'password'], msg: 'Field required', type: 'missing' })
    const broken = await api.post('/auth/register', '{"email":', { 'content-type': 'application/json' })
    expect(broken.status).toBe(422)
  })

  it('answers 409 for an existing e-mail, whatever its case', async () => {
    const api = t.api()
    const email = uniqueEmail()
    expect((await api.post('/auth/register', { email, password: PASSWORD })).status).toBe(200)
    const again = await api.post('/auth/register', { email: email.toUpperCase(), password: PASSWORD })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ detail: expect.any(String) })
  })
})

describe('verify, login, me, logout', () => {
  it('verifies once, creating the tenant, a first API key and a default bot', async () => {
    const api = t.api()
    const email = uniqueEmail()
    await api.post('/auth/register', { email, password: PASSWORD })
    const token = tokenFromMail(await t.smtp.waitFor((m) => m.to.includes(email)))
    const res = await api.post('/auth/verify-email', { token })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ token_type: 'bearer', expires_in: 86400, user: { email, is_verified: true } })
    expect(res.body.token).toBe(res.body.access_token)
    expect(res.body.api_key).toMatch(/^ck_[0-9a-f]{32}$/)
    expect(res.body.user.tenant_id).toEqual(expect.any(String))
    expect(res.headers.get('set-cookie')).toMatch(/access_token=.*HttpOnly/i)

    const bots = await t.api().withToken(res.body.token).get('/bots')
    expect(bots.body.items).toHaveLength(1)
    expect(bots.body.items[0].public_id).toMatch(/^ch_[a-z0-9]{18}$/)

    const again = await api.post('/auth/verify-email', { token })
    expect(again.status).toBe(400)
    expect((await api.post('/auth/verify-email', { token: 'nonsense' })).status).toBe(400)
  })

  it('logs in with a cookie that authenticates /auth/me; logout clears it', async () => {
    const tenant = await createTenant(t)
    const api = t.api()
    expect((await api.post('/auth/login', { email: tenant.email, password: 'Wrong-pass1!' })).status).toBe(401)
    expect((await api.post('/auth/login', { email: uniqueEmail(), password: PASSWORD })).status).toBe(404)
    const login = await api.post('/auth/login', { email: tenant.email, password: PASSWORD })
    expect(login.status).toBe(200)
    expect(login.body).toMatchObject({ token_type: 'bearer', expires_in: 86400, user: { email: tenant.email, tenant_id: tenant.tenantId } })
    const setCookie = login.headers.get('set-cookie')!
    expect(setCookie).toMatch(/HttpOnly/i)
    expect(setCookie).toMatch(/SameSite=Lax/i)
    expect(setCookie).toMatch(/Path=\//)
    expect(setCookie).toMatch(/Max-Age=86400/)
    api.cookie = setCookie.split(';')[0]!
    const me = await api.get('/auth/me')
    expect(me.status).toBe(200)
    expect(me.body).toEqual({
      id: tenant.userId,
      email: tenant.email,
      is_verified: true,
      tenant_id: tenant.tenantId,
      created_at: expect.any(String),
      // the account that created the workspace owns it
      role: 'owner',
      bot_ids: null,
      can_view_original: true,
      notify_on_assignment: true,
      display_name: null,
      permissions: [
        'workspace',
        'members',
        'settings',
        'integrations',
        'actions',
        'actions_test',
        'audit',
        'knowledge',
        'evals',
        'evals_read',
        'tickets',
        'saved_replies',
        'saved_replies_read',
        'analytics',
        'member',
      ],
    })

    const out = await api.post('/auth/logout')
    expect(out.status).toBe(200)
    expect(out.body).toEqual({ message: 'Logged out' })
    expect(out.headers.get('set-cookie')).toMatch(/access_token=;/)
    expect((await t.api().post('/auth/logout')).status).toBe(200)
  })

  it('refuses missing, forged and ck_ credentials with 401', async () => {
    const tenant = await createTenant(t)
    expect((await t.api().get('/auth/me')).status).toBe(401)
    expect((await t.api().withToken('garbage').get('/auth/me')).status).toBe(401)
    expect((await t.api().withToken(tenant.apiKey).get('/bots')).status).toBe(401)
    expect((await t.api().withApiKey(tenant.apiKey).get('/bots')).status).toBe(401)
  })

  it('lets an unverified user log in but answers 403 on tenant routes', async () => {
    const api = t.api()
    const email = uniqueEmail()
    await api.post('/auth/register', { email, password: PASSWORD })
    const login = await api.post('/auth/login', { email, password: PASSWORD })
    expect(login.status).toBe(200)
    api.withToken(login.body.token)
    const me = await api.get('/tenants/me')
    expect(me.status).toBe(403)
    expect(me.body).toEqual({ detail: 'Email not verified' })
    expect((await api.get('/bots')).status).toBe(403)
  })
})

describe('password reset', () => {
  it('gives the same answer for unknown e-mails and resets with a one-time token that revokes old JWTs', async () => {
    const tenant = await createTenant(t)
    const api = t.api()
    const unknown = await api.post('/auth/forgot-password', { email: uniqueEmail() })
    const known = await api.post('/auth/forgot-password', { email: tenant.email })
    expect(unknown.status).toBe(200)
    expect(known.body).toEqual(unknown.body)
    const mail = await t.smtp.waitFor((m) => m.to.includes(tenant.email) && /reset/i.test(m.subject))
    expect(mail.text).toContain('http://app.test/reset-password?token=')
    const token = tokenFromMail(mail)

    expect((await api.post('/auth/reset-password', { token, new_password: 'weak' })).status).toBe(422)
    expect((await api.post('/auth/reset-password', { token: 'bogus', new_password: 'N3w-Passw0rd!' })).status).toBe(400)
    const ok = await api.post('/auth/reset-password', { token, new_password: 'N3w-Passw0rd!' })
    expect(ok.status).toBe(200)
    expect(ok.body.message).toEqual(expect.any(String))
    expect((await api.post('/auth/reset-password', { token, new_password: 'N3w-Passw0rd!' })).status).toBe(400)

    expect((await t.api().withToken(tenant.token).get('/auth/me')).status).toBe(401)
    expect((await api.post('/auth/login', { email: tenant.email, password: PASSWORD })).status).toBe(401)
    expect((await api.post('/auth/login', { email: tenant.email, password: 'N3w-Passw0rd!' })).status).toBe(200)
  })

  it('expires a reset token after an hour', async () => {
    const tenant = await createTenant(t)
    const api = t.api()
    await api.post('/auth/forgot-password', { email: tenant.email })
    const token = tokenFromMail(await t.smtp.waitFor((m) => m.to.includes(tenant.email) && /reset/i.test(m.subject)))
    t.clock.advance(3601_000)
    expect((await api.post('/auth/reset-password', { token, new_password: 'N3w-Passw0rd!' })).status).toBe(400)
  })

  it('limits forgot-password to 3 per hour with the contract 429 body', async () => {
    const api = t.api()
    for (let i = 0; i < 3; i++) expect((await api.post('/auth/forgot-password', { email: uniqueEmail() })).status).toBe(200)
    const limited = await api.post('/auth/forgot-password', { email: uniqueEmail() })
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({ error: 'Rate limit exceeded: 3 per 1 hour' })
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})
