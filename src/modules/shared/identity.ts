import type { Cipher } from '../../lib/crypto.js'

/**
 * What an identified visitor's token told us (claims capped at session init), kept encrypted on the
 * session. The chat reads it for tickets; the escalations module for the operator's view of a ticket.
 */
export interface IdentityInfo {
  user_id?: string
  email?: string
  name?: string
  plan_tier?: string
  company?: string
  locale?: string
}

export function readIdentity(session: { identity_enc: string | null }, cipher: Pick<Cipher, 'decrypt'>): IdentityInfo | null {
  if (!session.identity_enc) return null
  try {
    const v = JSON.parse(cipher.decrypt(session.identity_enc)) as unknown
    return v && typeof v === 'object' ? (v as IdentityInfo) : null
  } catch {
    return null
  }
}
