import { randomUUID } from 'node:crypto'
import { notFound } from '../../lib/errors.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { BotRow } from '../bots/bots.service.js'
import type { HandOffPort } from '../escalations/handoff.js'
import type { PrivacyRepo } from '../tenants/privacy/privacy.repo.js'
import type { IdentityClaims } from '../tenants/identity-token.fns.js'
import { localeLanguage, visitorLanguage } from '../shared/language.js'
import { piiEvents, sumCounts } from '../shared/pii-events.js'
import { readIdentity } from '../shared/identity.js'
import { redactMessage } from '../shared/redaction.js'
import { actionText } from './stages/action-texts.js'
import type { ChatRepo } from './chat.repo.js'
import { conversationEnded, preview, transcriptOf } from './stages/10-persist.js'
import type { TurnDeps } from './turn.context.js'
import { runTurn } from './turn.js'

export interface NewSessionInput {
  tenantId: string
  botId: string
  channel: 'api' | 'widget' | 'email'
  mode: 'identified' | 'anonymous'
  identity?: IdentityClaims | null
  locale?: string | null
}

export type EscalateTrigger = 'user_request' | 'answer_rejected' | 'llm_unavailable'

export interface EscalateInput {
  trigger?: EscalateTrigger | string
  user_note?: string | null
  failure_type?: string | null
  original_user_message?: string | null
}

export interface ChatServiceDeps extends TurnDeps {
  handOff: Pick<HandOffPort, 'open' | 'lock' | 'plan' | 'onAwaiting' | 'latestTicketNumber'>
  /** The PII audit trail (events of a ticket's transcript; a turn's own go in with the turn). */
  privacy: Pick<PrivacyRepo, 'insertEvents'>
  bots: Pick<BotsRepo, 'findDefault' | 'findTenantBotByPublicId'>
}

/** Conversations: the bot a turn talks to, sessions, their history, the turn itself (turn.ts) and a manual hand-off. */
export function createChatService(deps: ChatServiceDeps) {
  const { clock, cipher, repo } = deps
  return {
    runTurn: (input: Parameters<typeof runTurn>[1]) => runTurn(deps, input),

    /** The bot a server-to-server turn talks to: the named one (this tenant's, active) or the default. */
    async resolveBot(tenantId: string, publicId?: string | null): Promise<BotRow> {
      const id = publicId?.trim()
      const bot = id ? await deps.bots.findTenantBotByPublicId(tenantId, id) : await deps.bots.findDefault(tenantId)
      if (!bot || !bot.is_active) throw notFound('Bot not found')
      return bot
    },

    async createSession(input: NewSessionInput): Promise<{ id: string }> {
      const { session: s } = await repo.insertSession(input.tenantId, {
        botId: input.botId,
        channel: input.channel,
        mode: input.mode,
        identityEnc: input.identity ? cipher.encrypt(JSON.stringify(input.identity)) : null,
        locale: input.locale?.slice(0, 35) ?? null,
        now: clock.now(),
      })
      return { id: s.id }
    },

    async getSession(tenantId: string, sessionId: string) {
      const s = await repo.findSession(tenantId, sessionId)
      if (!s) return null
      return { ...s, ticket_number: await deps.handOff.latestTicketNumber(tenantId, sessionId) }
    },

    async history(tenantId: string, sessionId: string) {
      const s = await sessionOr404(repo, tenantId, sessionId)
      const [messages, ticket, owner] = await Promise.all([
        repo.sessionMessages(tenantId, sessionId),
        deps.handOff.latestTicketNumber(tenantId, sessionId),
        repo.ownerOf(tenantId, sessionId),
      ])
      return {
        session_id: s.id,
        messages: messages.map((m) => ({
          id: m.id,
          role: m.role,
          content: m.content,
          created_at: m.created_at,
          from_operator: m.from_operator,
          author_name: m.from_operator ? m.author_name : null,
        })),
        chat_ended: s.owner !== 'bot',
        ticket_number: ticket,
        owner: owner?.owner ?? s.owner,
        assignee_name: owner?.assignee_name ?? null,
        language: s.language ?? null,
      }
    },

    escalate: (tenantId: string, sessionId: string, input: EscalateInput) => escalateSession(deps, tenantId, sessionId, input),

    confirmAction: (tenantId: string, input: ConfirmInput) => confirmAction(deps, tenantId, input),
  }
}

export type ChatService = ReturnType<typeof createChatService>

async function sessionOr404(repo: Pick<ChatRepo, 'findSession'>, tenantId: string, sessionId: string) {
  const s = await repo.findSession(tenantId, sessionId)
  if (!s) throw notFound('Session not found')
  return s
}

export interface ConfirmInput {
  sessionId: string
  callId: string
  approve: boolean
  /** the widget's bot: the session must be its own */
  botId?: string
}

/**
 * The visitor's answer to a write action the bot asked about (actions port): the call runs at most once, with
 * the session's verified identity; what came of it is said in the conversation. A replay (a double click, a
 * second approval) runs nothing and says nothing new.
 */
