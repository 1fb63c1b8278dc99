import { createHash } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { apiKeySecurity, bearerSecurity, viewerOf, type Guards } from '../../http/auth.js'
import { rateLimits } from '../../http/rate-limit.js'
import { ErrorBody, RateLimitBody, ValidationErrorBody, commonErrors } from '../../http/schemas.js'
import { unavailable, ValidationError } from '../../lib/errors.js'
import { LlmUnavailableError } from '../llm/llm.js'
import type { ChatLogsService } from './chat-logs.service.js'
import {
  ActionCallParams,
  BadAnswerListResponse,
  ChatHistoryResponse,
  ChatMessageLogResponse,
  ChatRequest,
  ChatSessionListResponse,
  ChatTurnResponse,
  ConfirmActionBody,
  ConfirmActionResponse,
  DeleteOriginalResponse,
  EscalateRequest,
  EscalateResponse,
  LogQuery,
  MessageFeedbackRequest,
  MessageFeedbackResponse,
  MessageParams,
  Page,
  SessionListQuery,
  SessionParams,
} from './chat.schemas.js'
import type { ChatService } from './chat.service.js'
import type { TurnResult } from './turn.context.js'
import { idempotencyKeyOf, type Idempotency } from './idempotency.js'

/** A browser locale hint such as "de-DE"; anything else is ignored rather than refused. */
function browserLocale(header: string | string[] | undefined): string | null {
  const v = (Array.isArray(header) ? header[0] : header)?.trim().split(',')[0]?.split(';')[0]?.trim()
  return v && v.length <= 35 && /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$/.test(v) ? v : null
}

/** The contract's fields, in a fixed order (the bytes are replayed as they are). */
function presentTurn(r: TurnResult) {
  return {
    text: r.text,
    session_id: r.session_id,
    message_id: r.message_id,
    chat_ended: r.chat_ended,
    ...(r.ticket_number ? { ticket_number: r.ticket_number } : {}),
    delivered_to_operator: r.delivered_to_operator,
    source_documents: r.source_documents,
    sources: r.sources,
    tokens_used: r.tokens_used,
    ...(r.pending_action ? { pending_action: r.pending_action } : {}),
    owner: r.owner,
  }
}

const providerDown = () => unavailable('The language-model provider is unavailable; please try again later', 'llm_unavailable')

