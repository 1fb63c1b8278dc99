import { describe, expect, it } from 'vitest'
import { appWithFakeLlm, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'
import { addMember } from './helpers/team.js'

/** Saved replies (#39): owners, admins and editors manage; agents read; a shortcut is unique per workspace. */
let t: TestApp

appWithFakeLlm({}, (started) => (t = started.t))

describe('/tenants/me/saved-replies', () => {
  it('creates, lists, updates and deletes; 409 for a taken shortcut; 422 naming the field; roles and workspaces kept apart', async () => {
    const owner = await createTenant(t)
    const editor = await addMember(t, owner, 'editor')
    const agent = await addMember(t, owner, 'agent')
    const analyst = await addMember(t, owner, 'analyst')
    const body = { title: 'Refund timing', content: 'Hi {{visitor.name}}, refunds take 5 days. {{agent.name}}', shortcut: 'refund' }

    const created = await editor.api.post('/tenants/me/saved-replies', body)
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject(body)
    const dup = await owner.api.post('/tenants/me/saved-replies', { ...body, title: 'Other' })
    expect(dup.status).toBe(409)
    expect(dup.body.detail).toEqual({ code: 'shortcut_exists', message: expect.stringContaining('shortcut') })

    for (const [field, bad] of [
      ['shortcut', { ...body, shortcut: 'Has Space' }],
      ['shortcut', { ...body, shortcut: 'x'.repeat(33) }],
      ['title', { ...body, shortcut: 'ok-1', title: '' }],
      ['title', { ...body, shortcut: 'ok-2', title: 'x'.repeat(121) }],
      ['content', { ...body, shortcut: 'ok-3', content: 'x'.repeat(8001) }],
    ] as const) {
      const r = await owner.api.post('/tenants/me/saved-replies', bad)
      expect(r.status, r.text).toBe(422)
      expect(r.text).toContain(field)
    }

    // agents read and use them, may not manage them; analysts do not see them
    const list = await agent.api.get('/tenants/me/saved-replies')
    expect(list.status).toBe(200)
    expect(list.body.items.map((x: { shortcut: string }) => x.shortcut)).toEqual(['refund'])
    expect((await agent.api.post('/tenants/me/saved-replies', { ...body, shortcut: 'mine' })).status).toBe(403)
    expect((await agent.api.patch(`/tenants/me/saved-replies/${created.body.id}`, { title: 'x' })).status).toBe(403)
    expect((await agent.api.delete(`/tenants/me/saved-replies/${created.body.id}`)).status).toBe(403)
    expect((await analyst.api.get('/tenants/me/saved-replies')).status).toBe(403)

    const second = await owner.api.post('/tenants/me/saved-replies', { ...body, shortcut: 'hello' })
    expect(second.status).toBe(201)
    const renamed = await editor.api.patch(`/tenants/me/saved-replies/${second.body.id}`, { shortcut: 'refund' })
    expect(renamed.status).toBe(409)
    expect(renamed.body.detail.code).toBe('shortcut_exists')
    const patched = await editor.api.patch(`/tenants/me/saved-replies/${second.body.id}`, { title: 'Greeting', content: 'Hello!' })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({ title: 'Greeting', content: 'Hello!', shortcut: 'hello' })

    // another workspace sees none of them and cannot touch them (404), and may use the same shortcut
    const other = await createTenant(t)
    expect((await other.api.get('/tenants/me/saved-replies')).body.items).toEqual([])
    expect((await other.api.patch(`/tenants/me/saved-replies/${second.body.id}`, { title: 'x' })).status).toBe(404)
    expect((await other.api.delete(`/tenants/me/saved-replies/${second.body.id}`)).status).toBe(404)
    expect((await other.api.post('/tenants/me/saved-replies', body)).status).toBe(201)

    expect((await owner.api.delete(`/tenants/me/saved-replies/${second.body.id}`)).status).toBe(204)
    expect((await owner.api.delete(`/tenants/me/saved-replies/${second.body.id}`)).status).toBe(404)
    expect((await owner.api.get('/tenants/me/saved-replies')).body.items).toHaveLength(1)
  })
})