async function confirmAction(deps: ChatServiceDeps, tenantId: string, input: ConfirmInput) {
  const { repo, clock } = deps
  const session = await sessionOr404(repo, tenantId, input.sessionId)
  if (input.botId && session.bot_id !== input.botId) throw notFound('Session not found')
  const identity = readIdentity(session, deps.cipher) as Record<string, unknown> | null
  const out = deps.actions ? await deps.actions.confirm(tenantId, { sessionId: session.id, callId: input.callId, approve: input.approve, identity }) : null
  if (!out) throw notFound('Action call not found')
  if (!out.fresh) return { status: out.status }
  const language = session.language ?? localeLanguage(session.locale) ?? (session.last_question ? visitorLanguage(session.last_question, null) : 'en')
  const text =
    out.status === 'ok'
      ? actionText('done', language, out.summary)
      : out.status === 'cancelled'
        ? actionText('cancelled', language)
        : actionText('failed', language)
  const now = clock.now()
  await deps.db.transaction().execute(async (trx) => {
    const said = {
      id: randomUUID(),
      sessionId: session.id,
      role: 'assistant' as const,
      content: text,
      debug: { action_call: input.callId, status: out.status },
      createdAt: now,
    }
    await repo.insertMessages(tenantId, [said], trx)
    await repo.touchSession(tenantId, session.id, { addMessages: 1, lastAnswerPreview: preview(text), now }, trx)
  })
  return { status: out.status, text }
}

const SAY: Record<EscalateTrigger, 'manual' | 'answer_rejected' | 'llm_unavailable'> = {
  user_request: 'manual',
  answer_rejected: 'answer_rejected',
  llm_unavailable: 'llm_unavailable',
}

/**
 * A hand-off the visitor (or the integrating backend) asks for: the escalations module opens a ticket (or
 * adds to the open one) and words the message; the chat tells the visitor in the chat and closes it.
 */
async function escalateSession(deps: ChatServiceDeps, tenantId: string, sessionId: string, input: EscalateInput) {
  const { clock, cipher, repo } = deps
  const session = await sessionOr404(repo, tenantId, sessionId)
  const trigger: EscalateTrigger = input.trigger === 'answer_rejected' || input.trigger === 'llm_unavailable' ? input.trigger : 'user_request'
  const optional = (await deps.tenantSettings(tenantId))?.pii_optional_types ?? []
  const original = input.original_user_message?.trim() ? redactMessage(input.original_user_message.trim(), optional, cipher) : null
  const note = input.user_note?.trim() ? redactMessage(input.user_note.trim(), optional, cipher) : null
  const language = session.language ?? localeLanguage(session.locale) ?? (session.last_question ? visitorLanguage(session.last_question, null) : 'en')
  const now = clock.now()
  const result = await deps.db.transaction().execute(async (trx) => {
    const locked = await repo.lockSession(tenantId, sessionId, trx)
    const transcript = await transcriptOf(repo, tenantId, sessionId, trx)
    const lastUser = [...transcript].reverse().find((m) => m.role === 'user')
    const ticket = await deps.handOff.open(
      tenantId,
      {
        session,
        locked: locked ?? undefined,
        botId: session.bot_id,
        trigger,
        // a visitor who asked for a human before asking anything: their note says what it is about
        primaryQuestion: original?.text ?? lastUser?.content ?? session.last_question ?? note?.text ?? '(no question)',
        primaryQuestionOriginalEnc: original?.originalEnc ?? null,
        transcript,
        userNote: note?.text ?? null,
        evidence: input.failure_type ? [{ failure_type: String(input.failure_type).slice(0, 200) }] : [],
        language,
        say: SAY[trigger],
        followUp: null,
        awaitEmail: true,
      },
      trx,
    )
    const message = ticket.text
    const said = { id: randomUUID(), sessionId, role: 'assistant' as const, content: message, debug: { escalation: trigger }, createdAt: now }
    await repo.insertMessages(tenantId, [said], trx)
    // the conversation is the team's now (handOff.open moved its owner); the chat stays open for the visitor's messages
    await repo.touchSession(tenantId, sessionId, { addMessages: 1, lastAnswerPreview: preview(message), now }, trx)
    const counts = sumCounts([original?.counts, note?.counts])
    await deps.privacy.insertEvents(tenantId, piiEvents(counts, { action: 'redacted', direction: 'ticket', sessionId, ticketId: ticket.ticketId }), now, trx)
    await repo.markLastQuestionEscalated(tenantId, sessionId, trigger, trx)
    if (!session.chat_ended) await deps.events?.emit(tenantId, conversationEnded(session, 'handed_off'), trx)
    return { message, ticket_number: ticket.ticketNumber, created: ticket.created, owner: ticket.owner }
  })
  return {
    message: result.message,
    ticket_number: result.ticket_number,
    chat_ended: result.owner !== 'bot',
    delivered_to_operator: true,
    ticket_created: result.created,
    owner: result.owner,
  }
}
