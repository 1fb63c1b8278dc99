import type { FastifyRequest } from 'fastify'
import type { RateLimitOptions } from '@fastify/rate-limit'
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
  return `key:${sha256Hex(String(Array.isArray(k) ? k[0] : k ?? req.ip))}`
}
/** Runs after the guard so the tenant is known and cannot be spoofed. */
const byTenant: Partial<RateLimitOptions> = { hook: 'preHandler', keyGenerator: (req) => `tenant:${req.tenantId ?? req.ip}` }

export const rateLimits = {
  register: preset(5, 'hour'),
  login: preset(10, 'minute'),
  forgotPassword: preset(3, 'hour'),
  resetPassword: preset(5, 'hour'),
  upload: preset(20, 'hour', byTenant),
  chat: preset(120, 'minute', { keyGenerator: byApiKey }),
  widgetConfig: preset(60, 'minute'),
  widgetSessionInit: preset(10, 'minute'),
  widgetChat: preset(30, 'minute'),
  widgetHistory: preset(30, 'minute'),
  widgetEscalate: preset(20, 'minute'),
} satisfies Record<string, RateLimitOptions>


/** The contract's 429 text, e.g. "Rate limit exceeded: 10 per 1 minute". */
export function rateLimitMessage(max: number, timeWindowMs: number): string {
  const [n, unit] = timeWindowMs % 3_600_000 === 0 ? [timeWindowMs / 3_600_000, 'hour'] : [Math.round(timeWindowMs / 60_000), 'minute']
  return `Rate limit exceeded: ${max} per ${n} ${unit}${n === 1 ? '' : 's'}`
}
