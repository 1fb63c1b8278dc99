import { webcrypto } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import type { Clock } from '../../lib/clock.js'
import { setBounded } from '../../lib/bounded.js'

export const JWT_TTL_SECONDS = 86_400
export const AUTH_COOKIE = 'access_token'

/** Verified tokens remembered, so a dashboard session does not pay an HMAC check on every request. */
const VERIFIED_CACHE_MAX = 10_000

export interface JwtClaims {
  sub: string
  /** The user's token version when issued; a password reset bumps it and so revokes older tokens. */
  ver: number
}

export function createJwt(secret: string, clock: Clock) {
  // Imported once: handing jose the raw bytes would import a new key on every call.
  const keyPromise = webcrypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
  // token -> claims and expiry. A signature check is a pure function of the token, so remembering it is
  // safe; expiry is still checked on every use, and revocation (token version) by the caller.
  const verified = new Map<string, { claims: JwtClaims; exp: number }>()

  return {
    async sign(claims: JwtClaims): Promise<string> {
      const now = Math.floor(clock.now().getTime() / 1000)
      return new SignJWT({ ver: claims.ver })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(claims.sub)
        .setIssuedAt(now)
        .setExpirationTime(now + JWT_TTL_SECONDS)
        .sign(await keyPromise)
    },
    /** The claims of a valid token, or null for anything else (expired, forged, malformed, a ck_ key). */
    async verify(token: string): Promise<JwtClaims | null> {
      if (!token || token.startsWith('ck_') || token.length > 4096) return null
      const nowSeconds = clock.now().getTime() / 1000
      const hit = verified.get(token)
      if (hit) {
        if (hit.exp > nowSeconds) return hit.claims
        verified.delete(token)
        return null
      }
      try {
        const { payload } = await jwtVerify(token, await keyPromise, {
          algorithms: ['HS256'],
          currentDate: clock.now(),
        })
        if (typeof payload.sub !== 'string' || typeof payload.ver !== 'number' || typeof payload.exp !== 'number') return null
        const claims = { sub: payload.sub, ver: payload.ver }
        setBounded(verified, token, { claims, exp: payload.exp }, VERIFIED_CACHE_MAX)
        return claims
      } catch {
        return null
      }
    },
  }
}

export type Jwt = ReturnType<typeof createJwt>
