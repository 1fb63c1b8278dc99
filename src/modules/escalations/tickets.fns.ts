import type { TicketPriority, TicketTrigger, TranscriptEntry } from '../../db/schema/chat.js'

/**
 * Ticket rules (contract "Escalations"): a visitor who asked for a person or rejected an answer waits
 * for help (medium); a provider outage means nobody got an answer (high); a question the knowledge does
 * not cover is a documentation gap first (low). An identified visitor on a paid plan is one step higher.
 */
const BASE: Record<TicketTrigger, TicketPriority> = {
  user_request: 'medium',
  answer_rejected: 'medium',
  llm_unavailable: 'high',
  low_similarity: 'low',
  no_documents: 'low',
  // every mail of a bot in draft mode waits for a person to send its answer
  email_draft: 'medium',
}

const ORDER: TicketPriority[] = ['low', 'medium', 'high', 'critical']

const UNPAID = new Set(['', 'free', 'trial', 'freemium', 'basic_free', 'none', 'anonymous', 'guest'])

export function isPaidPlan(planTier: string | null | undefined): boolean {
  if (!planTier) return false
  return !UNPAID.has(planTier.trim().toLowerCase())
}

export function ticketPriority(trigger: TicketTrigger, planTier?: string | null): TicketPriority {
  const base = BASE[trigger]
  if (!isPaidPlan(planTier)) return base
  return ORDER[Math.min(ORDER.indexOf(base) + 1, ORDER.length - 1)]!
}

/** ESC-0001 ... ESC-9999, then ESC-10000 and on. */
export const formatTicketNumber = (seq: number) => `ESC-${String(seq).padStart(4, '0')}`

/** A ticket as outbound events carry it: the redacted question only, never the original or the visitor's e-mail. */
export function ticketEvent(
  type: 'ticket.created' | 'ticket.replied' | 'ticket.resolved' | 'ticket.reopened',
  t: { id: string; ticket_number: string; bot_id: string | null; session_id: string | null; priority: string; trigger: string; primary_question: string },
  status: string,
  extra: Record<string, unknown> = {},
) {
  return {
    type,
    botId: t.bot_id,
    ticketId: t.id,
    data: {
      ticket_id: t.id,
      ticket_number: t.ticket_number,
      bot_id: t.bot_id,
      session_id: t.session_id,
      status,
      priority: t.priority,
      trigger: t.trigger,
      question: t.primary_question,
      ...extra,
    },
  }
}

/** A ticket keeps the conversation's last this many messages (and a hand-off's question). */
export const TRANSCRIPT_MESSAGES = 50

/** A stored message as a ticket's transcript keeps it (operator replies marked). */
export const transcriptEntry = (m: { role: 'user' | 'assistant'; content: string; created_at: Date; from_operator: boolean }): TranscriptEntry => ({
  role: m.from_operator ? 'operator' : m.role,
  content: m.content,
  created_at: m.created_at.toISOString(),
})
