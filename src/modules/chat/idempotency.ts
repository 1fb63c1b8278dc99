import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import type { Clock } from '../../lib/clock.js'
import { sha256Hex } from '../../lib/crypto.js'
import { AppError } from '../../lib/errors.js'

/**
 * Idempotency-Key for POST /chat: the first request with a key runs and its response bytes are kept for
 * 24 hours; a replay gets those bytes and runs nothing; a duplicate that arrives while the first still
 * runs waits for it (polling) up to `waitMs`, then gets 409 idempotency_in_flight. Claiming is atomic
 * (a Lua script in Redis, INSERT ... ON CONFLICT in the database), so any number of concurrent duplicates
 * run the pipeline once. A first request that fails releases the key, so the client can retry.
 *
 * Redis when configured, the database otherwise (and whenever Redis errors). Expiry is judged on the
 * service clock, so tests can move time; Redis TTLs only collect garbage.
 */

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000
/**
 * A running claim expires this long after its owner last renewed it; the owner renews it every third of that
 * while the turn runs, so the key of a turn whose process died is free again within 30 s, not after a turn's
 * longest possible run.
 */
export const RUNNING_LEASE_MS = 30_000
const POLL_MS = 25

export type Claim = { kind: 'run'; token: string } | { kind: 'replay'; body: string }

interface Backend {
  claim(
    tenantId: string,
    keyHash: string,
    requestHash: string,
    token: string,
    now: number,
  ): Promise<{ claimed: true } | { claimed: false; body: string | null; requestHash: string | null }>
  peek(
    tenantId: string,
    keyHash: string,
    now: number,
  ): Promise<{ state: 'done'; body: string; requestHash: string | null } | { state: 'running'; requestHash: string | null } | { state: 'absent' }>
  complete(tenantId: string, keyHash: string, token: string, body: string, now: number, claimedAt: number, requestHash: string): Promise<void>
  release(tenantId: string, keyHash: string, token: string): Promise<void>
  /** Moves a running claim's expiry on, while `token` still owns it. */
  renew(tenantId: string, keyHash: string, token: string, now: number): Promise<void>
}

/** The backends' lease (tests shorten it). */
interface Lease {
  ms: number
}

const CLAIM_LUA = `
local v = redis.call('GET', KEYS[1])
if v then
  local ok, obj = pcall(cjson.decode, v)
  if ok and type(obj) == 'table' and tonumber(obj.exp) and tonumber(obj.exp) > tonumber(ARGV[1]) then return v end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return false`

