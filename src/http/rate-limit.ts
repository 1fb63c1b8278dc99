import type { FastifyRequest } from 'fastify'
import type { RateLimitOptions } from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import { sha256Hex } from '../lib/crypto.js'

/**
 * Named limits from interface.md and contract.md. Each route that is limited names one preset in its
 * `config.rateLimit`; the store is Redis when configured (shared by all instances), memory otherwise.
 */
function preset(max: number, window: 'minute' | 'hour', extra: Partial<RateLimitOptions> = {}): RateLimitOptions {
  return { max, timeWindow: window === 'minute' ? 60_000 : 3_600_000, ...extra }
}

const byApiKey = (req: FastifyRequest) => {
  const k = req.headers['x-api-key']
  return `key:${sha256Hex(String(Array.isArray(k) ? k[0] : (k ?? req.ip)))}`
}
/** Runs after the guard so the tenant is known and cannot be spoofed. */
const byTenant: Partial<RateLimitOptions> = { hook: 'preHandler', keyGenerator: (req) => `tenant:${req.tenantId ?? req.ip}` }

export const rateLimits = {
  register: preset(5, 'hour'),
  login: preset(10, 'minute'),
  forgotPassword: preset(3, 'hour'),
  resetPassword: preset(5, 'hour'),
  /** The max here is the contract's default; the documents routes apply UPLOAD_RATE_PER_HOUR. */
  upload: preset(200, 'hour', byTenant),
  chat: preset(120, 'minute', { keyGenerator: byApiKey }),
  widgetConfig: preset(60, 'minute'),
  widgetSessionInit: preset(10, 'minute'),
  widgetChat: preset(30, 'minute'),
  widgetHistory: preset(30, 'minute'),
  widgetEscalate: preset(20, 'minute'),
  /** A visitor's file uploads, per IP address; the routes apply ATTACHMENT_UPLOADS_PER_HOUR (the per-conversation cap is the service's). */
  widgetAttachment: preset(60, 'hour'),
  /** Each invitation sends a mail to an address the workspace chose: sending and resending count together. */
  invitations: preset(20, 'hour', { ...byTenant, groupId: 'invitations' }),
  /** Each resend mails a confirmation link to the bot's reply_from, an address the workspace chose. */
  senderConfirmation: preset(10, 'hour', byTenant),
  /** The bot page's test mail: each is a model turn and a mail to the member's own inbox. */
  testMail: preset(60, 'hour', byTenant),
  /** The public page of a reply_from confirmation link (a token guess is one of 2^192). */
  senderConfirmationLink: preset(30, 'minute'),
  /** Each test event is a request to the workspace's URL, from our servers. */
  webhookTest: preset(10, 'minute', byTenant),
  /** "Test connection" of a knowledge connector: requests to the vendor's API, from our servers. */
  connectorTest: preset(10, 'minute', byTenant),
  /** Typing indicators: one call per start and stop of typing. */
  typing: preset(120, 'minute'),
  /** Opening an event stream (a reconnecting client backs off; this bounds one that does not). */
  liveEvents: preset(60, 'minute'),
} satisfies Record<string, RateLimitOptions>

/** The contract's 429 text, e.g. "Rate limit exceeded: 10 per 1 minute". */
export function rateLimitMessage(max: number, timeWindowMs: number): string {
  const [n, unit] = timeWindowMs % 3_600_000 === 0 ? [timeWindowMs / 3_600_000, 'hour'] : [Math.round(timeWindowMs / 60_000), 'minute']
  return `Rate limit exceeded: ${max} per ${n} ${unit}${n === 1 ? '' : 's'}`
}

type StoreCallback = (err: Error | null, res?: { current: number; ttl: number }) => void

// INCR plus the window's expiry in one round trip; a key that somehow lost its TTL gets one again.
const INCR_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if current == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}`

const LOCAL_MAX_KEYS = 50_000

/**
 * The counter store behind every limit. With Redis the counters are shared by all instances (keys under
 * REDIS_PREFIX); when Redis is not configured, or is down, counting continues in process memory, so an
 * outage weakens a limit to per-instance instead of switching it off.
 */
export function createRateLimitStore(redis: Redis | null, prefix: string, onRedisError: (err: Error) => void = () => {}) {
  const local = new Map<string, { count: number; resetAt: number }>()
  if (redis && !(redis as unknown as Record<string, unknown>).scbRateLimit) {
    redis.defineCommand('scbRateLimit', { numberOfKeys: 1, lua: INCR_SCRIPT })
  }

  function localIncr(key: string, timeWindow: number): { current: number; ttl: number } {
    const now = Date.now()
    let entry = local.get(key)
    if (!entry || entry.resetAt <= now) {
      if (local.size >= LOCAL_MAX_KEYS) {
        for (const [k, v] of local) if (v.resetAt <= now) local.delete(k)
        if (local.size >= LOCAL_MAX_KEYS) local.delete(local.keys().next().value!)
      }
      entry = { count: 0, resetAt: now + timeWindow }
      local.set(key, entry)
    }
    entry.count++
    return { current: entry.count, ttl: entry.resetAt - now }
  }

  return class RateLimitStore {
    private readonly ns: string
    // @fastify/rate-limit constructs the root store with its options object; children get a namespace.
    constructor(ns?: unknown) {
      this.ns = typeof ns === 'string' ? ns : prefix
    }

    // Routes that share a `groupId` share one counter; any other route counts on its own.
    child(routeOptions: { groupId?: string; routeInfo: { method?: string; url?: string } }) {
      if (routeOptions.groupId) return new RateLimitStore(`${this.ns}group:${routeOptions.groupId}:`)
      return new RateLimitStore(`${this.ns}${routeOptions.routeInfo.method ?? ''}${routeOptions.routeInfo.url ?? ''}:`)
    }

    incr(key: string, cb: StoreCallback, timeWindow: number): void {
      const full = this.ns + key
      if (!redis || redis.status !== 'ready') return cb(null, localIncr(full, timeWindow))
      ;(redis as unknown as { scbRateLimit(k: string, w: number): Promise<[number, number]> })
        .scbRateLimit(full, timeWindow)
        .then(([current, ttl]) => cb(null, { current, ttl }))
        .catch((err: Error) => {
          onRedisError(err)
          cb(null, localIncr(full, timeWindow))
        })
    }

    /** The counter without counting (for `createRateLimit(...)(req, { increment: false })`). */
    read(key: string, cb: StoreCallback): void {
      const full = this.ns + key
      const fromLocal = () => {
        const entry = local.get(full)
        const now = Date.now()
        cb(null, entry && entry.resetAt > now ? { current: entry.count, ttl: entry.resetAt - now } : { current: 0, ttl: 0 })
      }
      if (!redis || redis.status !== 'ready') return fromLocal()
      redis
        .multi()
        .get(full)
        .pttl(full)
        .exec()
        .then((res) => {
          const current = Number(res?.[0]?.[1] ?? 0)
          const ttl = Number(res?.[1]?.[1] ?? 0)
          cb(null, current > 0 && ttl > 0 ? { current, ttl } : { current: 0, ttl: 0 })
        })
        .catch(fromLocal)
    }
  }
}

/** Waits up to `ms` for Redis to connect, so the first requests after boot already count in Redis. */
export async function waitForRedis(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return true
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer)
      redis.off('ready', onReady)
      resolve(ok)
    }
    const onReady = () => done(true)
    const timer = setTimeout(() => done(false), ms)
    redis.once('ready', onReady)
  })
}
