import { randomUUID } from 'node:crypto'
import AjvCompiler from '@fastify/ajv-compiler'
import cookie from '@fastify/cookie'
import cors from '@fastify/cors'
import rateLimit from '@fastify/rate-limit'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from './context.js'
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/errors.js'
import { registerOpenApi } from './http/openapi.js'
import { createRateLimitStore, rateLimitMessage, waitForRedis } from './http/rate-limit.js'
import { findNul, replaceLoneSurrogates } from './http/input.js'
import { createCsrfCheck } from './http/csrf.js'
import { lazySchemas, type LazySchemas } from './http/lazy-schemas.js'
import { registerMetrics } from './http/metrics.js'
import { ValidationError } from './lib/errors.js'
import { wireModules, type Modules } from './modules/index.js'

export type App = FastifyInstance

/**
 * Query strings, path and headers are text, so their values are coerced to the schema's types ("5" -> 5,
 * a single value -> a one-item array). JSON bodies are typed already: a string where a list or a boolean
 * belongs is a 422, as a client of the interface expects, not silently converted.
 */
function strictBodyValidator() {
  const pool = AjvCompiler()
  return ((externalSchemas: never, options: { customOptions?: Record<string, unknown> } | undefined) => {
    const lax = pool(externalSchemas, options as never)
    const strict = pool(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } } as never)
    return (route: { httpPart?: string }) => (route.httpPart === 'body' ? strict : lax)(route as never)
  }) as never
}

const routeSchemas = new WeakMap<App, LazySchemas>()

/** Compiles every route schema still deferred (src/http/lazy-schemas.ts): a schema that cannot compile throws here. */
export function compileRouteSchemas(app: App): void {
  routeSchemas.get(app)?.compileAll()
}

/**
 * Compiles the deferred route schemas a few at a time between requests once the service answers (a few hundred
 * ms of CPU in all), so a route's first visitor seldom pays its compile; stops when `stopped()` says so.
 */
export function warmRouteSchemas(app: App, stopped: () => boolean): void {
  const schemas = routeSchemas.get(app)
  if (!schemas) return
  const step = () => {
    if (!stopped() && schemas.compileSome(4)) setImmediate(step)
  }
  setImmediate(step)
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Builds the HTTP app on a context. Tests build it too, so nothing here reads the environment or starts
 * background work; the worker is started by server.ts.
 */
export async function buildApp(ctx: AppContext, modules: Modules = wireModules(ctx)): Promise<App> {
  const schemas = lazySchemas(strictBodyValidator())
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    trustProxy: ctx.config.TRUST_PROXY,
    bodyLimit: 1024 * 1024,
    // One access line per request (below: method, url, status, duration, client IP, request id) instead of
    // Fastify's separate "incoming" and "completed" lines.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => {
      const incoming = req.headers['x-request-id']
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID()
    },
    // transport-level refusals in the contract's envelope, never quoting the request (issue 15 item 5)
    frameworkErrors,
    clientErrorHandler,
    ajv: { customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: true, allErrors: false } },
    // compiled at each route's first request, not at boot (src/http/lazy-schemas.ts)
    schemaController: { compilersFactory: { buildValidator: schemas.buildValidator as never, buildSerializer: schemas.buildSerializer as never } },
  }).withTypeProvider<TypeBoxTypeProvider>()
  routeSchemas.set(app, schemas)

  app.decorateRequest('authUser', null)
  app.decorateRequest('tenantId', null)
  app.decorateRequest('apiKeyId', null)
  app.decorateRequest('member', null)
  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id)
  })
  app.addHook('onResponse', async (req, reply) => {
    // Failures are logged where they happen (the error handler); this line is the access log only.
    req.log.info({ method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, ip: req.ip }, 'request')
  })

  // PostgreSQL cannot store U+0000 in text; refuse it as invalid input instead of failing in the database.
  app.addHook('preValidation', async (req) => {
    for (const [part, loc] of [
      [req.params, 'path'],
      [req.query, 'query'],
      [req.body, 'body'],
    ] as const) {
      const at = findNul(part)
      if (at) throw new ValidationError([loc, ...at], 'String must not contain NUL characters', 'string_nul')
      replaceLoneSurrogates(part)
    }
  })

  // Cookie-authenticated writes must come from the dashboard's own origin (or CORS_ORIGINS).
  app.addHook('onRequest', createCsrfCheck(ctx.config.CORS_ORIGINS))

  registerErrorHandling(app)
  registerMetrics(app, ctx)
  await registerOpenApi(app)
  await app.register(cookie)
  // Dashboard CORS comes from CORS_ORIGINS; the widget routes answer CORS per bot (allowed_domains).
  await app.register(cors, {
    delegator: (req, cb) => {
      const url = req.url ?? ''
      if (url.startsWith('/widget/') || url.startsWith('/embed.js')) return cb(null, modules.widgetCors(req))
      cb(null, { origin: ctx.config.CORS_ORIGINS.length ? [...ctx.config.CORS_ORIGINS] : false, credentials: true })
    },
  })
  if (ctx.redis) await waitForRedis(ctx.redis, 2000)
  let warnedRedis = false
  if (ctx.config.RATE_LIMIT_ENABLED)
    await app.register(rateLimit, {
      global: false,
      store: createRateLimitStore(ctx.redis, `${ctx.config.REDIS_PREFIX}rl:`, (err) => {
        if (!warnedRedis) ctx.log.warn({ err: { message: err.message } }, 'rate limits counted in memory: Redis failed')
        warnedRedis = true
      }) as never,
      enableDraftSpec: false,
      errorResponseBuilder: (req, context) => {
        const rl = (req.routeOptions.config as { rateLimit?: { timeWindow?: number } }).rateLimit
        const err = new Error(rateLimitMessage(context.max, Number(rl?.timeWindow ?? 60_000))) as Error & { statusCode: number }
        err.statusCode = 429
        return err
      },
    })

  for (const routes of modules.routes) await app.register(routes)
  return app
}
