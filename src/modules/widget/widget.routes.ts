import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { describeError } from '../../http/errors.js'
import { rateLimits } from '../../http/rate-limit.js'
import { ErrorBody, RateLimitBody, Uuid, ValidationErrorBody } from '../../http/schemas.js'
import { openSse } from '../../http/sse.js'
import { AppError } from '../../lib/errors.js'
import { redisHealth } from '../health/health.routes.js'
import { LlmUnavailableError } from '../llm/llm.js'
import { asset, renderLoader, widgetBundles, type Asset } from './widget.assets.js'
import type { WidgetAccess } from './widget.cors.js'
import { widgetBundleUrl } from './widget.fns.js'
import {
  ChatBody,
  ChatQuery,
  ConfigQuery,
  EventsQuery,
  HistoryResponse,
  ReadBody,
  ReadResponse,
  SessionInitBody,
  SessionInitResponse,
  SessionQuery,
  TypingBody,
  WidgetConfigResponse,
  WidgetEscalateBody,
  WidgetEscalateResponse,
  WidgetHealthResponse,
} from './widget.schemas.js'
import type { TurnEvent, WidgetService } from './widget.service.js'

export interface WidgetRouteOptions {
  /** PUBLIC_BASE_URL: the API address written into the loader ('' = the loader's own origin). */
  publicBaseUrl: string
  /** WIDGET_LOADER_URL: where the loader fetches widget.js ('' = this service). */
  loaderUrl: string
  heartbeatMs: number
}

/** The error frame of a turn that failed after the stream opened. Only our own messages reach the visitor. */
function errorFrame(err: unknown): { type: 'error'; code: string; message: string } {
  if (err instanceof AppError) return { type: 'error', code: err.code, message: err.message }
  if (err instanceof LlmUnavailableError) {
    return { type: 'error', code: 'llm_unavailable', message: 'The assistant is temporarily unavailable. Please try again in a moment.' }
  }
  return { type: 'error', code: 'internal_error', message: 'Something went wrong while answering. Please try again.' }
}

function sendAsset(req: FastifyRequest, reply: FastifyReply, a: Asset, cacheControl: string) {
  reply
    .header('content-type', 'text/javascript; charset=utf-8')
    .header('cache-control', cacheControl)
    .header('etag', a.etag)
    .header('vary', 'Accept-Encoding')
    .header('x-content-type-options', 'nosniff')
    // Host pages with Cross-Origin-Embedder-Policy may still load the script.
    .header('cross-origin-resource-policy', 'cross-origin')
  if (req.headers['if-none-match'] === a.etag) return reply.code(304).send()
  if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(a.gzip)
  return reply.send(a.body)
}

/** /embed.js is one of the interface's routes, so the OpenAPI document describes it (the versioned UI bundle it loads is not). */
const loaderDoc = {
  summary: 'The widget loader script',
  description:
    'A static script a tenant embeds with `<script src=".../embed.js" data-bot-id="ch_..." async></script>`. It loads the versioned widget bundle and ' +
    'talks to /widget/*. Cached for 5 minutes, with an ETag (304 when unchanged); gzip when accepted. Optional attributes: data-position (right or left), data-color, data-locale, data-mode (bubble or ' +
    'inline) with data-target (a CSS selector).',
  response: {
    200: { description: 'The loader (text/javascript)', content: { 'text/javascript': { schema: { type: 'string' } } } },
    304: { description: 'Not modified (If-None-Match matched the ETag)', type: 'null' },
  },
}

