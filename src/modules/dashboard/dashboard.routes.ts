import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { dashboardBundle, type DashboardFile } from './dashboard.assets.js'
import { previewPage } from './dashboard.fns.js'

/**
 * The app's pages allow only same-origin scripts (no inline script, no eval). Styles may be inline because
 * the chat widget in the preview styles itself with a <style> element; nothing user-written becomes a style.
 * connect-src 'self': the dashboard talks only to this service.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ')

function send(req: FastifyRequest, reply: FastifyReply, f: DashboardFile, cacheControl: string) {
  reply
    .header('content-type', f.type)
    .header('cache-control', cacheControl)
    .header('etag', f.etag)
    .header('vary', 'Accept-Encoding')
    .header('x-content-type-options', 'nosniff')
  if (req.headers['if-none-match'] === f.etag) return reply.code(304).send()
  if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(f.gzip)
  return reply.send(f.body)
}

function pageHeaders(reply: FastifyReply) {
  return reply
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-frame-options', 'SAMEORIGIN')
    .header('referrer-policy', 'same-origin')
    .header('cross-origin-opener-policy', 'same-origin')
}

const PreviewQuery = Type.Object({
  bot: Type.String({ pattern: '^ch_[A-Za-z0-9_-]{1,64}$' }),
  locale: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$' })),
})
const AssetParams = Type.Object({ '*': Type.String({ maxLength: 200 }) })

/**
 * The operator dashboard, served by the service itself: `/` leads to `/app/`; every path under `/app/`
 * answers the app's page (the browser router draws the screen), as do `/verify`, `/reset-password` and
 * `/accept-invitation`, the paths the verification, reset and invitation mails link to. Hashed assets are cached for a year.
 */
export const dashboardRoutes = (): FastifyPluginAsyncTypebox => async (app) => {
  const hide = { hide: true }
  const index = async (_req: FastifyRequest, reply: FastifyReply) => {
    const b = await dashboardBundle()
    pageHeaders(reply)
    return send(_req, reply, b.index, 'no-cache')
  }

  app.get('/', { schema: hide }, async (_req, reply) => reply.redirect('/app/', 302))
  app.get('/app', { schema: hide }, async (_req, reply) => reply.redirect('/app/', 302))
  app.get('/verify', { schema: hide }, index)
  app.get('/reset-password', { schema: hide }, index)
  app.get('/accept-invitation', { schema: hide }, index)
  app.get('/app/assets/*', { schema: { ...hide, params: AssetParams } }, async (req, reply) => {
    const b = await dashboardBundle()
    const f = b.assets.get(req.params['*'])
    if (!f) return reply.code(404).header('cache-control', 'no-store').send({ detail: 'Not Found' })
    return send(req, reply, f, 'public, max-age=31536000, immutable')
  })
  // The bot preview runs the real widget loader in a frame of its own, so each bot starts clean.
  app.get('/app/preview', { schema: { ...hide, querystring: PreviewQuery } }, async (req, reply) => {
    pageHeaders(reply).header('cache-control', 'no-store').header('content-type', 'text/html; charset=utf-8')
    return reply.send(previewPage(req.query.bot, req.query.locale))
  })
  app.get('/app/*', { schema: hide }, index)
}
