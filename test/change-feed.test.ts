import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHANGES_CHANNEL } from '../src/db/change-feed.js'
import { tokenFromMail } from './fakes/smtp.js'
import { Api } from './helpers/http.js'
import { startApp, type TestApp } from './helpers/app.js'
import { PASSWORD, createTenant } from './helpers/factories.js'

/**
 * The caches of hot rows (a tenant's bots, the guards' user rows) against the change feed: a writer sees its
 * own change at once, and on PostgreSQL another instance sharing the database sees it within milliseconds.
 */
let t: TestApp
beforeAll(async () => {
  t = await startApp()
})
afterAll(async () => {
  await t?.close()
})

/** The default poll of an idle worker: without the notice, another instance's worker learns of a job this late. */
const WORKER_POLL_MS = 500
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5000): Promise<{ value: T; ms: number }> {
  const started = Date.now()
  for (;;) {
    const value = await read()
    if (ok(value)) return { value, ms: Date.now() - started }
    if (Date.now() - started > timeoutMs) throw new Error(`not seen after ${timeoutMs} ms: ${JSON.stringify(value)}`)
    await sleep(10)
  }
}

describe('one instance', () => {
  it('is live and serves every write to the very next read, even while reads keep the list cached', async () => {
    expect(t.ctx.database.changes.live).toBe(true)
    const tenant = await createTenant(t)
    for (let i = 0; i < 15; i++) {
      // Concurrent reads around the write: none of them may leave an old list behind in the cache.
      const reads = Array.from({ length: 5 }, () => tenant.api.get('/bots'))
      const patched = await tenant.api.patch(`/bots/${tenant.bot.id}`, { name: `Name ${i}` })
      expect(patched.status).toBe(200)
      await Promise.all(reads)
      const list = await tenant.api.get('/bots')
      expect(list.body.items.map((b: { name: string }) => b.name)).toEqual([`Name ${i}`])
    }
    const created = await tenant.api.post('/bots', { name: 'Second' })
    expect((await tenant.api.get('/bots')).body.items).toHaveLength(2)
    expect((await tenant.api.delete(`/bots/${created.body.id}`)).status).toBe(204)
    expect((await tenant.api.get('/bots')).body.items).toHaveLength(1)
  })

  it('an X-API-Key stops working on the very next request after it is revoked, though its keyring was cached', async () => {
    const tenant = await createTenant(t)
    // An escalation of an unknown session: 404 once the key is accepted, 401 when it is not.
    const probe = (key: string) => t.api().withApiKey(key).post(`/chat/${randomUUID()}/escalate`, {})
    for (let i = 0; i < 3; i++) expect((await probe(tenant.apiKey)).status).toBe(404)
    const rotated = await tenant.api.post('/tenants/me/api-keys/rotate', { revoke_old_immediately: true })
    expect(rotated.status).toBe(201)
    expect((await probe(tenant.apiKey)).status).toBe(401)
    expect((await probe(rotated.body.api_key)).status).toBe(404)
    expect((await probe(rotated.body.api_key)).status).toBe(404)
    expect((await tenant.api.delete(`/tenants/me/api-keys/${rotated.body.key.id}`)).status).toBe(409) // the last usable key stays
  })

  it('a failed write (409) leaves the cached list correct', async () => {
    const tenant = await createTenant(t)
    await tenant.api.get('/bots')
    expect((await tenant.api.patch(`/bots/${tenant.bot.id}`, { is_active: false })).status).toBe(409)
    expect((await tenant.api.get('/bots')).body.items[0].is_active).toBe(true)
  })
})