export const widgetRoutes =
  (deps: { widget: WidgetService; access: WidgetAccess; redis: Redis | null; options: WidgetRouteOptions }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { widget, access, options } = deps
    const tags = ['widget']
    // 422 is either a validation error (detail list) or the contract's coded message_required / message_too_long.
    const errors = { 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: Type.Union([ValidationErrorBody, ErrorBody]), 429: RateLimitBody }

    /** The body is optional in the interface: an absent one validates as `{}` (then the service's coded errors apply). */
    const optionalBody = async (req: FastifyRequest) => {
      if (req.body === undefined || req.body === null) req.body = {}
    }

    /** The active bot named by the request, refused when the calling page's origin is not allowed. */
    async function botFor(req: FastifyRequest, reply: FastifyReply, publicId: string) {
      const bot = widget.activeBot(await access.lookup(req, publicId))
      access.assertOrigin(req, reply, bot)
      return bot
    }

    // --- static browser code -------------------------------------------------------------------------
    let assets: Promise<{ embed: Asset; widget: Asset; version: string }> | null = null
    const loadAssets = () => {
      assets ??= widgetBundles().then((b) => {
        const ui = asset(b.widget)
        const version = ui.etag.slice(1, 13)
        const loader = renderLoader(b.embed, {
          apiBase: safeForJsString(options.publicBaseUrl),
          widgetUrl: safeForJsString(widgetBundleUrl(options.loaderUrl, version)),
        })
        return { embed: asset(loader), widget: ui, version }
      })
      assets.catch(() => (assets = null))
      return assets
    }
    // Warm up at startup (built in memory when there is no current dist build); requests wait for it.
    loadAssets().catch((err) => app.log.error({ err: describeError(err) }, 'widget bundles unavailable'))

    app.get('/embed.js', { schema: { tags, operationId: 'widgetLoader', ...loaderDoc } }, async (req, reply) => {
      const a = await loadAssets()
      return sendAsset(req, reply, a.embed, 'public, max-age=300')
    })

    app.get('/widget.js', { schema: { tags, operationId: 'widgetBundle', hide: true } }, async (req, reply) => {
      const a = await loadAssets()
      const versioned = (req.query as { v?: string }).v === a.version
      return sendAsset(req, reply, a.widget, versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=300')
    })

    // --- public API ----------------------------------------------------------------------------------
    app.get('/widget/health', { logLevel: 'warn', schema: { tags, operationId: 'widgetHealth', response: { 200: WidgetHealthResponse } } }, async () => ({
      status: 'ok',
      redis: await redisHealth(deps.redis),
    }))

    app.get(
      '/widget/config',
      {
        config: { rateLimit: rateLimits.widgetConfig },
        schema: { tags, operationId: 'widgetConfig', querystring: ConfigQuery, response: { 200: WidgetConfigResponse, ...errors } },
      },
      async (req, reply) => widget.config(await botFor(req, reply, req.query.bot_id), req.query.locale),
    )

    app.post(
      '/widget/session/init',
      {
        config: { rateLimit: rateLimits.widgetSessionInit },
        schema: { tags, operationId: 'widgetSessionInit', body: SessionInitBody, response: { 200: SessionInitResponse, ...errors } },
      },
      async (req, reply) => widget.initSession(await botFor(req, reply, req.body.bot_id), req.body),
    )

    app.post(
      '/widget/chat',
      {
        bodyLimit: 64 * 1024,
        preValidation: optionalBody,
        config: { rateLimit: rateLimits.widgetChat },
        schema: {
          tags,
          operationId: 'widgetChat',
          description: 'Answers as text/event-stream: status, chunk, then exactly one done or error frame.',
          querystring: ChatQuery,
          body: ChatBody,
          response: errors,
        },
      },
      async (req, reply) => {
        const bot = await botFor(req, reply, req.query.bot_id)
        const turn = await widget.prepareTurn(bot, {
          sessionId: req.query.session_id,
          message: req.body.message,
          locale: req.query.locale,
          language: req.body.language,
          attachmentIds: req.body.attachment_ids,
        })

        const sse = openSse(req, reply, { heartbeatMs: options.heartbeatMs })
        sse.send({ type: 'status', stage: 'thinking' })
        let lastStage = 'thinking'
        const onEvent = (e: TurnEvent) => {
          if (e.type === 'status') {
            if (e.stage === lastStage) return
            lastStage = e.stage
          }
          sse.send(e)
        }
        try {
          const r = await widget.runTurn(bot, turn, onEvent, sse.signal)
          // a person has the conversation: the message reached them, nobody answers here
          if (r.delivered) sse.send({ type: 'delivered', message_id: r.message_id })
          sse.send({
            type: 'done',
            text: r.text,
            session_id: r.session_id,
            message_id: r.message_id,
            chat_ended: r.chat_ended,
            owner: r.owner,
            sources: r.sources ?? [],
            ...(r.ticket_number ? { ticket_number: r.ticket_number } : {}),
            ...(r.language ? { language: r.language } : {}),
          })
        } catch (err) {
          if (!sse.signal.aborted) {
            if (!(err instanceof AppError)) req.log.warn({ err: describeError(err) }, 'widget turn failed')
            sse.send(errorFrame(err))
          }
        } finally {
          sse.close()
        }
      },
    )

    app.get(
      '/widget/history',
      {
        config: { rateLimit: rateLimits.widgetHistory },
        schema: { tags, operationId: 'widgetHistory', querystring: SessionQuery, response: { 200: HistoryResponse, ...errors } },
      },
      async (req, reply) => widget.history(await botFor(req, reply, req.query.bot_id), req.query.session_id),
    )

    app.post(
      '/widget/escalate',
      {
        preValidation: optionalBody,
        config: { rateLimit: rateLimits.widgetEscalate },
        schema: {
          tags,
          operationId: 'widgetEscalate',
          querystring: SessionQuery,
          body: WidgetEscalateBody,
          response: { 200: WidgetEscalateResponse, ...errors },
        },
      },
      async (req, reply) => widget.escalate(await botFor(req, reply, req.query.bot_id), req.query.session_id, req.body),
    )

    app.get(
      '/widget/events',
      {
        config: { rateLimit: rateLimits.liveEvents },
        schema: {
          tags,
          operationId: 'widgetEvents',
          description:
            "text/event-stream of the visitor's conversation: message (an operator's, with author_name), owner ({owner, assignee_name}), typing ({from, on}, lapses after 30 s), read. Each frame has `id: <seq>` (per session); reconnecting with Last-Event-ID (or ?after=) replays every later event once, in order. A `: ping` comment every 15 s. Internal notes never appear.",
          querystring: EventsQuery,
          response: { 200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, ...errors },
        },
      },
      async (req, reply) => widget.events(await botFor(req, reply, req.query.bot_id), req.query.session_id, req, reply, req.query.after),
    )

    app.post(
      '/widget/typing',
      {
        config: { rateLimit: rateLimits.typing },
        schema: { tags, operationId: 'widgetTyping', querystring: SessionQuery, body: TypingBody, response: { 204: Type.Null(), ...errors } },
      },
      async (req, reply) => {
        await widget.typing(await botFor(req, reply, req.query.bot_id), req.query.session_id, req.body.on)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/widget/messages/read',
      {
        // Receipts come with every message the visitor sees; they share the history budget.
        config: { rateLimit: { ...rateLimits.widgetHistory, max: 60 } },
        schema: { tags, operationId: 'widgetMarkRead', querystring: SessionQuery, body: ReadBody, response: { 200: ReadResponse, ...errors } },
      },
      async (req, reply) => widget.markRead(await botFor(req, reply, req.query.bot_id), req.query.session_id, req.body.message_id),
    )

    app.post(
      '/widget/actions/:call_id/confirm',
      {
        config: { rateLimit: rateLimits.widgetChat },
        schema: {
          tags,
          operationId: 'widgetConfirmAction',
          description:
            'The visitor approves (or cancels) the write action of a confirm frame. The call runs at most once: a second click, a replay or an approval after a cancel runs nothing and answers the call’s status.',
          params: Type.Object({ call_id: Uuid }),
          querystring: SessionQuery,
          body: Type.Object({ approve: Type.Boolean() }),
          response: {
            200: Type.Object({ status: Type.String(), text: Type.Optional(Type.String()) }),
            ...errors,
          },
        },
      },
      async (req, reply) => widget.confirmAction(await botFor(req, reply, req.query.bot_id), req.query.session_id, req.params.call_id, req.body.approve),
    )
  }

/** Values written into the loader's string literals: plain URL characters only. */
function safeForJsString(v: string): string {
  return /^[A-Za-z0-9:/._~%?&=+#@!$,;-]*$/.test(v) ? v : ''
}
