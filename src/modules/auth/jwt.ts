import { SignJWT, jwtVerify } from 'jose'
import type { Clock } from '../../lib/clock.js'

export const JWT_TTL_SECONDS = 86_400
export const AUTH_COOKIE = 'access_token'

export interface JwtClaims {
  sub: string
  /** The user's token version when issued; a password reset bumps it and so revokes older tokens. */
  ver: number
}

export function createJwt(secret: string, clock: Clock) {
  const key = new TextEncoder().encode(secret)
  return {
    async sign(claims: JwtClaims): Promise<string> {
      const now = Math.floor(clock.now().getTime() / 1000)
      return new SignJWT({ ver: claims.ver })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(claims.sub)
        .setIssuedAt(now)
        .setExpirationTime(now + JWT_TTL_SECONDS)
        .sign(key)
    },
    /** The claims of a valid token, or null for anything else (expired, forged, malformed, a ck_ key). */
    async verify(token: string): Promise<JwtClaims | null> {
      if (!token || token.startsWith('ck_')) return null
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          currentDate: clock.now(),
        })
        if (typeof payload.sub !== 'string' || typeof payload.ver !== 'number') return null
        return { sub: payload.sub, ver: payload.ver }
      } catch {
        return null
      }
    },
  }
}

export type Jwt = ReturnType<typeof createJwt>