export const chatRoutes =
  (deps: { guards: Guards; chat: ChatService; logs: ChatLogsService; idempotency: Idempotency }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, chat, logs, idempotency } = deps
    const apiErrors = { ...commonErrors, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: RateLimitBody, 503: ErrorBody }
    // POST /chat's 422 is a validation list or the coded idempotency_key_reused
    const chatErrors = { ...apiErrors, 422: Type.Union([ValidationErrorBody, ErrorBody]) }
    const jwtErrors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }

    app.post(
      '/chat',
      {
        preHandler: guards.apiKey,
        config: { rateLimit: rateLimits.chat },
        schema: {
          tags: ['chat'],
          security: apiKeySecurity,
          operationId: 'chat',
          summary: 'Ask the bot a question (server to server)',
          description:
            'Headers: X-Browser-Locale (optional language hint), Idempotency-Key (optional, at most 128 characters; a replay within 24 h returns the first response; the same key with another question, session or bot is 422 idempotency_key_reused).',
          body: ChatRequest,
          response: { 200: ChatTurnResponse, ...chatErrors },
        },
      },
      async (req, reply) => {
        const tenantId = req.tenantId!
        const question = req.body.question.trim()
        // files alone are a message too, within their session
        const attachmentIds = req.body.session_id ? (req.body.attachment_ids ?? []) : []
        if (!question && !attachmentIds.length) throw new ValidationError(['body', 'question'], 'Question must not be empty', 'string_too_short')
        const key = idempotencyKeyOf(req.headers['idempotency-key'])
        if (key === 'too_long') throw new ValidationError(['header', 'idempotency-key'], 'String should have at most 128 characters', 'string_too_long')
        const locale = browserLocale(req.headers['x-browser-locale'])
        const work = async () => {
          const bot = await chat.resolveBot(tenantId, req.body.bot_public_id)
          try {
            const r = await chat.runTurn({ tenantId, bot, sessionId: req.body.session_id ?? null, message: question, locale, channel: 'api', attachmentIds })
            return JSON.stringify(presentTurn(r))
          } catch (err) {
            if (err instanceof LlmUnavailableError) throw providerDown()
            throw err
          }
        }
        const requestHash = createHash('sha256')
          .update(JSON.stringify([question, req.body.session_id ?? null, req.body.bot_public_id ?? null, ...(attachmentIds.length ? [attachmentIds] : [])]))
          .digest('hex')
        const body = key ? await idempotency.run(tenantId, key, requestHash, work) : await work()
        // the stored bytes themselves, so a replay is identical to the first response
        return reply.type('application/json; charset=utf-8').send(body as never)
      },
    )

    app.post(
      '/chat/:session_id/escalate',
      {
        preHandler: guards.apiKey,
        config: { rateLimit: rateLimits.chat },
        // every field is optional, so a POST without a body escalates with the defaults
        preValidation: async (req) => {
          req.body ??= {}
        },
        schema: {
          tags: ['chat'],
          security: apiKeySecurity,
          operationId: 'escalateChat',
          summary: 'Hand a session over to the support team',
          params: SessionParams,
          body: EscalateRequest,
          response: { 200: EscalateResponse, ...apiErrors },
        },
      },
      async (req) => {
        const r = await chat.escalate(req.tenantId!, req.params.session_id, req.body ?? {})
        return { message: r.message, ticket_number: r.ticket_number, chat_ended: r.chat_ended, delivered_to_operator: r.delivered_to_operator, owner: r.owner }
      },
    )

    app.post(
      '/chat/:session_id/actions/:call_id/confirm',
      {
        preHandler: guards.apiKey,
        config: { rateLimit: rateLimits.chat },
        schema: {
          tags: ['chat'],
          security: apiKeySecurity,
          operationId: 'confirmChatAction',
          summary: 'Approve or cancel a write action the bot asked about',
          description: 'The call runs at most once: a second approval, a replay or an approval after a cancel runs nothing and answers the call’s status.',
          params: ActionCallParams,
          body: ConfirmActionBody,
          response: { 200: ConfirmActionResponse, ...apiErrors },
        },
      },
      async (req) => chat.confirmAction(req.tenantId!, { sessionId: req.params.session_id, callId: req.params.call_id, approve: req.body.approve }),
    )

    const base = { tags: ['chat logs'], security: bearerSecurity }

    app.get(
      '/chat/sessions',
      {
        preHandler: guards.can('tickets'),
        schema: { ...base, operationId: 'listChatSessions', querystring: SessionListQuery, response: { 200: ChatSessionListResponse, ...jwtErrors } },
      },
      async (req) => logs.listSessions(req.tenantId!, req.query, viewerOf(req)),
    )

    app.get(
      '/chat/logs/session/:session_id',
      {
        preHandler: guards.can('tickets'),
        schema: {
          ...base,
          operationId: 'getChatSessionLog',
          params: SessionParams,
          querystring: LogQuery,
          response: { 200: ChatMessageLogResponse, ...jwtErrors },
        },
      },
      async (req) => logs.sessionLog(req.tenantId!, req.params.session_id, { includeOriginal: req.query.include_original }, viewerOf(req)),
    )

    app.post(
      '/chat/logs/session/:session_id/delete-original',
      {
        preHandler: guards.can('tickets'),
        schema: { ...base, operationId: 'deleteChatSessionOriginals', params: SessionParams, response: { 200: DeleteOriginalResponse, ...jwtErrors } },
      },
      async (req) => logs.deleteOriginals(req.tenantId!, req.params.session_id, viewerOf(req)),
    )

    app.post(
      '/chat/messages/:message_id/feedback',
      {
        preHandler: guards.can('tickets'),
        schema: {
          ...base,
          operationId: 'chatMessageFeedback',
          params: MessageParams,
          body: MessageFeedbackRequest,
          response: { 200: MessageFeedbackResponse, 400: ErrorBody, ...jwtErrors },
        },
      },
      async (req) => logs.feedback(req.tenantId!, req.params.message_id, req.body, viewerOf(req)),
    )

    app.get(
      '/chat/bad-answers',
      {
        preHandler: guards.can('tickets'),
        schema: { ...base, operationId: 'listBadAnswers', querystring: Page(100, 50), response: { 200: BadAnswerListResponse, ...jwtErrors } },
      },
      async (req) => logs.badAnswers(req.tenantId!, req.query, viewerOf(req)),
    )

    app.get(
      '/chat/history/:session_id',
      {
        preHandler: guards.can('tickets'),
        schema: { ...base, operationId: 'getChatHistory', params: SessionParams, response: { 200: ChatHistoryResponse, ...jwtErrors } },
      },
      async (req) => logs.history(req.tenantId!, req.params.session_id, viewerOf(req)),
    )
  }
