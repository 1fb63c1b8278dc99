import { randomUUID } from 'node:crypto'
import type { ChatRepo, SessionRow } from '../chat.repo.js'
import type { HistoryTurn } from './04-rewrite.js'

/**
 * Stage 1: the session and its recent history. A turn without a session id, or with one this tenant does
 * not know, starts a session (with that id when it is free, so an integration can name its sessions and
 * escalate one even after a failed turn). History is the last few turns, each capped, operator replies
 * included as the assistant's.
 */

export async function resolveSession(
  repo: Pick<ChatRepo, 'findSession' | 'insertSession'>,
  input: {
    tenantId: string
    botId: string
    sessionId?: string | null
    channel: 'api' | 'widget' | 'email'
    locale: string | null
    now: Date
    /** a dry run (evaluation): a session that exists only in this turn, none stored */
    dryRun?: { identityEnc: string | null; hasHistory: boolean }
  },
): Promise<{ session: SessionRow; created: boolean; version?: string }> {
  if (input.dryRun) return { session: dryRunSession(input, input.dryRun.identityEnc), created: !input.dryRun.hasHistory }
  if (input.sessionId) {
    const found = await repo.findSession(input.tenantId, input.sessionId)
    if (found) return { session: found, created: false }
  }
  const { session, version } = await repo.insertSession(input.tenantId, {
    id: input.sessionId ?? null,
    botId: input.botId,
    channel: input.channel,
    mode: 'anonymous',
    identityEnc: null,
    locale: input.locale,
    now: input.now,
  })
  return { session, created: true, version }
}

function dryRunSession(
  input: { tenantId: string; botId: string; channel: 'api' | 'widget' | 'email'; locale: string | null; now: Date },
  identityEnc: string | null,
): SessionRow {
  return {
    id: randomUUID(),
    tenant_id: input.tenantId,
    bot_id: input.botId,
    channel: input.channel,
    mode: identityEnc ? 'identified' : 'anonymous',
    identity_enc: identityEnc,
    visitor_email_enc: null,
    visitor_email_hash: null,
    locale: input.locale,
    chat_ended: false,
    awaiting: null,
    read_message_id: null,
    message_count: 0,
    last_question: null,
    last_answer_preview: null,
    created_at: input.now,
    last_activity_at: input.now,
    owner: 'bot',
    owner_since: null,
    live_seq: '0',
    language: null,
    language_source: null,
    visitor_seen_at: null,
    visitor_gone: false,
  }
}

/**
 * The last `turns` exchanges (2 messages each), every message cut to `chars`. A person's messages (after a
 * hand-off) are the assistant's, marked, so the bot answering again knows what the team already said.
 */
export function historyTurns(messages: { role: string; content: string; from_operator?: boolean }[], turns: number, chars: number): HistoryTurn[] {
  if (turns <= 0) return []
  return messages
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .slice(-turns * 2)
    .map((m) => {
      const content = m.content.length > chars ? `${m.content.slice(0, chars)}…` : m.content
      return { role: m.role as 'user' | 'assistant', content: m.from_operator ? `(${OPERATOR_MARK}) ${content}` : content }
    })
}

/** How a support person's message is marked in the bot's context. */
export const OPERATOR_MARK = 'support team member'

/** The history a follow-up question is read against (none for a session this turn created). */
export async function loadHistory(
  repo: Pick<ChatRepo, 'recentMessages'>,
  tenantId: string,
  sessionId: string,
  config: { CHAT_HISTORY_TURNS: number; CHAT_HISTORY_MESSAGE_CHARS: number },
  dryRun?: { history: HistoryTurn[] },
): Promise<HistoryTurn[]> {
  if (dryRun) return historyTurns(dryRun.history, config.CHAT_HISTORY_TURNS, config.CHAT_HISTORY_MESSAGE_CHARS)
  const messages = await repo.recentMessages(tenantId, sessionId, config.CHAT_HISTORY_TURNS * 2)
  return historyTurns(messages, config.CHAT_HISTORY_TURNS, config.CHAT_HISTORY_MESSAGE_CHARS)
}
