import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import { sql } from 'kysely'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { wireModules } from '../src/modules/index.js'
import { tokenFromMail } from './fakes/smtp.js'
import { startApp, type TestApp } from './helpers/app.js'
import { PASSWORD, createTenant, uniqueEmail } from './helpers/factories.js'
import { Api } from './helpers/http.js'
import { memoryLogger } from './helpers/logs.js'

const withRedis = Boolean(process.env.REDIS_URL)

let t: TestApp
beforeAll(async () => {
  t = await startApp()
})
afterAll(async () => {
  await t?.close()
})

describe('GET /health', () => {
  it.runIf(!withRedis)('answers ok with redis disabled when no Redis is configured', async () => {
    const res = await t.api().get('/health')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok', redis: 'disabled' })
  })

  it.runIf(withRedis)('answers ok with redis ok when Redis is reachable', async () => {
    const res = await t.api().get('/health')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok', redis: 'ok' })
    const none = await startApp({ env: { REDIS_URL: undefined }, worker: false })
    try {
      expect((await none.api().get('/health')).body).toEqual({ status: 'ok', redis: 'disabled' })
    } finally {
      await none.close()
    }
  })

  it('answers 503 degraded when Redis is configured but unreachable, and still limits in memory', async () => {
    const down = await startApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' }, worker: false })
    try {
      const res = await down.api().get('/health')
      expect(res.status).toBe(503)
      expect(res.body).toEqual({ status: 'degraded', redis: 'unavailable' })
      const api = down.api()
      for (let i = 0; i < 10; i++) expect((await api.post('/auth/login', { email: uniqueEmail(), password: 'x' })).status).toBe(404)
      expect((await api.post('/auth/login', { email: uniqueEmail(), password: 'x' })).status).toBe(429)
    } finally {
      await down.close()
    }
  })
})

describe('request ids', () => {
  it('echoes a well-formed X-Request-Id and generates one otherwise', async () => {
    const api = t.api()
    const echoed = await api.get('/health', { 'x-request-id': 'abc-123.req:7' })
    expect(echoed.headers.get('x-request-id')).toBe('abc-123.req:7')
    const generated = await api.get('/health')
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const other = await api.get('/health')
    expect(other.headers.get('x-request-id')).not.toBe(generated.headers.get('x-request-id'))
    for (const bad of ['has spaces in it', 'x'.repeat(200), '<script>']) {
      const res = await api.get('/health', { 'x-request-id': bad })
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    }
    // Errors carry it too.
    expect((await api.get('/nowhere', { 'x-request-id': 'err-1' })).headers.get('x-request-id')).toBe('err-1')
  })
})

