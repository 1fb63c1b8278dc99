import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { FastifyCorsOptions } from '@fastify/cors'
import type { AppContext } from '../context.js'
import { createGuards, type Guards } from '../http/auth.js'
import type { JobDefinition } from '../jobs/types.js'
import { createAuthRepo } from './auth/auth.repo.js'
import { authRoutes } from './auth/auth.routes.js'
import { createAuthService } from './auth/auth.service.js'
import { createJwt } from './auth/jwt.js'
import { createBotsRepo } from './bots/bots.repo.js'
import { botsRoutes } from './bots/bots.routes.js'
import { createBotsService } from './bots/bots.service.js'
import { wireChat } from './chat/chat.wire.js'
import { dashboardRoutes } from './dashboard/dashboard.routes.js'
import { enqueueEmbedBackfill } from './documents/documents.jobs.js'
import { wireDocuments } from './documents/documents.wire.js'
import { emailJobs } from './email/email.jobs.js'
import { createEmailService } from './email/email.service.js'
import { wireEscalations } from './escalations/escalations.wire.js'
import { wireGaps } from './gaps/gaps.wire.js'
import { healthRoutes } from './health/health.routes.js'
import { wireKnowledge } from './knowledge/knowledge.wire.js'
import { llmRoutes } from './llm/llm.routes.js'
import { wirePrivacy } from './privacy/privacy.wire.js'
import { wireSources } from './sources/sources.wire.js'
import { createTenantsRepo } from './tenants/tenants.repo.js'
import { tenantsRoutes } from './tenants/tenants.routes.js'
import { createTenantsService } from './tenants/tenants.service.js'
import { createWidgetAccess } from './widget/widget.cors.js'
import { createWidgetRepo } from './widget/widget.repo.js'
import { widgetRoutes } from './widget/widget.routes.js'
import { createWidgetService } from './widget/widget.service.js'

export interface Modules {
  guards: Guards
  routes: FastifyPluginAsync[]
  jobs: JobDefinition<any>[]
  /** CORS for the public widget routes, decided per bot. */
  widgetCors: (req: FastifyRequest) => FastifyCorsOptions
}

/**
 * Wires every module from the context: repositories, then services in dependency order, then routes and
 * job handlers. Plain code on purpose; each module's factory names exactly what it needs.
 */
export function wireModules(ctx: AppContext): Modules {
  const { db, clock, cipher, config, queue } = ctx
  const jwt = createJwt(config.JWT_SECRET, clock)
  const changes = ctx.database.changes
  const authRepo = createAuthRepo(db, changes)
  const tenantsRepo = createTenantsRepo(db, changes)
  const botsRepo = createBotsRepo(db, changes)
  const guards = createGuards({ jwt, authRepo, tenantsRepo, changes, clock })

  const email = createEmailService({ queue, cipher })
  const widgetRepo = createWidgetRepo(db)
  const tenants = createTenantsService({
    db,
    clock,
    cipher,
    repo: tenantsRepo,
    sessionStats: widgetRepo.sessionStats,
    onLlmKeySet: (tenantId) => enqueueEmbedBackfill(queue, tenantId),
  })
  const bots = createBotsService({ db, clock, repo: botsRepo, changes })
  const auth = createAuthService({
    db,
    clock,
    jwt,
    repo: authRepo,
    email,
    tenants,
    bots,
    botsRepo,
    frontendUrl: config.FRONTEND_URL || config.PUBLIC_BASE_URL || `http://localhost:${config.PORT}`,
  })

  const privacy = wirePrivacy(ctx, guards)
  const escalations = wireEscalations(ctx, guards, { tenants, email, privacy: privacy.repo })
  const knowledge = wireKnowledge(ctx, guards, { llmKey: tenants.llmKey })
  const chat = wireChat(ctx, guards, { bots: bots.lookups, privacy: privacy.repo, handOff: escalations.handOff, faqSearch: knowledge.faqSearch, profileFor: knowledge.knowledge.profileFor })
  const widget = createWidgetService({ clock, bots: botsRepo, tenants, chat: chat.service, repo: widgetRepo })
  const widgetAccess = createWidgetAccess(widget.findBot)
  const documents = wireDocuments(ctx, guards, { llmKey: tenants.llmKey, onDocumentIndexed: knowledge.onDocumentIndexed })
  const gaps = wireGaps(ctx, guards, {
    llmKey: tenants.llmKey,
    retrieval: chat.retrieval,
    profileFor: knowledge.knowledge.profileFor,
    addFaqCandidates: (tenantId, drafts, source, documentId) => knowledge.knowledge.addCandidates(tenantId, drafts, source, documentId),
  })
  const urlSources = wireSources(ctx, guards, {
    parseFile: (name, bytes) => documents.parser.parse(name, bytes),
    extractHtml: (html, url) => documents.parser.extractHtml(html, url),
  })

  return {
    guards,
    routes: [
      healthRoutes({ redis: ctx.redis }),
      llmRoutes({ guards, monitor: ctx.llmStatus, llmKey: tenants.llmKey, models: { chat: config.CHAT_MODEL, embedding: config.EMBEDDING_MODEL } }),
      authRoutes({ guards, auth, secureCookies: config.PUBLIC_BASE_URL.startsWith('https://') }),
      tenantsRoutes({ guards, tenants }),
      botsRoutes({ guards, bots }),
      widgetRoutes({
        widget,
        access: widgetAccess,
        redis: ctx.redis,
        options: { publicBaseUrl: config.PUBLIC_BASE_URL, loaderUrl: config.WIDGET_LOADER_URL, heartbeatMs: config.WIDGET_SSE_HEARTBEAT_MS },
      }),
      urlSources.routes,
      documents.routes,
      chat.routes,
      escalations.routes,
      privacy.routes,
      knowledge.routes,
      gaps.routes,
      dashboardRoutes(),
    ],
    jobs: [...emailJobs({ cipher, mailer: ctx.mailer }), ...urlSources.jobs, ...documents.jobs, ...chat.jobs, ...escalations.jobs, ...privacy.jobs, ...knowledge.jobs, ...gaps.jobs],
    widgetCors: widgetAccess.corsOptions,
  }
}