const SWAP_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[2] == '' then return redis.call('DEL', KEYS[1]) end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`

type RedisWithScripts = Redis & {
  scbIdemClaim(key: string, now: string, value: string, px: string): Promise<string | null>
  scbIdemSwap(key: string, expected: string, next: string, px: string): Promise<number>
}

function redisBackend(redis: Redis, prefix: string, lease: Lease): Backend {
  const r = redis as RedisWithScripts
  if (!(r as unknown as Record<string, unknown>).scbIdemClaim) {
    r.defineCommand('scbIdemClaim', { numberOfKeys: 1, lua: CLAIM_LUA })
    r.defineCommand('scbIdemSwap', { numberOfKeys: 1, lua: SWAP_LUA })
  }
  const k = (tenantId: string, keyHash: string) => `${prefix}idem:${tenantId}:${keyHash}`
  const running = (token: string, exp: number, requestHash: string) => JSON.stringify({ s: 'running', t: token, exp, h: requestHash })
  // the running marker we wrote, remembered so release/complete can compare-and-swap it
  const markers = new Map<string, string>()
  return {
    async claim(tenantId, keyHash, requestHash, token, now) {
      const marker = running(token, now + lease.ms, requestHash)
      const existing = await r.scbIdemClaim(k(tenantId, keyHash), String(now), marker, String(lease.ms + 60_000))
      if (existing === null) {
        markers.set(token, marker)
        return { claimed: true }
      }
      const obj = JSON.parse(existing) as { s: string; b?: string; h?: string }
      return { claimed: false, body: obj.s === 'done' ? (obj.b ?? null) : null, requestHash: obj.h ?? null }
    },
    async peek(tenantId, keyHash, now) {
      const v = await r.get(k(tenantId, keyHash))
      if (!v) return { state: 'absent' }
      const obj = JSON.parse(v) as { s: string; b?: string; h?: string; exp: number }
      if (obj.exp <= now) return { state: 'absent' }
      const requestHash = obj.h ?? null
      return obj.s === 'done' ? { state: 'done', body: obj.b ?? '', requestHash } : { state: 'running', requestHash }
    },
    async complete(tenantId, keyHash, token, body, _now, claimedAt, requestHash) {
      const marker = markers.get(token)
      markers.delete(token)
      if (!marker) return
      // the request's hash stays with the stored response, so a reuse of the key for another request is told apart
      const done = JSON.stringify({ s: 'done', exp: claimedAt + IDEMPOTENCY_WINDOW_MS, b: body, h: requestHash })
      await r.scbIdemSwap(k(tenantId, keyHash), marker, done, String(IDEMPOTENCY_WINDOW_MS + 3_600_000))
    },
    async release(tenantId, keyHash, token) {
      const marker = markers.get(token)
      markers.delete(token)
      if (marker) await r.scbIdemSwap(k(tenantId, keyHash), marker, '', '0')
    },
    async renew(tenantId, keyHash, token, now) {
      const marker = markers.get(token)
      if (!marker) return
      const { h } = JSON.parse(marker) as { h: string }
      const next = running(token, now + lease.ms, h)
      if ((await r.scbIdemSwap(k(tenantId, keyHash), marker, next, String(lease.ms + 60_000))) === 1 && markers.has(token)) markers.set(token, next)
    },
  }
}

function dbBackend(db: Db, lease: Lease): Backend {
  return {
    async claim(tenantId, keyHash, requestHash, token, now) {
      const at = new Date(now)
      const { rows } = await sql<{ owner_token: string | null; status: string; response_text: string | null }>`
        INSERT INTO idempotency_keys AS k (tenant_id, key, request_hash, status, owner_token, created_at, expires_at)
        VALUES (${tenantId}, ${keyHash}, ${requestHash}, 'running', ${token}, ${at}, ${new Date(now + lease.ms)})
        ON CONFLICT (tenant_id, key) DO UPDATE SET
          request_hash = EXCLUDED.request_hash, status = 'running', owner_token = EXCLUDED.owner_token,
          response = NULL, response_text = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE k.expires_at <= ${at}
        RETURNING owner_token, status, response_text
      `.execute(db)
      if (rows[0]?.owner_token === token) return { claimed: true }
      const cur = await this.peek(tenantId, keyHash, now)
      return { claimed: false, body: cur.state === 'done' ? cur.body : null, requestHash: cur.state === 'absent' ? null : cur.requestHash }
    },
    async peek(tenantId, keyHash, now) {
      const row = await db
        .selectFrom('idempotency_keys')
        .select(['status', 'response_text', 'expires_at', 'request_hash'])
        .where('tenant_id', '=', tenantId)
        .where('key', '=', keyHash)
        .executeTakeFirst()
      if (!row || row.expires_at.getTime() <= now) return { state: 'absent' }
      const requestHash = row.request_hash ?? null
      return row.status === 'done' ? { state: 'done', body: row.response_text ?? '', requestHash } : { state: 'running', requestHash }
    },
    async complete(tenantId, keyHash, token, body, _now, claimedAt) {
      await db
        .updateTable('idempotency_keys')
        .set({ status: 'done', response_text: body, response: body, expires_at: new Date(claimedAt + IDEMPOTENCY_WINDOW_MS), owner_token: null })
        .where('tenant_id', '=', tenantId)
        .where('key', '=', keyHash)
        .where('owner_token', '=', token)
        .execute()
    },
    async release(tenantId, keyHash, token) {
      await db
        .deleteFrom('idempotency_keys')
        .where('tenant_id', '=', tenantId)
        .where('key', '=', keyHash)
        .where('owner_token', '=', token)
        .where('status', '=', 'running')
        .execute()
    },
    async renew(tenantId, keyHash, token, now) {
      await db
        .updateTable('idempotency_keys')
        .set({ expires_at: new Date(now + lease.ms) })
        .where('tenant_id', '=', tenantId)
        .where('key', '=', keyHash)
        .where('owner_token', '=', token)
        .where('status', '=', 'running')
        .execute()
    },
  }
}

export const inFlight = () =>
  new AppError(409, 'idempotency_in_flight', 'A request with this Idempotency-Key is still being processed; retry shortly', { coded: true })

export const keyReused = () =>
  new AppError(422, 'idempotency_key_reused', 'This Idempotency-Key was already used with a different request (question, session or bot); use a new key', {
    coded: true,
  })

export function createIdempotency(deps: {
  db: Db
  redis: Redis | null
  prefix: string
  clock: Clock
  waitMs: number
  log?: { warn: (o: object, m: string) => void }
  /** How long a running claim lives without a renewal (default RUNNING_LEASE_MS); renewed every third of it. */
  leaseMs?: number
}) {
  const lease: Lease = { ms: deps.leaseMs ?? RUNNING_LEASE_MS }
  const fromDb = dbBackend(deps.db, lease)
  const fromRedis = deps.redis ? redisBackend(deps.redis, deps.prefix, lease) : null
  const now = () => deps.clock.now().getTime()

  /** Redis first; the database when Redis is not configured or fails (the choice sticks to the request). */
  async function claim(
    tenantId: string,
    keyHash: string,
    requestHash: string,
    token: string,
  ): Promise<{ backend: Backend; claimed: boolean; body: string | null; requestHash: string | null }> {
    if (fromRedis) {
      try {
        const r = await fromRedis.claim(tenantId, keyHash, requestHash, token, now())
        return { backend: fromRedis, claimed: r.claimed, body: r.claimed ? null : r.body, requestHash: r.claimed ? requestHash : r.requestHash }
      } catch (err) {
        deps.log?.warn({ err: { message: (err as Error).message } }, 'idempotency: redis unavailable, using the database')
      }
    }
    const r = await fromDb.claim(tenantId, keyHash, requestHash, token, now())
    return { backend: fromDb, claimed: r.claimed, body: r.claimed ? null : r.body, requestHash: r.claimed ? requestHash : r.requestHash }
  }

  return {
    /**
     * Runs `work` once per (tenant, key) within the window and returns its response bytes; duplicates
     * get the same bytes. `work` throwing releases the key and rethrows.
     */
    async run(tenantId: string, rawKey: string, requestHash: string, work: () => Promise<string>): Promise<string> {
      const keyHash = sha256Hex(rawKey)
      const token = randomUUID()
      const deadline = Date.now() + deps.waitMs
      for (;;) {
        const claimedAt = now()
        const c = await claim(tenantId, keyHash, requestHash, token)
        if (c.claimed) {
          let body: string
          // renewals run one after another, and the last one is over before the claim is completed or released
          // (a renewal racing the completion would leave the key running without its response)
          let beat: Promise<void> = Promise.resolve()
          const heartbeat = setInterval(() => {
            beat = beat.then(() =>
              c.backend.renew(tenantId, keyHash, token, now()).catch((err) => {
                deps.log?.warn({ err: { message: (err as Error).message } }, 'idempotency: could not renew a running claim')
              }),
            )
          }, lease.ms / 3)
          heartbeat.unref()
          const stopBeating = async () => {
            clearInterval(heartbeat)
            await beat
          }
          try {
            body = await work()
          } catch (err) {
            await stopBeating()
            await c.backend.release(tenantId, keyHash, token).catch(() => {})
            throw err
          }
          await stopBeating()
          await c.backend.complete(tenantId, keyHash, token, body, now(), claimedAt, requestHash).catch((err) => {
            deps.log?.warn({ err: { message: (err as Error).message } }, 'idempotency: could not store the response')
          })
          return body
        }
        // a replay must be the same request: another question under a used key would silently get a wrong answer
        if (c.requestHash !== null && c.requestHash !== requestHash) throw keyReused()
        if (c.body !== null) return c.body
        // the first request is still running: wait for its response, or for the key to be released
        for (;;) {
          if (Date.now() >= deadline) throw inFlight()
          await new Promise((r) => setTimeout(r, POLL_MS))
          const p = await c.backend.peek(tenantId, keyHash, now())
          if (p.state === 'done') return p.body
          if (p.state === 'absent') break
        }
      }
    },

    /** Drops expired database entries (the recurring job calls it). */
    async purgeExpired(): Promise<number> {
      const r = await deps.db.deleteFrom('idempotency_keys').where('expires_at', '<', deps.clock.now()).executeTakeFirst()
      return Number(r.numDeletedRows ?? 0)
    },
  }
}

export type Idempotency = ReturnType<typeof createIdempotency>

/** The header's value, trimmed; null when absent or blank; a 422 when longer than 128 characters. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | null | 'too_long' {
  const v = (Array.isArray(header) ? header[0] : header)?.trim()
  if (!v) return null
  return v.length > 128 ? 'too_long' : v
}