describe('OpenAPI and docs', () => {
  it('serves an OpenAPI 3.1 document, version 0.1.0, with every route and an operationId on each', async () => {
    const res = await t.api().get('/openapi.json')
    expect(res.status).toBe(200)
    const doc = res.body
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
    expect(doc.info.version).toBe('0.1.0')

    // Every route the modules register, collected on a bare instance.
    const routes: { method: string; url: string }[] = []
    const bare = Fastify()
    bare.addHook('onRoute', (r) => {
      if ((r.schema as { hide?: boolean } | undefined)?.hide) return
      for (const m of [r.method].flat()) if (m !== 'HEAD') routes.push({ method: m.toLowerCase(), url: r.url })
    })
    for (const plugin of wireModules(t.ctx).routes) await bare.register(plugin)
    await bare.ready()
    await bare.close()
    expect(routes.length).toBeGreaterThan(25)

    const operationIds = new Set<string>()
    for (const r of routes) {
      const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
      const op = doc.paths?.[path]?.[r.method]
      expect(op, `${r.method.toUpperCase()} ${path} in /openapi.json`).toBeDefined()
      expect(op.operationId, `${r.method.toUpperCase()} ${path} operationId`).toEqual(expect.any(String))
      expect(operationIds.has(op.operationId), `duplicate operationId ${op.operationId}`).toBe(false)
      operationIds.add(op.operationId)
      expect(Object.keys(op.responses ?? {}).length, `${path} responses`).toBeGreaterThan(0)
    }
    for (const path of ['/auth/register', '/tenants/me', '/bots', '/bots/{bot_id}/disclosure', '/tenants/me/api-keys/{key_id}', '/health']) {
      expect(doc.paths[path], path).toBeDefined()
    }
    // The widget loader is one of the interface's routes (issue 15 item 10).
    expect(doc.paths['/embed.js'].get.responses['200'].content).toHaveProperty('text/javascript')
    // Request bodies are documented from the same schemas that validate them.
    expect(doc.paths['/bots'].post.requestBody.content['application/json'].schema.required).toContain('name')
    expect(doc.components.securitySchemes).toHaveProperty('bearerAuth')
    expect(doc.components.securitySchemes).toHaveProperty('apiKeyAuth')
  })

  it('serves interactive docs at /docs', async () => {
    const res = await fetch(`${t.url}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/text\/html/)
    expect(await res.text()).toMatch(/swagger/i)
  })
})

describe('error envelopes', () => {
  it('answers an unknown route with 404 {detail}', async () => {
    const res = await t.api().get('/no/such/route')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: 'Not Found' })
    expect((await t.api().post('/health')).status).toBe(404)
  })

  it('answers 422 in FastAPI shape for bad JSON, a wrong content type and NUL characters', async () => {
    const tenant = await createTenant(t)
    const broken = await tenant.api.post('/bots', '{"name": ', { 'content-type': 'application/json' })
    expect(broken.status).toBe(422)
    expect(broken.body.detail[0]).toEqual({ loc: ['body'], msg: expect.any(String), type: expect.any(String) })
    const nul = await tenant.api.patch('/tenants/me', { name: 'a\u0000b' })
    expect(nul.status).toBe(422)
    expect(nul.body.detail[0].loc).toEqual(['body', 'name'])
    const nulQuery = await tenant.api.get('/auth/me/widget-token?bot_id=ch_%00')
    expect(nulQuery.status).toBe(422)
    expect(nulQuery.body.detail[0].loc).toEqual(['query', 'bot_id'])
    const text = await tenant.api.post('/bots', 'name=x', { 'content-type': 'text/plain' })
    expect(text.status).toBe(422)
    expect(text.body.detail[0].loc).toEqual(['body'])
    const xml = await tenant.api.post('/bots', '<name>x</name>', { 'content-type': 'application/xml' })
    expect(xml.status).toBe(415)
    expect(xml.body).toEqual({ detail: expect.any(String) })
    expect((await tenant.api.get('/bots')).body.items).toHaveLength(1)
  })

  it('answers an unexpected failure with 500 "Internal server error", no stack, and logs no stack', async () => {
    const logs = memoryLogger()
    const broken = await startApp({ log: logs.log })
    try {
      const tenant = await createTenant(broken)
      await broken.worker?.stop(1000)
      await broken.ctx.database.close() // the database goes away under a running server
      // (not GET /bots: a tenant's bot list may be served from the change-feed cache)
      const res = await tenant.api.get('/tenants/me')
      expect(res.status).toBe(500)
      expect(res.body).toEqual({ detail: 'Internal server error' })
      expect(res.text).not.toMatch(/ at |\.ts:|stack|select/i)
      const line = logs.lines().find((l) => l.msg === 'unhandled error')
      expect(line).toMatchObject({ reqId: res.headers.get('x-request-id'), error: { message: expect.any(String) } })
      expect(JSON.stringify(line)).not.toMatch(/ at .*\.(ts|js):\d+|"stack"/)
    } finally {
      await broken.close()
    }
  })
})

describe('secrets at rest and in logs', () => {
  it('keeps no plaintext password, key, secret or token in any table, job payload or log line', async () => {
    const logs = memoryLogger('debug')
    const app = await startApp({ log: logs.log })
    try {
      const llmKey = `sk-${randomBytes(16).toString('hex')}`
      const tenant = await createTenant(app, { llmKey })
      const kyc1 = (await tenant.api.post('/tenants/me/kyc/secret')).body.secret_key as string
      const kyc2 = (await tenant.api.post('/tenants/me/kyc/rotate')).body.secret_key as string
      const newKey = (await tenant.api.post('/tenants/me/api-keys/rotate', {})).body.api_key as string
      const verifyToken = tokenFromMail(app.smtp.mails.find((m) => m.to.includes(tenant.email) && /verify/i.test(m.subject))!)
      await tenant.api.post('/auth/forgot-password', { email: tenant.email })
      const resetToken = tokenFromMail(await app.smtp.waitFor((m) => m.to.includes(tenant.email) && /reset/i.test(m.subject)))
      const newPassword = `N3w-${randomBytes(6).toString('hex')}!`
      expect((await tenant.api.post('/auth/reset-password', { token: resetToken, new_password: newPassword })).status).toBe(200)
      // Another reset mail stays queued (the worker is stopped) so a pending payload is checked too.
      await app.worker?.stop(2000)
      await tenant.api.post('/auth/forgot-password', { email: tenant.email })
      const identity = (await t.api().post('/auth/login', { email: tenant.email, password: newPassword })).body.token as string

      const secrets = {
        password: PASSWORD,
        newPassword,
        llmKey,
        kyc1,
        kyc2,
        firstApiKey: tenant.apiKey,
        newKey,
        verifyToken,
        resetToken,
      }
      const tables = await sql<{ table_name: string }>`
        SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(app.ctx.db)
      const names = tables.rows.map((r) => r.table_name)
      expect(names).toEqual(expect.arrayContaining(['users', 'tenants', 'api_keys', 'auth_tokens', 'jobs']))
      let dump = ''
      for (const name of names) {
        const rows = await sql`SELECT * FROM ${sql.table(name)}`.execute(app.ctx.db)
        dump += JSON.stringify(rows.rows)
      }
      const jobs = await app.ctx.db.selectFrom('jobs').selectAll().where('kind', '=', 'email.send').execute()
      expect(jobs.length).toBeGreaterThanOrEqual(3)
      expect(jobs.some((j) => j.status === 'queued')).toBe(true)
      for (const [name, value] of Object.entries(secrets)) {
        expect(dump.includes(value), `${name} in the database`).toBe(false)
        expect(logs.text().includes(value), `${name} in the logs`).toBe(false)
      }
      // One access line per request, with its request id.
      const access = logs.lines().filter((l) => l.msg === 'request')
      expect(access.length).toBeGreaterThan(5)
      expect(access.find((l) => l.url === '/tenants/me/kyc/secret')).toMatchObject({
        method: 'POST',
        status: 200,
        reqId: expect.any(String),
        ms: expect.any(Number),
      })
      expect(logs.lines().some((l) => l.msg === 'incoming request')).toBe(false)
      // Neither the JWT nor the Authorization header is logged.
      expect(logs.text()).not.toContain(identity)
      expect(logs.text()).not.toContain(tenant.token)
      // What is stored instead: hashes of the right length, ciphertexts that decrypt.
      const keyRows = await app.ctx.db.selectFrom('api_keys').select(['key_hash', 'key_hint']).where('tenant_id', '=', tenant.tenantId).execute()
      expect(keyRows.every((k) => /^[0-9a-f]{64}$/.test(k.key_hash) && k.key_hint.length === 4)).toBe(true)
      const row = await app.ctx.db.selectFrom('tenants').selectAll().where('id', '=', tenant.tenantId).executeTakeFirstOrThrow()
      expect(app.ctx.cipher.decrypt(row.llm_key_enc!)).toBe(llmKey)
      expect(app.ctx.cipher.decrypt(row.kyc_secret_enc!)).toBe(kyc2)
      expect(app.ctx.cipher.decrypt(row.kyc_prev_secret_enc!)).toBe(kyc1)
      const user = await app.ctx.db.selectFrom('users').select('password_hash').where('email', '=', tenant.email).executeTakeFirstOrThrow()
      expect(user.password_hash).toMatch(/^\$argon2id\$/)
    } finally {
      await app.close()
    }
  })
})

