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
}, 60_000)
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
