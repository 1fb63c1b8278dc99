import type { Cipher } from '../../../lib/crypto.js'
import type { ChatRepo, SessionRow } from '../chat.repo.js'
import type { HistoryTurn } from './rewrite.js'

/**
 * Stage 1: the session and its recent history. A turn without a session id, or with one this tenant does
 * not know, starts a session (with that id when it is free, so an integration can name its sessions and
 * escalate one even after a failed turn). History is the last few turns, each capped, operator replies
 * included as the assistant's.
 */

export async function resolveSession(
  repo: Pick<ChatRepo, 'findSession' | 'insertSession'>,
  input: { tenantId: string; botId: string; sessionId?: string | null; channel: 'api' | 'widget'; locale: string | null; now: Date },
): Promise<{ session: SessionRow; created: boolean }> {
  if (input.sessionId) {
    const found = await repo.findSession(input.tenantId, input.sessionId)
    if (found) return { session: found, created: false }
  }
  const session = await repo.insertSession(input.tenantId, {
    id: input.sessionId ?? null,
    botId: input.botId,
    channel: input.channel,
    mode: 'anonymous',
    identityEnc: null,
    locale: input.locale,
    now: input.now,
  })
  return { session, created: true }
}

/** The last `turns` exchanges (2 messages each), every message cut to `chars`. */
export function historyTurns(messages: { role: string; content: string }[], turns: number, chars: number): HistoryTurn[] {
  if (turns <= 0) return []
  return messages
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .slice(-turns * 2)
    .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content.length > chars ? `${m.content.slice(0, chars)}…` : m.content }))
}

export interface IdentityInfo {
  user_id?: string
  email?: string
  name?: string
  plan_tier?: string
  company?: string
  locale?: string
}

export function readIdentity(session: Pick<SessionRow, 'identity_enc'>, cipher: Pick<Cipher, 'decrypt'>): IdentityInfo | null {
  if (!session.identity_enc) return null
  try {
    const v = JSON.parse(cipher.decrypt(session.identity_enc)) as unknown
    return v && typeof v === 'object' ? (v as IdentityInfo) : null
  } catch {
    return null
  }
}
