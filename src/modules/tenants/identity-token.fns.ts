import { hmacSha256Hex, safeEqual } from '../../lib/crypto.js'

/**
 * The contract's identity token: base64url(compact JSON claims) + "." + hex HMAC-SHA256 of the base64url
 * part, keyed with the tenant's signing secret.
 */
export interface IdentityClaims {
  user_id: string
  exp: number
  iat?: number
  email?: string
  name?: string
  plan_tier?: string
  audience_tag?: string
  company?: string
  locale?: string
}

const STRING_CLAIMS = ['email', 'name', 'plan_tier', 'audience_tag', 'company', 'locale'] as const
const MAX_CLAIM_CHARS = 256
const MAX_TOKEN_CHARS = 4096

export function signIdentityToken(claims: IdentityClaims, secret: string): string {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url')
  return `${body}.${hmacSha256Hex(secret, body)}`
}

/**
 * Verifies against each secret in order (current, then the previous one while it is valid). Returns the
 * sanitised claims, or null for anything that is not a valid, unexpired token.
 */
export function verifyIdentityToken(token: string, secrets: string[], nowSeconds: number): IdentityClaims | null {
  if (!token || token.length > MAX_TOKEN_CHARS) return null
  const dot = token.lastIndexOf('.')
  if (dot <= 0) return null
  const body = token.slice(0, dot)
  const sig = token.slice(dot + 1).toLowerCase()
  if (!/^[0-9a-f]{64}$/.test(sig)) return null
  if (!secrets.some((s) => safeEqual(hmacSha256Hex(s, body), sig))) return null
  let raw: Record<string, unknown>
  try {
    raw = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (!raw || typeof raw !== 'object') return null
  const userId = raw.user_id
  const exp = raw.exp
  if ((typeof userId !== 'string' && typeof userId !== 'number') || String(userId).length === 0) return null
  if (typeof exp !== 'number' || !Number.isFinite(exp) || exp <= nowSeconds) return null
  const claims: IdentityClaims = { user_id: String(userId).slice(0, MAX_CLAIM_CHARS), exp }
  if (typeof raw.iat === 'number') claims.iat = raw.iat
  for (const key of STRING_CLAIMS) {
    const v = raw[key]
    if (typeof v === 'string' && v.length > 0) claims[key] = v.slice(0, MAX_CLAIM_CHARS)
  }
  return claims
}
