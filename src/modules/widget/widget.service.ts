import type { AttachmentsPort } from '../attachments/attachments.port.js'
import type { Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../../lib/clock.js'
import { AppError, badRequest, forbidden, notFound } from '../../lib/errors.js'
import type { BotRow } from '../bots/bots.service.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { NewSessionInput } from '../chat/chat.service.js'
import type { TurnEvent, TurnInput } from '../chat/turn.context.js'
import type { LanguagesPort } from '../languages/languages.port.js'
import { verifyIdentityToken, type IdentityClaims } from '../tenants/identity-token.fns.js'
import type { TenantsService } from '../tenants/tenants.service.js'
import { checkMessage } from './widget.fns.js'
import { labelsFor, resolveLocale, SUPPORTED_LOCALES } from './widget.i18n.js'
import type { WidgetRepo } from './widget.repo.js'
import type { SessionInitBody, WidgetEscalateBody } from './widget.schemas.js'

export type { TurnEvent }

/** A language chosen in the widget's menu, as the catalogue's code; an unknown one is ignored (the browser's locale stays). */
const chosenLanguage = (l: string | undefined): string | null => {
  if (!l) return null
  const code = resolveLocale(l)
  return code === 'en' && !/^en\b/i.test(l.trim()) ? null : code
}

export interface TurnResult {
  text: string
  session_id: string
  message_id: string
  chat_ended: boolean
  ticket_number?: string | null
  sources: { title: string; url: string }[]
  owner: string
  /** The visitor's message went to the person who has the conversation (message_id is the visitor's). */
  delivered?: boolean
  /** The session's language once known (#40): the widget shows its texts in it. */
  language?: string
}

/** The slice of the chat service (src/modules/chat) the widget uses: the answer pipeline and its sessions. */
export interface ChatPort {
  runTurn(input: TurnInput): Promise<TurnResult>
  createSession(input: NewSessionInput): Promise<{ id: string }>
  history(
    tenantId: string,
    sessionId: string,
  ): Promise<{
    messages: { id: string; role: string; content: string; created_at: Date | string; from_operator?: boolean; author_name?: string | null }[]
    chat_ended: boolean
    ticket_number?: string | null
    owner: 'bot' | 'queue' | 'human' | 'closed'
    assignee_name: string | null
    /** the session's language once known (#40) */
    language?: string | null
  }>
  escalate(
    tenantId: string,
    sessionId: string,
    input: { trigger: string; user_note?: string | null },
  ): Promise<{ message: string; ticket_number: string } & Record<string, unknown>>
  confirmAction(tenantId: string, input: { sessionId: string; callId: string; approve: boolean; botId?: string }): Promise<{ status: string; text?: string }>
}

/** The slice of the live module (src/modules/live) the widget uses: the visitor's event stream, typing, read receipts. */
export interface WidgetLivePort {
  sessionStream(req: FastifyRequest, reply: FastifyReply, tenantId: string, sessionId: string, after: string | undefined): Promise<void>
  visitorTyping(tenantId: string, sessionId: string, on: boolean): Promise<void>
  visitorRead(tenantId: string, sessionId: string, messageId: string): Promise<void>
  availability(tenantId: string, botId: string): Promise<{ online: boolean; reply_eta_s: number | null; next_open_at: string | null }>
}

/** Without the live module nobody answers live. */
const NOBODY = { online: false, reply_eta_s: null, next_open_at: null }

const sessionNotFound = () => new AppError(404, 'session_not_found', 'Session not found', { coded: true })

export function createWidgetService(deps: {
  clock: Clock
  bots: Pick<BotsRepo, 'findByPublicId'>
  tenants: Pick<TenantsService, 'tenantOr404' | 'signingSecrets'>
  chat: ChatPort
  repo: WidgetRepo
  live?: WidgetLivePort
  /** the workspace's languages (#40): the widget's language menu offers its answer languages */
  languages?: Pick<LanguagesPort, 'settingsFor'>
  /** the files the visitor sent, listed under their messages in the history */
  attachments?: Pick<AttachmentsPort, 'byMessages'>
}) {
  const { clock, bots, tenants, chat, repo } = deps

  /** The session, if it belongs to this bot (and so to its tenant); otherwise the contract's coded 404. */
  async function botSession(bot: BotRow, sessionId: string) {
    const session = await repo.findBotSession(bot.tenant_id, bot.id, sessionId)
    if (!session) throw sessionNotFound()
    return session
  }

  /** A tenant that may answer: active (else 403) and with a language-model key (else 400). One read, no decryption. */
  async function answeringTenant(tenantId: string): Promise<void> {
    const tenant = await tenants.tenantOr404(tenantId)
    if (!tenant.is_active) throw forbidden('Tenant is inactive', 'tenant_inactive')
    if (!tenant.llm_key_enc) throw badRequest('The bot has no language-model API key configured', 'llm_key_missing')
  }

  /** The widget's language menu: the workspace's answer languages (all when it names none) that have the widget's texts. */
  async function pickable(tenantId: string): Promise<string[]> {
    const settings = deps.languages ? await deps.languages.settingsFor(tenantId).catch(() => null) : null
    const answer = settings?.answer ?? []
    return answer.length ? SUPPORTED_LOCALES.filter((l) => answer.includes(l)) : [...SUPPORTED_LOCALES]
  }

  return {
    /** Unknown and deactivated bots look the same to the public: 404. */
    async findBot(publicId: string): Promise<BotRow | undefined> {
      return bots.findByPublicId(publicId)
    },

    activeBot(bot: BotRow | undefined): BotRow {
      if (!bot || !bot.is_active) throw notFound('Bot not found')
      return bot
    },

    async config(bot: BotRow, locale: string | undefined) {
      const l = labelsFor(locale)
      const [availability, languages] = await Promise.all([deps.live ? deps.live.availability(bot.tenant_id, bot.id) : NOBODY, pickable(bot.tenant_id)])
      return {
        availability,
        bot_id: bot.public_id,
        name: bot.name,
        link_safety_enabled: bot.link_safety_enabled,
        allowed_domains: bot.allowed_domains,
        link_safety_labels: l.link,
        locale: l.locale,
        labels: l.ui,
        languages,
      }
    },

    async initSession(bot: BotRow, body: Static<typeof SessionInitBody>) {
      await answeringTenant(bot.tenant_id)
      let identity: IdentityClaims | null = null
      if (body.identity_token) {
        const secrets = await tenants.signingSecrets(bot.tenant_id)
        identity = secrets.length ? verifyIdentityToken(body.identity_token, secrets, Math.floor(clock.now().getTime() / 1000)) : null
      }
      const mode = identity ? ('identified' as const) : ('anonymous' as const)
      const session = await chat.createSession({
        tenantId: bot.tenant_id,
        botId: bot.id,
        channel: 'widget',
        mode,
        identity,
        locale: body.locale ?? identity?.locale ?? null,
      })
      return { session_id: session.id, mode }
    },

    /**
     * Everything that can fail before the answer stream opens, so it fails as a plain HTTP error: the
     * message, the session (this bot's, still open), the tenant. Kept to two reads so the stream opens
     * fast; a turn without a session gets its (anonymous) session from the pipeline, after the stream
     * opened, and learns its id from the done frame.
     */
    async prepareTurn(bot: BotRow, input: { sessionId?: string; message?: string; locale?: string; language?: string; attachmentIds?: string[] }) {
      // a message may be files alone (they need the session they were uploaded to)
      const files = input.attachmentIds?.length && input.sessionId ? input.attachmentIds : []
      const message = files.length && !input.message?.trim() ? '' : checkMessage(input.message)
      // Both reads at once; the session's verdict wins when both fail, so the answer does not depend on timing.
      const [sessionR, tenantR] = await Promise.allSettled([input.sessionId ? botSession(bot, input.sessionId) : null, answeringTenant(bot.tenant_id)])
      if (sessionR.status === 'rejected') throw sessionR.reason
      if (tenantR.status === 'rejected') throw tenantR.reason
      const session = sessionR.value
      // only a closed conversation refuses a message; one a person owns takes it for them
      if (session && (session.owner === 'closed' || session.chat_ended)) {
        throw new AppError(409, 'session_closed', 'This chat has ended; start a new session', { coded: true })
      }
      return { sessionId: input.sessionId ?? null, message, locale: input.locale ?? null, language: chosenLanguage(input.language), attachmentIds: files }
    },

    runTurn(
      bot: BotRow,
      turn: { sessionId: string | null; message: string; locale: string | null; language?: string | null; attachmentIds?: string[] },
      onEvent: (e: TurnEvent) => void,
      signal: AbortSignal,
    ) {
      return chat.runTurn({
        tenantId: bot.tenant_id,
        bot,
        sessionId: turn.sessionId,
        message: turn.message,
        locale: turn.locale,
        language: turn.language ?? null,
        channel: 'widget',
        attachmentIds: turn.attachmentIds,
        signal,
        onEvent,
      })
    },

    async history(bot: BotRow, sessionId: string) {
      await botSession(bot, sessionId)
      const [h, sources] = await Promise.all([chat.history(bot.tenant_id, sessionId), repo.messageSources(bot.tenant_id, sessionId)])
      const files = deps.attachments
        ? await deps.attachments.byMessages(
            bot.tenant_id,
            h.messages.map((m) => m.id),
          )
        : new Map()
      return {
        session_id: sessionId,
        messages: h.messages.map((m) => ({
          id: m.id,
          role: m.role,
          content: m.content,
          created_at: new Date(m.created_at).toISOString(),
          from_operator: m.from_operator ?? false,
          author_name: m.author_name ?? null,
          sources: sources.get(m.id) ?? [],
          attachments: files.get(m.id) ?? [],
        })),
        chat_ended: h.chat_ended,
        ticket_number: h.ticket_number ?? null,
        owner: h.owner,
        assignee_name: h.assignee_name,
        // a reload keeps the conversation's language (#52): the widget's texts and greeting follow it
        language: h.language ?? null,
      }
    },

    async escalate(bot: BotRow, sessionId: string, body: Static<typeof WidgetEscalateBody>) {
      await botSession(bot, sessionId)
      return chat.escalate(bot.tenant_id, sessionId, { trigger: body.trigger ?? 'user_request', user_note: body.user_note?.trim() || null })
    },

    /** The visitor's approval (or not) of a write action the bot asked about; it runs at most once. */
    async confirmAction(bot: BotRow, sessionId: string, callId: string, approve: boolean) {
      await botSession(bot, sessionId)
      return chat.confirmAction(bot.tenant_id, { sessionId, callId, approve, botId: bot.id })
    },

    /** Moves the visitor's read cursor forward; an older receipt is accepted and changes nothing. */
    async markRead(bot: BotRow, sessionId: string, messageId: string) {
      await botSession(bot, sessionId)
      const message = await repo.findSessionMessage(bot.tenant_id, sessionId, messageId)
      if (!message) throw notFound('Message not found')
      const cursor = await repo.advanceReadCursor(bot.tenant_id, sessionId, message)
      // the team sees it at once (only while a person has the conversation)
      if (cursor === message.id) await deps.live?.visitorRead(bot.tenant_id, sessionId, message.id)
      return { session_id: sessionId, read_message_id: cursor ?? message.id }
    },

    sessionStats: (tenantId: string, since: Date) => repo.sessionStats(tenantId, since),

    /** This bot's session, or the contract's 404 (the attachment routes). */
    visitorSession: (bot: BotRow, sessionId: string) => botSession(bot, sessionId),

    /** The visitor's live stream (this bot's session only). */
    async events(bot: BotRow, sessionId: string, req: FastifyRequest, reply: FastifyReply, after: string | undefined) {
      await botSession(bot, sessionId)
      if (!deps.live) throw notFound('Not found')
      await deps.live.sessionStream(req, reply, bot.tenant_id, sessionId, after)
    },

    async typing(bot: BotRow, sessionId: string, on: boolean) {
      await botSession(bot, sessionId)
      await deps.live?.visitorTyping(bot.tenant_id, sessionId, on)
    },
  }
}

export type WidgetService = ReturnType<typeof createWidgetService>
