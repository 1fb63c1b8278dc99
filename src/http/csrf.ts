import type { FastifyRequest } from 'fastify'
import { forbidden } from '../lib/errors.js'
import { AUTH_COOKIE } from '../modules/auth/jwt.js'

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

function originOf(req: FastifyRequest): string | undefined {
  const origin = req.headers.origin
  if (typeof origin === 'string') return origin
  const referer = req.headers.referer
  if (typeof referer !== 'string') return undefined
  try {
    return new URL(referer).origin
  } catch {
    return 'null'
  }
}

/**
 * CSRF guard for the dashboard's cookie session, on top of the cookie's SameSite=Lax: a request that
 * changes state and would be authenticated by the cookie (no Authorization header) must come from this
 * service's own origin or one of CORS_ORIGINS. Browsers always send Origin on cross-site POST, PUT, PATCH
 * and DELETE, so a forged form or fetch from another site is refused before it reaches a route; clients
 * that are not browsers (curl, servers) send no Origin and are not exposed to CSRF in the first place.
 */
export function createCsrfCheck(allowedOrigins: readonly string[]) {
  const allowed = new Set(allowedOrigins)
  return async function csrfCheck(req: FastifyRequest): Promise<void> {
    if (SAFE.has(req.method) || req.headers.authorization) return
    const cookies = req.headers.cookie
    if (typeof cookies !== 'string' || !cookies.includes(`${AUTH_COOKIE}=`)) return
    const origin = originOf(req)
    if (origin === undefined || allowed.has(origin)) return
    let host: string | null = null
    try {
      host = origin === 'null' ? null : new URL(origin).host
    } catch {
      host = null
    }
    if (host !== null && host === req.host) return
    throw forbidden('Cross-site request refused: this action must come from the dashboard', 'csrf_origin_mismatch')
  }
}
