import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { jwtVerify } from 'jose'
import { json, WorkspaceApi } from './fakes/workspace-api.js'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { addMember } from './helpers/team.js'
import { orderStatus } from './helpers/actions.js'

let t: TestApp
let api: WorkspaceApi
let owner: Tenant

beforeAll(async () => {
  api = await new WorkspaceApi().start()
  // the workspace's API is on loopback: the outbound guard's setting lets tests reach it (as for webhooks)
  t = await startApp({ env: { CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true' } })
  owner = await createTenant(t)
}, 240_000)
afterAll(async () => {
  await t?.close()
  await api?.close()
})

describe('action definitions', () => {
  it('creates, lists, reads, updates and deletes an action; the secret is only ever a mask', async () => {
    const created = await owner.api.post('/actions', orderStatus(api.url))
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({ name: 'order_status', kind: 'read', enabled: true, timeout_ms: 10000, secrets: { api_token: '••••9876' } })
    expect(created.body.parameters[1]).toMatchObject({ source: 'visitor', claim: 'user_id', required: true })
    expect(created.text).not.toContain('supersecret')
    const id = created.body.id
    const list = await owner.api.get('/actions')
    expect(list.body.items.map((a: { id: string }) => a.id)).toEqual([id])
    expect(list.text).not.toContain('supersecret')
    const patched = await owner.api.patch(`/actions/${id}`, { description: 'Order status by number.', secrets: { api_token: 'tok_new_value_1234' } })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.secrets).toEqual({ api_token: '••••1234' })
    expect(patched.body.description).toBe('Order status by number.')
    expect((await owner.api.get(`/actions/${id}`)).body.description).toBe('Order status by number.')
    const stored = await t.ctx.db.selectFrom('actions').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
    expect(JSON.stringify(stored)).not.toContain('tok_new_value')
    expect((await owner.api.post('/actions', orderStatus(api.url))).status).toBe(409)
    expect((await owner.api.delete(`/actions/${id}`)).status).toBe(204)
    expect((await owner.api.get(`/actions/${id}`)).status).toBe(404)
  })

  it('answers 422 naming the field for a bad name, schema or template, and a relative URL on an enabled action', async () => {
    const base = orderStatus(api.url)
    const bad = async (body: unknown) => {
      const r = await owner.api.post('/actions', body)
      expect(r.status, r.text).toBe(422)
      return r.body.detail[0].loc as (string | number)[]
    }
    expect(await bad({ ...base, name: 'Order-Status' })).toEqual(['body', 'name'])
    expect(await bad({ ...base, parameters: [{ ...base.parameters[0], schema: { type: 'strin' } }, ...base.parameters.slice(1)] })).toEqual([
      'body',
      'parameters',
      0,
      'schema',
    ])
    expect(await bad({ ...base, url: `${api.url}/orders/{order_id}` })).toEqual(['body', 'url'])
    expect(await bad({ ...base, headers: { 'X-Thing': '{nope}' } })).toEqual(['body', 'headers', 'X-Thing'])
    expect(await bad({ ...base, body_template: '{"a": "{nope}"}' })).toEqual(['body', 'body_template'])
    expect(await bad({ ...base, url: '/orders/{order_number}' })).toEqual(['body', 'url'])
    expect(await bad({ ...base, timeout_ms: 60000 })).toEqual(['body', 'timeout_ms'])
    const other = await createTenant(t)
    expect(await bad({ ...base, name: 'scoped', bot_ids: [other.bot.id] })).toEqual(['body', 'bot_ids'])
  })

  it('lets owners and admins manage actions, editors read and dry-run them, others nothing; another tenant gets 404', async () => {
    const created = await owner.api.post('/actions', { ...orderStatus(api.url), name: 'roles_check' })
    const id = created.body.id
    const admin = await addMember(t, owner, 'admin')
    const editor = await addMember(t, owner, 'editor')
    const agent = await addMember(t, owner, 'agent')
    expect((await admin.api.patch(`/actions/${id}`, { timeout_ms: 5000 })).status).toBe(200)
    expect((await editor.api.get('/actions')).status).toBe(200)
    expect((await editor.api.post(`/actions/${id}/test`, { arguments: { order_number: '12345' }, visitor_claims: { user_id: 'u1' } })).status).toBe(200)
    const live = await editor.api.post(`/actions/${id}/test`, { arguments: { order_number: '12345' }, visitor_claims: { user_id: 'u1' }, live: true })
    expect(live.status).toBe(403)
    expect(live.body.detail).toBe('Your role (editor) may not manage actions')
    expect((await editor.api.patch(`/actions/${id}`, { timeout_ms: 5000 })).status).toBe(403)
    expect((await agent.api.get('/actions')).status).toBe(403)
    const stranger = await createTenant(t)
    expect((await stranger.api.get(`/actions/${id}`)).status).toBe(404)
    expect((await stranger.api.post(`/actions/${id}/test`, { arguments: {} })).status).toBe(404)
  })

  it('hides an action of other bots from a member limited to one bot', async () => {
    const second = await owner.api.post('/bots', { name: 'Second bot' })
    expect(second.status, second.text).toBe(201)
    const onlySecond = await owner.api.post('/actions', { ...orderStatus(api.url), name: 'second_only', bot_ids: [second.body.id] })
    expect(onlySecond.status, onlySecond.text).toBe(201)
    const editor = await addMember(t, owner, 'editor', { botIds: [owner.bot.id] })
    const names = (await editor.api.get('/actions')).body.items.map((a: { name: string }) => a.name)
    expect(names).not.toContain('second_only')
    expect((await editor.api.get(`/actions/${onlySecond.body.id}`)).status).toBe(404)
  })
})

describe('the test console and the outbound call', () => {
  it('dry-runs by default: the request with secrets masked, nothing sent', async () => {
    const a = (await owner.api.post('/actions', { ...orderStatus(api.url), name: 'dry_run' })).body
    const before = api.requests.length
    const r = await owner.api.post(`/actions/${a.id}/test`, { arguments: { order_number: '12345' }, visitor_claims: { user_id: 'u-7' } })
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({
      request: { method: 'GET', url: `${api.url}/users/u-7/orders/12345`, headers: { Authorization: 'Bearer ••••9876' }, body: null },
      response: null,
      model_view: null,
    })
    expect(r.text).not.toContain('supersecret')
    expect(api.requests.length).toBe(before)
    const invalid = await owner.api.post(`/actions/${a.id}/test`, { arguments: { order_number: 'abc' }, visitor_claims: { user_id: 'u-7' } })
    expect(invalid.status).toBe(422)
    expect(invalid.body.detail[0].loc).toEqual(['body', 'arguments', 'order_number'])
  })

  it('sends a live call signed with the Standard Webhooks headers and a 60 s visitor token, and logs it redacted', async () => {
    const secret = await owner.api.post('/actions/signing-secret')
    expect(secret.status).toBe(200)
    api.handler = (req, res) =>
      json(res, 200, { status: 'shipped', items: [{ name: 'Lamp' }, { name: 'Desk' }], internal: 'x'.repeat(100), echo: req.headers.authorization })
    const a = (await owner.api.post('/actions', { ...orderStatus(api.url), name: 'live_call' })).body
    const r = await owner.api.post(`/actions/${a.id}/test`, {
      arguments: { order_number: '12345' },
      visitor_claims: { user_id: 'u-7', email: 'v@example.test' },
      live: true,
    })
    expect(r.status, r.text).toBe(200)
    expect(r.body.status).toBe('ok')
    expect(r.body.response).toMatchObject({ status: 200 })
    expect(JSON.parse(r.body.model_view)).toEqual({ status: 'shipped', 'items[*].name': ['Lamp', 'Desk'] })
    expect(r.text).not.toContain('supersecret')
    const sent = api.requests.at(-1)!
    expect(sent.url).toBe('/users/u-7/orders/12345')
    expect(sent.headers.authorization).toBe('Bearer tok_live_supersecret_9876')
    expect(sent.headers['idempotency-key']).toBeUndefined()
    // the receiver verifies the call with the reference package and the token with the decoded key
    new Webhook(secret.body.secret).verify(sent.body, sent.headers as Record<string, string>)
    const key = Buffer.from(secret.body.secret.replace(/^whsec_/, ''), 'base64')
    const { payload } = await jwtVerify(String(sent.headers['x-visitor-token']), key, { algorithms: ['HS256'] })
    expect(payload).toMatchObject({ sub: 'u-7', user_id: 'u-7', email: 'v@example.test', action: 'live_call' })
    expect(payload.exp! - payload.iat!).toBe(60)
    const calls = await owner.api.get(`/actions/${a.id}/calls`)
    expect(calls.body.items).toHaveLength(1)
    expect(calls.body.items[0]).toMatchObject({
      status: 'ok',
      http_status: 200,
      session_id: null,
      arguments: { order_number: '12345', user_id: '[visitor:user_id]' },
    })
    expect(calls.text).not.toContain('u-7')
  })

  it("a workspace's first action creates its signing secret, and the test console's first live call is signed with it", async () => {
    const fresh = await createTenant(t)
    expect((await fresh.api.get('/actions/signing-secret')).body).toMatchObject({ has_secret: false, secret_hint: null })
    api.handler = (_req, res) => json(res, 200, { status: 'shipped' })
    const a = await fresh.api.post('/actions', { ...orderStatus(api.url), name: 'first_action' })
    expect(a.status, a.text).toBe(201)
    const status = await fresh.api.get('/actions/signing-secret')
    expect(status.body.has_secret).toBe(true)
    expect(status.body.secret_hint).toMatch(/^•+.{4}$/)
    const r = await fresh.api.post(`/actions/${a.body.id}/test`, { arguments: { order_number: '12345' }, visitor_claims: { user_id: 'u-1' }, live: true })
    expect(r.status, r.text).toBe(200)
    expect(r.body.status).toBe('ok')
    const sent = api.requests.at(-1)!
    expect(sent.headers['webhook-signature']).toMatch(/^v1,/)
    const row = await t.ctx.db.selectFrom('action_settings').select('secret_enc').where('tenant_id', '=', fresh.tenantId).executeTakeFirstOrThrow()
    new Webhook(t.ctx.cipher.decrypt(row.secret_enc)).verify(sent.body, sent.headers as Record<string, string>)
    // the same secret as the status named: the first call did not make another one
    expect(status.body.secret_hint).toBe((await fresh.api.get('/actions/signing-secret')).body.secret_hint)
    // importing a workspace's first actions creates it as well
    const other = await createTenant(t)
    const spec = JSON.stringify({
      openapi: '3.0.3',
      info: { title: 'x', version: '1' },
      servers: [{ url: api.url }],
      paths: { '/ping': { get: { operationId: 'ping', summary: 'Ping the API', responses: { '200': { description: 'ok' } } } } },
    })
    expect((await other.api.post('/actions/import-openapi', { spec })).status).toBe(201)
    expect((await other.api.get('/actions/signing-secret')).body.has_secret).toBe(true)
  })

  it('reports 4xx/5xx, timeouts and cuts a large answer; redirects are answers, never followed', async () => {
    const a = (await owner.api.post('/actions', { ...orderStatus(api.url), name: 'failing', timeout_ms: 300 })).body
    const run = () => owner.api.post(`/actions/${a.id}/test`, { arguments: { order_number: '12345' }, visitor_claims: { user_id: 'u' }, live: true })
    api.handler = (_req, res) => json(res, 503, { error: 'down' })
    expect((await run()).body).toMatchObject({ status: 'http_error', response: { status: 503 }, model_view: null })
    api.handler = () => 'hang'
    expect((await run()).body).toMatchObject({ status: 'timeout', response: { status: null } })
    api.handler = (_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' })
      res.end()
    }
    const before = api.requests.length
    expect((await run()).body).toMatchObject({ status: 'http_error', response: { status: 302 } })
    expect(api.requests.length).toBe(before + 1)
    // a redirect to loopback (here: this same API, reachable in this app) is not followed either
    api.handler = (req, res) => {
      if (req.url === '/followed') return json(res, 200, { status: 'followed' })
      res.writeHead(307, { location: `http://127.0.0.1:${api.port}/followed` })
      res.end()
    }
    expect((await run()).body).toMatchObject({ status: 'http_error', response: { status: 307 } })
    expect(api.requests.map((r) => r.url)).not.toContain('/followed')
    api.handler = (_req, res) => json(res, 200, { status: 'ok', blob: 'y'.repeat(400_000) })
    const big = await run()
    expect(big.body.status).toBe('ok')
    expect(big.body.response.body.length).toBeLessThanOrEqual(256 * 1024)
    const statuses = (await owner.api.get(`/actions/${a.id}/calls`)).body.items.map((c: { status: string }) => c.status)
    expect(statuses).toEqual(['ok', 'http_error', 'http_error', 'timeout', 'http_error'])
  })
})

describe('outbound guard without private networks', () => {
  let strict: TestApp
  let tenant: Tenant
  beforeAll(async () => {
    strict = await startApp({ env: { CRAWLER_ALLOW_PRIVATE_NETWORKS: 'false' } })
    tenant = await createTenant(strict)
  }, 60_000)
  afterAll(() => strict?.close())

  const literals = (port: number) => [
    `http://127.0.0.1:${port}`,
    `http://2130706433:${port}`,
    `http://0x7f.1:${port}`,
    `http://[::ffff:127.0.0.1]:${port}`,
    `http://[::ffff:169.254.169.254]`,
    'http://169.254.169.254',
    'http://10.1.2.3',
    'http://[fe80::1]',
  ]

  it('answers 422 naming url when an action is created, patched or imported with a literal private, loopback, link-local or metadata host', async () => {
    for (const base of literals(api.port)) {
      const created = await tenant.api.post('/actions', { ...orderStatus(base), name: `lit_${Math.random().toString(36).slice(2, 8)}` })
      expect(created.status, `${base} ${created.text}`).toBe(422)
      expect(created.body.detail[0].loc).toEqual(['body', 'url'])
      expect(created.body.detail[0].msg).toMatch(/actions may not reach/)
    }
    const ok = await tenant.api.post('/actions', { ...orderStatus('https://shop.example.com'), name: 'public_host' })
    expect(ok.status, ok.text).toBe(201)
    const patched = await tenant.api.patch(`/actions/${ok.body.id}`, { url: 'http://169.254.169.254/latest/meta-data/{order_number}' })
    expect(patched.status, patched.text).toBe(422)
    expect(patched.body.detail[0].loc).toEqual(['body', 'url'])
    const spec = JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/ping': { get: { operationId: 'ping' } } } })
    const imported = await tenant.api.post('/actions/import-openapi', { spec, base_url: 'http://[::ffff:7f00:1]:8080' })
    expect(imported.status, imported.text).toBe(422)
    expect(imported.body.detail[0].loc).toEqual(['body', 'url'])
    expect(imported.body.detail[0].msg).toMatch(/^ping: /)
    // a host name is judged when called, not saved: it may resolve elsewhere by then
    expect((await tenant.api.post('/actions', { ...orderStatus(`http://localhost:${api.port}`), name: 'by_name' })).status).toBe(201)
  })

  it('refuses at send time loopback, metadata, decimal and IPv6-mapped addresses and a host name that resolves to loopback', async () => {
    const before = api.requests.length
    for (const base of [...literals(api.port), `http://localhost:${api.port}`]) {
      const created = await tenant.api.post('/actions', { ...orderStatus('https://shop.example.com'), name: `guard_${Math.random().toString(36).slice(2, 8)}` })
      expect(created.status, created.text).toBe(201)
      // stored before the save-time check existed (or by a path that skips it): the send-time guard still holds
      await strict.ctx.db
        .updateTable('actions')
        .set({ url: `${base}/users/{user_id}/orders/{order_number}` })
        .where('id', '=', created.body.id)
        .execute()
      const r = await tenant.api.post(`/actions/${created.body.id}/test`, {
        arguments: { order_number: '12345' },
        visitor_claims: { user_id: 'u' },
        live: true,
      })
      expect(r.status, r.text).toBe(200)
      expect(r.body.status, base).toBe('blocked')
    }
    expect(api.requests.length).toBe(before)
  })
})

describe('OpenAPI import', () => {
  const spec = (servers: unknown) =>
    JSON.stringify({
      openapi: '3.1.0',
      info: { title: 'Shop', version: '1' },
      ...(servers ? { servers } : {}),
      components: {
        parameters: { OrderId: { name: 'order_id', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } } },
        schemas: { Id: { type: 'string', pattern: '^[0-9]+$' }, Reason: { type: 'string', enum: ['damaged', 'late'] } },
      },
      paths: {
        '/orders/{order_id}': {
          parameters: [{ $ref: '#/components/parameters/OrderId' }],
          get: { operationId: 'getOrder', summary: 'Get an order' },
          delete: { operationId: 'cancelOrder', summary: 'Cancel an order' },
        },
        '/orders/{order_id}/returns': {
          post: {
            operationId: 'createReturn',
            parameters: [{ $ref: '#/components/parameters/OrderId' }],
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['reason'],
                    properties: { reason: { $ref: '#/components/schemas/Reason' }, quantity: { type: 'integer' } },
                  },
                },
              },
            },
          },
        },
      },
    })

  it('imports the chosen operations, disabled, $refs resolved, the relative server joined to base_url', async () => {
    const r = await owner.api.post('/actions/import-openapi', {
      spec: spec([{ url: '/v2' }]),
      operations: ['getOrder', 'createReturn'],
      base_url: api.url,
    })
    expect(r.status, r.text).toBe(201)
    const [get, ret] = r.body.items
    expect(get).toMatchObject({ name: 'get_order', method: 'GET', kind: 'read', enabled: false, url: `${api.url}/v2/orders/{order_id}` })
    expect(get.parameters[0]).toMatchObject({ name: 'order_id', source: 'model', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } })
    expect(ret).toMatchObject({ name: 'create_return', method: 'POST', kind: 'write' })
    expect(ret.parameters.find((p: { name: string }) => p.name === 'reason').schema).toEqual({ type: 'string', enum: ['damaged', 'late'] })
    const dry = await owner.api.post(`/actions/${ret.id}/test`, { arguments: { order_id: '7', reason: 'late', quantity: 2 } })
    expect(JSON.parse(dry.body.request.body)).toEqual({ reason: 'late', quantity: 2 })
    expect((await owner.api.patch(`/actions/${get.id}`, { enabled: true })).status).toBe(200)
  })

  it('keeps a relative URL without base_url, and such an action cannot be enabled until its URL is absolute; YAML works too', async () => {
    const yaml = `openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /ping:\n    get:\n      operationId: pingYaml\n`
    const r = await owner.api.post('/actions/import-openapi', { spec: yaml })
    expect(r.status, r.text).toBe(201)
    const a = r.body.items[0]
    expect(a).toMatchObject({ name: 'ping_yaml', url: '/ping', enabled: false })
    const enable = await owner.api.patch(`/actions/${a.id}`, { enabled: true })
    expect(enable.status).toBe(422)
    expect(enable.body.detail[0].loc).toEqual(['body', 'url'])
    expect((await owner.api.patch(`/actions/${a.id}`, { enabled: true, url: `${api.url}/ping` })).status).toBe(200)
  })

  it('answers 422 with the document’s errors', async () => {
    const bad = async (body: unknown) => {
      const r = await owner.api.post('/actions/import-openapi', body)
      expect(r.status, r.text).toBe(422)
      return r.body.detail[0].msg as string
    }
    expect(await bad({ spec: JSON.stringify({ swagger: '2.0', paths: {} }) })).toMatch(/OpenAPI 3/)
    expect(await bad({ spec: spec(null), operations: ['nope'] })).toMatch(/operation nope is not in the document/)
    expect(await bad({ spec: '{ not: [json' })).toMatch(/neither JSON nor YAML/)
    expect(await bad({ spec: JSON.stringify({ openapi: '3.0.0', info: {}, paths: { '/x': { get: { $ref: '#/nowhere' } } } }) })).toMatch(/does not resolve/)
  })
})