describe.runIf(process.env.DATABASE_URL)('two instances on one PostgreSQL database', () => {
  let other: TestApp
  beforeAll(async () => {
    other = await startApp({ databaseUrl: t.ctx.config.DATABASE_URL, worker: false, smtp: t.smtp, env: { JWT_SECRET: t.ctx.config.JWT_SECRET } })
  })
  afterAll(async () => {
    await other?.close()
  })

  it("sees the other instance's bot changes within milliseconds, not after the cache's time bound", async () => {
    const tenant = await createTenant(t)
    const there = new Api(other.url).withToken(tenant.token)
    expect((await there.get('/bots')).status).toBe(200) // cached on the other instance now
    expect((await tenant.api.patch(`/bots/${tenant.bot.id}`, { name: 'Renamed elsewhere' })).status).toBe(200)
    const seen = await eventually(
      () => there.get('/bots'),
      (r) => r.body.items[0]?.name === 'Renamed elsewhere',
    )
    expect(seen.ms).toBeLessThan(2000)
  })

  it("wakes the other instance's job worker when a job is enqueued here, instead of at its next poll", async () => {
    let woken = 0
    const off = other.ctx.queue.onEnqueue(() => woken++)
    try {
      const tenant = await createTenant(t)
      woken = 0
      expect((await t.api().post('/auth/forgot-password', { email: tenant.email })).status).toBe(200) // enqueues its mail
      const seen = await eventually(
        async () => woken,
        (n) => n > 0,
        2000,
      )
      expect(seen.ms).toBeLessThan(WORKER_POLL_MS)
    } finally {
      off()
    }
  })

  it('revokes old tokens on the other instance right after a password reset', async () => {
    const tenant = await createTenant(t)
    const there = new Api(other.url).withToken(tenant.token)
    expect((await there.get('/auth/me')).status).toBe(200)
    expect((await t.api().post('/auth/forgot-password', { email: tenant.email })).status).toBe(200)
    const mail = await t.smtp.waitFor((m) => m.to.includes(tenant.email) && /reset/i.test(m.subject))
    const reset = await t.api().post('/auth/reset-password', { token: tokenFromMail(mail), new_password: `${PASSWORD}x` })
    expect(reset.status).toBe(200)
    const seen = await eventually(
      () => there.get('/auth/me'),
      (r) => r.status === 401,
    )
    expect(seen.ms).toBeLessThan(2000)
  })

  it('stops accepting an API key on the other instance right after it is revoked here', async () => {
    const tenant = await createTenant(t)
    const probe = (key: string) => new Api(other.url).withApiKey(key).post(`/chat/${randomUUID()}/escalate`, {})
    expect((await probe(tenant.apiKey)).status).toBe(404)
    expect((await probe(tenant.apiKey)).status).toBe(404) // keyring cached there now
    const rotated = await tenant.api.post('/tenants/me/api-keys/rotate', { revoke_old_immediately: true })
    expect(rotated.status).toBe(201)
    const seen = await eventually(
      () => probe(tenant.apiKey),
      (r) => r.status === 401,
    )
    expect(seen.ms).toBeLessThan(2000)
    expect((await probe(rotated.body.api_key)).status).toBe(404)
  })

  it('stops caching while its listener is down and catches up after it reconnects', async () => {
    const tenant = await createTenant(t)
    const there = new Api(other.url).withToken(tenant.token)
    await there.get('/bots')
    const admin = new pg.Client({ connectionString: t.ctx.config.DATABASE_URL })
    await admin.connect()
    try {
      const dbName = new URL(t.ctx.config.DATABASE_URL!).pathname.slice(1)
      const killed = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query = $2`, [
        dbName,
        `LISTEN ${CHANGES_CHANNEL}`,
      ])
      expect(killed.rowCount).toBeGreaterThanOrEqual(2) // one listener per instance
    } finally {
      await admin.end()
    }
    await eventually(
      async () => other.ctx.database.changes.live,
      (live) => !live,
      2000,
    )
    // Not live: every read goes to the database, so a change made meanwhile is seen at once.
    expect((await tenant.api.patch(`/bots/${tenant.bot.id}`, { name: 'While away' })).status).toBe(200)
    expect((await there.get('/bots')).body.items[0].name).toBe('While away')
    await eventually(
      async () => other.ctx.database.changes.live && t.ctx.database.changes.live,
      (live) => live,
      10_000,
    )
    await there.get('/bots')
    expect((await tenant.api.patch(`/bots/${tenant.bot.id}`, { name: 'After reconnect' })).status).toBe(200)
    await eventually(
      () => there.get('/bots'),
      (r) => r.body.items[0]?.name === 'After reconnect',
      2000,
    )
  })
})
