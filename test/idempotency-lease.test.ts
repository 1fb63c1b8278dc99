import { afterAll, beforeAll, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { systemClock } from '../src/lib/clock.js'
import { sha256Hex } from '../src/lib/crypto.js'
import { createIdempotency, RUNNING_LEASE_MS } from '../src/modules/chat/idempotency.js'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant } from './helpers/factories.js'

/**
 * A running Idempotency-Key claim is a lease its owner renews while the turn runs: a turn that outlives the lease
 * keeps its key, and the key of a turn whose process died is free again within one lease (30 s by default; here
 * shortened to 300 ms, on the real database and, when configured, Redis).
 */
let t: TestApp
let tenantId: string
beforeAll(async () => {
  t = await startApp()
  tenantId = (await createTenant(t)).tenantId
})
afterAll(() => t?.close())

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const PREFIX = `lease-${Date.now()}:`
const idem = (redis: boolean) =>
  createIdempotency({ db: t.ctx.db, redis: redis ? t.ctx.redis : null, prefix: PREFIX, clock: systemClock, waitMs: 0, leaseMs: 300 })

/** The claim a process left behind when it died mid-turn: running, owned by a token nobody renews. */
async function orphanClaim(redis: boolean, key: string, requestHash: string) {
  const keyHash = sha256Hex(key)
  const exp = Date.now() + 300
  if (redis) {
    await t.ctx.redis!.set(`${PREFIX}idem:${tenantId}:${keyHash}`, JSON.stringify({ s: 'running', t: randomUUID(), exp, h: requestHash }), 'PX', 60_000)
    return
  }
  await t.ctx.db
    .insertInto('idempotency_keys')
    .values({
      tenant_id: tenantId,
      key: keyHash,
      request_hash: requestHash,
      status: 'running',
      owner_token: randomUUID(),
      created_at: new Date(),
      expires_at: new Date(exp),
    })
    .execute()
}

it('is 30 s by default: a dead owner blocks its key no longer than that', () => {
  expect(RUNNING_LEASE_MS).toBe(30_000)
})

it.each([
  ['the database', false],
  ['Redis', true],
])(
  'on %s, a turn that outlives its lease keeps its key, and a dead owner frees it within a lease',
  async (_name, redis) => {
    if (redis && !t.ctx.redis) return
    const owner = idem(redis)
    let runs = 0
    const work = (ms: number) => async () => {
      runs++
      await sleep(ms)
      return JSON.stringify({ answer: runs }) // the stored response is the JSON body
    }
    // the first turn runs for four leases; a duplicate at three leases still finds it running
    const first = owner.run(tenantId, 'long-turn', 'h1', work(1200))
    await sleep(900)
    await expect(idem(redis).run(tenantId, 'long-turn', 'h1', work(0))).rejects.toMatchObject({ code: 'idempotency_in_flight' })
    expect(await first).toBe('{"answer":1}')
    expect(await idem(redis).run(tenantId, 'long-turn', 'h1', work(0))).toBe('{"answer":1}')
    expect(runs).toBe(1)

    // the claim of a process that died mid-turn holds the key for one lease, then a retry runs the turn
    await orphanClaim(redis, 'dead-turn', 'h2')
    await expect(idem(redis).run(tenantId, 'dead-turn', 'h2', work(0))).rejects.toMatchObject({ code: 'idempotency_in_flight' })
    await sleep(400)
    expect(await idem(redis).run(tenantId, 'dead-turn', 'h2', work(0))).toBe('{"answer":2}')
  },
  20_000,
)
