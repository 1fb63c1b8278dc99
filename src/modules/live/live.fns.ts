import type { SessionOwner } from '../../db/schema/chat.js'
import type { OutboundEvent } from '../shared/events.port.js'

/** A typing indicator lapses this long after its last `on` (the widget and the dashboard hide it then). */
export const TYPING_LAPSE_MS = 30_000

/** The webhooks an owner change is announced by: handed off (and assigned at once), assigned, back to the bot, ended. */
export function ownerWebhooks(
  from: SessionOwner,
  to: SessionOwner,
  c: { sessionId: string; botId: string; ticketId: string | null; assigneeUserId: string | null; reason: string },
): OutboundEvent[] {
  const data = { session_id: c.sessionId, bot_id: c.botId, ticket_id: c.ticketId, owner: to, previous_owner: from, reason: c.reason }
  const base = { botId: c.botId, ticketId: c.ticketId }
  const handedOff: OutboundEvent = { ...base, type: 'conversation.handed_off', data }
  if (to === 'queue') return from === 'bot' ? [handedOff] : []
  if (to === 'human') {
    const assigned: OutboundEvent = { ...base, type: 'conversation.assigned', data: { ...data, assignee_user_id: c.assigneeUserId } }
    return from === 'bot' && c.reason !== 'operator_message' ? [handedOff, assigned] : [assigned]
  }
  if (to === 'bot') return [{ ...base, type: 'conversation.returned_to_bot', data }]
  return [{ ...base, type: 'conversation.ended', data: { session_id: c.sessionId, bot_id: c.botId, reason: 'closed' } }]
}

/** A Last-Event-ID or ?after=: a non-negative integer (bigint as text); anything else starts from now. */
export function parseSeq(v: unknown): string | null {
  const s = Array.isArray(v) ? v[0] : v
  return typeof s === 'string' && /^\d{1,18}$/.test(s.trim()) ? String(BigInt(s.trim())) : null
}

/** What the visitor's stream shows of an event: never who moved the conversation or why, never internal fields. */
export function widgetPayload(e: { type: string; data: Record<string, unknown> }): Record<string, unknown> {
  const d = e.data
  if (e.type === 'owner') return { type: 'owner', owner: d.owner, assignee_name: d.assignee_name ?? null }
  if (e.type === 'message') {
    const { internal: _internal, ...m } = d
    return { type: 'message', ...m }
  }
  return { type: e.type, ...d }
}

/** The team's stream: the whole event, with its session and bot. */
export const teamPayload = (e: { type: string; session_id: string | null; bot_id: string | null; data: Record<string, unknown> }) => ({
  type: e.type,
  session_id: e.session_id,
  bot_id: e.bot_id,
  ...e.data,
})

/** A typing call repeating the last stored state within this window stores nothing (the indicator lasts 30 s anyway). */
export const TYPING_REPEAT_MS = 5_000

/** Which typing calls repeat the state stored last for the same typist (per process; bounded). */
export function typingCoalescer(windowMs = TYPING_REPEAT_MS, maxKeys = 50_000) {
  const last = new Map<string, { on: boolean; at: number }>()
  return {
    repeat(key: string, on: boolean, now: number): boolean {
      const l = last.get(key)
      return !!l && l.on === on && now >= l.at && now - l.at < windowMs
    },
    noted(key: string, on: boolean, now: number) {
      if (last.size >= maxKeys) for (const [k, v] of last) if (now - v.at >= windowMs) last.delete(k)
      if (last.size >= maxKeys) last.clear()
      last.set(key, { on, at: now })
    },
  }
}
