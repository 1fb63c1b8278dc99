import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../../context.js'
import type { BotRow } from '../bots/bots.service.js'
import { createWidgetAccess } from './widget.cors.js'
import type { WidgetRepo } from './widget.repo.js'
import { widgetRoutes } from './widget.routes.js'
import { createWidgetService } from './widget.service.js'

type WidgetDeps = Parameters<typeof createWidgetService>[0]

/**
 * The public widget endpoints (bot public id, no credentials) over the chat service, and the per-bot CORS
 * decision the app applies to them. The repository is the caller's (the tenants module counts sessions).
 */
export function wireWidget(ctx: AppContext, deps: { repo: WidgetRepo } & Pick<WidgetDeps, 'bots' | 'tenants' | 'chat' | 'live' | 'languages' | 'attachments'>) {
  const { config } = ctx
  const service = createWidgetService({ clock: ctx.clock, ...deps })
  const access = createWidgetAccess(service.findBot)
  const options = { publicBaseUrl: config.PUBLIC_BASE_URL, loaderUrl: config.WIDGET_LOADER_URL, heartbeatMs: config.WIDGET_SSE_HEARTBEAT_MS }
  // what the attachment routes ask of a visitor's request: the bot it names (origin checked) and that bot's session
  const visitor = {
    async botFor(req: FastifyRequest, reply: FastifyReply, publicId: string) {
      const bot = service.activeBot(await access.lookup(req, publicId))
      access.assertOrigin(req, reply, bot)
      return bot
    },
    session: (bot: BotRow, sessionId: string) => service.visitorSession(bot, sessionId),
  }
  return { service, visitor, corsOptions: access.corsOptions, routes: widgetRoutes({ widget: service, access, redis: ctx.redis, options }) }
}
