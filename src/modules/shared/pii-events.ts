import type { PiiAction } from '../../db/schema/chat.js'
import type { NewPiiEvent } from '../tenants/privacy/privacy.repo.js'

/** Audit events for entity counts (never values), one per type, in a stable order. */
export function piiEvents(
  counts: Record<string, number>,
  p: { action: PiiAction; direction: 'message' | 'ticket'; sessionId?: string | null; ticketId?: string | null; actorUserId?: string | null },
): NewPiiEvent[] {
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([entityType, count]) => ({ entityType, count, ...p }))
}

/** Sums entity counts of several messages. */
export function sumCounts(list: (Record<string, number> | null | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const c of list) for (const [k, v] of Object.entries(c ?? {})) out[k] = (out[k] ?? 0) + v
  return out
}
