import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { makePng, uploadAttachment, widgetSession } from './helpers/attachments.js'
import { createTenant, type Tenant } from './helpers/factories.js'

/**
 * Many large uploads at once (issue 54's bench: twenty 10 MB files ran a 320 MB heap out of memory): a process reads
 * and checks ATTACHMENT_UPLOADS_AT_ONCE files at a time, a few more wait unread, and the rest get 503 busy with
 * Retry-After at once; nothing else is answered with an error, and the service keeps answering.
 */
vi.setConfig({ testTimeout: 120_000 })

let t: TestApp
let fake: FakeLlm
let owner: Tenant
beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, ATTACHMENT_UPLOADS_AT_ONCE: '1', ATTACHMENT_UPLOADS_PER_HOUR: '1000' } })
  owner = await createTenant(t)
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

describe('uploads at once', () => {
  it('at most ATTACHMENT_UPLOADS_AT_ONCE are read at a time: every other one waits its turn or is told busy, none fails otherwise', async () => {
    const api = t.api()
    const png = makePng({ padBytes: 3 * 1024 * 1024 })
    const sessions = await Promise.all(Array.from({ length: 4 }, () => widgetSession(api, owner.bot.public_id)))
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => uploadAttachment(api, owner.bot.public_id, sessions[i % sessions.length]!, png, `shot-${i}.png`, 'image/png')),
    )
    const statuses = results.map((r) => r.status)
    expect(
      statuses.every((s) => s === 201 || s === 503),
      statuses.join(','),
    ).toBe(true)
    // one runs and up to 8 wait their turn (30 s at most each): the first is always stored
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1)
    for (const r of results.filter((x) => x.status === 503)) {
      expect(r.headers.get('retry-after')).toBe('5')
      expect(r.body.detail.code).toBe('busy')
    }
    expect((await api.get('/health')).status).toBe(200)
    // the gate is open again once they are done
    const after = await uploadAttachment(api, owner.bot.public_id, sessions[0]!, makePng(), 'after.png', 'image/png')
    expect(after.status, after.text).toBe(201)
  })
})