describe('rate limits', () => {
  it('limits login to 10 per minute per client IP', async () => {
    const api = t.api()
    for (let i = 0; i < 10; i++) expect((await api.post('/auth/login', { email: uniqueEmail(), password: 'Wrong-pass1!' })).status).toBe(404)
    const limited = await api.post('/auth/login', { email: uniqueEmail(), password: 'Wrong-pass1!' })
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({ error: 'Rate limit exceeded: 10 per 1 minute' })
    const after = Number(limited.headers.get('retry-after'))
    expect(after).toBeGreaterThan(0)
    expect(after).toBeLessThanOrEqual(60)
    // Another client is not affected.
    expect((await t.api().post('/auth/login', { email: uniqueEmail(), password: 'Wrong-pass1!' })).status).toBe(404)
  })

  it('limits register to 5 per hour, counting refused attempts too', async () => {
    const api = t.api()
    for (let i = 0; i < 5; i++) expect((await api.post('/auth/register', { email: 'bad' })).status).toBe(422)
    const limited = await api.post('/auth/register', { email: uniqueEmail(), password: PASSWORD })
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({ error: 'Rate limit exceeded: 5 per 1 hour' })
    const after = Number(limited.headers.get('retry-after'))
    expect(after).toBeGreaterThan(60)
    expect(after).toBeLessThanOrEqual(3600)
  })

  it('limits reset-password to 5 per hour', async () => {
    const api = t.api()
    for (let i = 0; i < 5; i++) expect((await api.post('/auth/reset-password', { token: 'bogus', new_password: 'N3w-Passw0rd!' })).status).toBe(400)
    const limited = await api.post('/auth/reset-password', { token: 'bogus', new_password: 'N3w-Passw0rd!' })
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({ error: 'Rate limit exceeded: 5 per 1 hour' })
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  it.runIf(withRedis)('shares the counters between instances through Redis', async () => {
    const prefix = `scbt:shared:${randomBytes(4).toString('hex')}:`
    const one = await startApp({ env: { REDIS_PREFIX: prefix }, worker: false })
    const two = await startApp({ env: { REDIS_PREFIX: prefix }, worker: false })
    const alone = await startApp({ worker: false })
    try {
      const a = one.api()
      for (let i = 0; i < 3; i++) expect((await a.post('/auth/forgot-password', { email: uniqueEmail() })).status).toBe(200)
      const sameIp = { 'x-forwarded-for': a.ip }
      const onTwo = await new Api(two.url).post('/auth/forgot-password', { email: uniqueEmail() }, sameIp)
      expect(onTwo.status).toBe(429)
      expect(onTwo.body).toEqual({ error: 'Rate limit exceeded: 3 per 1 hour' })
      // An instance with another prefix (another deployment) counts on its own.
      expect((await new Api(alone.url).post('/auth/forgot-password', { email: uniqueEmail() }, sameIp)).status).toBe(200)
    } finally {
      await Promise.all([one.close(), two.close(), alone.close()])
    }
  })
})

describe('mail without SMTP_URL', () => {
  async function outboxFiles(dir: string, n: number): Promise<string[]> {
    await expect.poll(() => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.eml')).length : 0), { timeout: 10_000 }).toBeGreaterThanOrEqual(n)
    return readdirSync(dir).filter((f) => f.endsWith('.eml'))
  }

  it('writes .eml files to DATA_DIR/outbox and logs the link outside production', async () => {
    const logs = memoryLogger()
    const app = await startApp({ env: { SMTP_URL: undefined }, log: logs.log })
    try {
      const api = app.api()
      const email = uniqueEmail()
      expect((await api.post('/auth/register', { email, password: PASSWORD })).status).toBe(200)
      const outbox = join(app.ctx.config.dataDir, 'outbox')
      const [file] = await outboxFiles(outbox, 1)
      const mail = await simpleParser(readFileSync(join(outbox, file!)))
      expect(mail.to && 'text' in mail.to ? mail.to.text : '').toContain(email)
      const token = /token=([A-Za-z0-9_\-%]+)/.exec(mail.text ?? '')![1]!
      expect((await api.post('/auth/verify-email', { token: decodeURIComponent(token) })).status).toBe(200)
      const line = logs.lines().find((l) => l.msg === 'mail written to outbox (SMTP_URL not set)')
      expect(line).toMatchObject({ file: join(outbox, file!), links: [expect.stringContaining('http://app.test/verify?token=')] })
      expect(app.smtp.mails).toHaveLength(0)
    } finally {
      await app.close()
    }
  })

  it('does not log the link in production', async () => {
    const logs = memoryLogger()
    const app = await startApp({ env: { SMTP_URL: undefined, NODE_ENV: 'production' }, log: logs.log })
    try {
      const email = uniqueEmail()
      await app.api().post('/auth/register', { email, password: PASSWORD })
      await outboxFiles(join(app.ctx.config.dataDir, 'outbox'), 1)
      const line = logs.lines().find((l) => l.msg === 'mail written to outbox (SMTP_URL not set)')
      expect(line).toBeDefined()
      expect(line!.links).toBeUndefined()
      expect(logs.text()).not.toContain('token=')
    } finally {
      await app.close()
    }
  })
})
