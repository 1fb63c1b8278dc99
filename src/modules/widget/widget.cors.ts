import type { FastifyCorsOptions } from '@fastify/cors'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { forbidden } from '../../lib/errors.js'
import type { BotRow } from '../bots/bots.service.js'
import { originAllowed } from './widget.fns.js'

/**
 * Browser access to the public widget routes, decided per bot: a bot with allowed_domains is usable only
 * from pages on those hosts (and their subdomains), a bot without any from every page.
 *
 * Two layers: the CORS headers (so a browser on another site cannot read answers), and a 403 from the
 * route itself when the request carries a foreign Origin (CORS alone would still let the request run,
 * e.g. a simple POST, and spend the tenant's model budget). The bot is looked up once per request and
 * shared by both.
 */
export function createWidgetAccess(findBot: (publicId: string) => Promise<BotRow | undefined>) {
  const perRequest = new WeakMap<FastifyRequest, { publicId: string; bot: Promise<BotRow | undefined> }>()

  function lookup(req: FastifyRequest, publicId: string): Promise<BotRow | undefined> {
    const hit = perRequest.get(req)
    if (hit && hit.publicId === publicId) return hit.bot
    const bot = findBot(publicId)
    perRequest.set(req, { publicId, bot })
    return bot
  }

  return {
    lookup,

    /** @fastify/cors options for one request under /widget/ or /embed.js. */
    corsOptions(req: FastifyRequest): FastifyCorsOptions {
      return {
        origin: (origin: string | undefined, cb: (err: Error | null, allow: boolean) => void) => {
          const botId = (req.query as Record<string, unknown> | undefined)?.bot_id
          // No bot named in the URL (loader, health, session init whose bot is in the body): open here;
          // the route checks the origin once it knows the bot.
          if (!origin || typeof botId !== 'string' || !botId) return cb(null, true)
          lookup(req, botId).then(
            (bot) => cb(null, !bot || originAllowed(origin, bot.allowed_domains)),
            () => cb(null, false),
          )
        },
        methods: ['GET', 'POST'],
        allowedHeaders: ['Content-Type'],
        maxAge: 600,
      }
    },

    /** The route-level refusal: a request from a browser page the bot does not allow gets 403. */
    assertOrigin(req: FastifyRequest, reply: FastifyReply, bot: BotRow): void {
      if (originAllowed(req.headers.origin, bot.allowed_domains) || sameOrigin(req)) return
      reply.removeHeader('access-control-allow-origin')
      throw forbidden('This website is not allowed to use this chat bot', 'origin_not_allowed')
    },
  }
}

/** The service's own pages (the dashboard's bot preview) may always use its bots. */
function sameOrigin(req: FastifyRequest): boolean {
  const origin = req.headers.origin
  if (typeof origin !== 'string') return false
  try {
    return new URL(origin).host === req.host
  } catch {
    return false
  }
}

export type WidgetAccess = ReturnType<typeof createWidgetAccess>
