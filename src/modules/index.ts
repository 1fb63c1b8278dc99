import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { FastifyCorsOptions } from '@fastify/cors'
import type { AppContext } from '../context.js'
import { createGuards, type Guards } from '../http/auth.js'
import { pruneFinishedJobs, pruneJobs } from '../jobs/prune.js'
import type { JobDefinition } from '../jobs/types.js'
import { createAuthRepo } from './auth/auth.repo.js'
import { offeredWhileToolsWork } from './actions/actions.port.js'
import { wireActions } from './actions/actions.wire.js'
import { analyticsMarker, wireAnalytics } from './analytics/analytics.wire.js'
import { wireAssist } from './assist/assist.wire.js'
import { wireAttachments } from './attachments/attachments.wire.js'
import { wireAudit } from './audit/audit.wire.js'
import { wireAuth } from './auth/auth.wire.js'
import { createJwt } from './auth/jwt.js'
import { createBotsRepo } from './bots/bots.repo.js'
import { wireBots } from './bots/bots.wire.js'
import { wireChat } from './chat/chat.wire.js'
import { dashboardRoutes } from './dashboard/dashboard.routes.js'
import { enqueueEmbedBackfill } from './documents/documents.jobs.js'
import { wireDocuments } from './documents/documents.wire.js'
import { wireSources } from './documents/sources/sources.wire.js'
import { emailJobs } from './mailer/mailer.jobs.js'
import { createEmailService } from './mailer/mailer.service.js'
import type { EmailChannelService } from './email-channel/email-channel.service.js'
import { threadedEmail, wireEmailChannel } from './email-channel/email-channel.wire.js'
import { wireEvals } from './evals/evals.wire.js'
import { wireLanguages } from './languages/languages.wire.js'
import { wireEscalations } from './escalations/escalations.wire.js'
import { wireGaps } from './gap-analyzer/gaps.wire.js'
import { healthRoutes } from './health/health.routes.js'
import { wireKnowledge } from './knowledge/knowledge.wire.js'
import { wireSavedReplies } from './saved-replies/saved-replies.wire.js'
import { wireLive } from './live/live.wire.js'
import { llmRoutes } from './llm/llm.routes.js'
import { llmChecks } from './llm/llm.wire.js'
import type { AuditPort } from './shared/audit.port.js'
import { wirePrivacy } from './tenants/privacy/privacy.wire.js'
import { createTenantsRepo } from './tenants/tenants.repo.js'
import { wireTeam } from './team/team.wire.js'
import { wireTenants } from './tenants/tenants.wire.js'
import { wireWebhooks } from './webhooks/webhooks.wire.js'
import { createWidgetRepo } from './widget/widget.repo.js'
import { wireWidget } from './widget/widget.wire.js'

export interface Modules {
  guards: Guards
  routes: FastifyPluginAsync[]
  jobs: JobDefinition<any>[]
  /** CORS for the public widget routes, decided per bot. */
  widgetCors: (req: FastifyRequest) => FastifyCorsOptions
  /** The e-mail channel's door, for the inbound SMTP listener (server.ts). */
  emailChannel: EmailChannelService
}

/**
 * Wires every module from the context, each through its `*.wire.ts`, in dependency order. Plain code on
 * purpose; each module's factory names exactly what it needs. The repositories made here are read by more
 * than their own module (the guards, sign-up, the widget's session counts).
 */
export function wireModules(ctx: AppContext): Modules {
  const { db, cipher, config, queue } = ctx
  const changes = ctx.database.changes
  const jwt = createJwt(config.JWT_SECRET, ctx.clock)
  const authRepo = createAuthRepo(db, changes)
  const tenantsRepo = createTenantsRepo(db, changes)
  const botsRepo = createBotsRepo(db, changes)
  const widgetRepo = createWidgetRepo(db)
  const guards = createGuards({ jwt, authRepo, tenantsRepo, changes, clock: ctx.clock })

  // The workspace audit log and the outbound events outbox, as ports every module may write to inside its
  // own transaction: the stored audit log (team workspace) and the webhooks outbox.
  const auditLog = wireAudit(ctx, guards)
  const audit: AuditPort = auditLog.port
  const email = createEmailService({ queue, cipher })
  const webhooks = wireWebhooks(ctx, guards, { audit, email })
  const events = webhooks.events

  const tenants = wireTenants(ctx, guards, {
    repo: tenantsRepo,
    sessionStats: widgetRepo.sessionStats,
    // a new key retries what waited for one (or failed with the old one) now, not at the next sweep
    onLlmKeySet: (tenantId) => enqueueEmbedBackfill(queue, tenantId, undefined, true),
    audit,
  })
  const bots = wireBots(ctx, guards, { repo: botsRepo, audit })
  const auth = wireAuth(ctx, guards, { jwt, repo: authRepo, email, tenants: tenants.service, bots: bots.service, botsRepo, audit })
  const team = wireTeam(ctx, guards, { users: authRepo, auth: auth.service, email, audit })
  const privacy = wirePrivacy(ctx, guards)
  // the workspace's languages: the chat turn's settings, and an operator's message sent translated (live)
  const languages = wireLanguages(ctx, guards, { llmKey: tenants.service.llmKey })
  // an operator's message is mailed like a resolution's reply (unless seen within the grace period): the
  // escalations module is wired after the live one, whose port it uses, so the hook reaches it when called
  const live = wireLive(ctx, guards, {
    events,
    audit,
    onOperatorMessage: (tenantId, m, trx) => escalations.service.queueReplyMail(tenantId, m, trx),
    // an operator's files claimed by their reply (the attachments module is wired later; reached when called)
    operatorFiles: { claim: (tenantId, sessionId, ids, messageId, trx) => attachments.operatorFiles.claim(tenantId, sessionId, ids, messageId, trx) },
    // a message sent from a suggested reply counts it as used (assist is wired after the chat, whose retrieval it uses)
    onSuggestionUsed: (tenantId, u, trx) => assist.service.used(tenantId, u, trx),
    translateForVisitor: languages.translateForVisitor,
  })
  // an operator's message on an e-mail conversation goes out in its thread (the e-mail channel rewrites the mail)
  const escalations = wireEscalations(ctx, guards, {
    tenants: tenants.service,
    email: threadedEmail(ctx, email),
    privacy: privacy.repo,
    audit,
    events,
    live: live.port,
    // a person's answer that resolved a question becomes an FAQ candidate (assist is wired below; called later)
    onResolved: (tenantId, r, trx) => assist.learn(tenantId, r, trx),
    // a team notice's Reply-To: the ticket's own reply address when its bot answers mail (e-mail channel, wired below)
    ticketReplyTo: (tenantId, botId, ticketId) => emailChannel.service.ticketReplyTo(tenantId, botId, ticketId),
    // the files of a ticket's messages (attachments is wired below; called later)
    attachments: { byMessages: (tenantId, ids) => attachments.port.byMessages(tenantId, ids) },
  })
  const knowledge = wireKnowledge(ctx, guards, { llmKey: tenants.service.llmKey, audit })
  // the bot's actions, which the turn offers its model as tools through the actions port
  const actions = wireActions(ctx, guards, { audit, events })
  // a visitor's files (issue 54): the parsers (documents) and the widget's visitor checks are wired below; reached per request
  const attachments = wireAttachments(ctx, guards, {
    parse: (name, bytes) => documents.parser.parse(name, bytes),
    visitor: { botFor: (req, reply, publicId) => widget.visitor.botFor(req, reply, publicId), session: (bot, id) => widget.visitor.session(bot, id) },
  })
  const chat = wireChat(ctx, guards, {
    bots: bots.service.lookups,
    privacy: privacy.repo,
    audit,
    handOff: escalations.handOff,
    live: live.port,
    onFeedback: analyticsMarker(ctx),
    onIdealAnswer: knowledge.knowledge.proposeIdealAnswer,
    faqSearch: knowledge.faqSearch,
    profileFor: knowledge.knowledge.profileFor,
    events,
    // a chat model that refuses tools is offered none (issue 37): the bot answers without its actions
    actions: offeredWhileToolsWork(actions.port, () => !ctx.llmStatus.quirks.get(config.CHAT_MODEL).noTools),
    languages: languages.languages,
    attachments: attachments.port,
  })
  const assist = wireAssist(ctx, guards, { retrieval: chat.retrieval, addCandidates: knowledge.knowledge.addCandidates })
  const emailChannel = wireEmailChannel(ctx, guards, {
    bots: bots.service,
    botsRepo,
    chat: chat.service,
    email,
    keepDraft: assist.service.keepBotDraft,
    postAsMember: live.service.postMessage,
    attachments: attachments.service,
  })
  const widget = wireWidget(ctx, {
    repo: widgetRepo,
    bots: botsRepo,
    tenants: tenants.service,
    chat: chat.service,
    live: live.widget,
    languages: languages.languages,
    attachments: attachments.port,
  })
  // the knowledge changing: its profile, and an automatic evaluation run (evals is wired below; called later)
  const documents = wireDocuments(ctx, guards, {
    llmKey: tenants.service.llmKey,
    onDocumentIndexed: async (tenantId, documentId) => {
      await knowledge.onDocumentIndexed(tenantId, documentId)
      await evals.knowledgeChanged(tenantId)
    },
    onDocumentRemoved: (tenantId) => evals.knowledgeChanged(tenantId),
    // a workspace whose embedding takes it past RETRIEVAL_VECTOR_INDEX_MIN_CHUNKS gets its index built now, not at its first question
    onEmbedded: (tenantId) => chat.retrieval.embeddingsChanged(tenantId),
    audit,
    events,
  })
  const gaps = wireGaps(ctx, guards, {
    llmKey: tenants.service.llmKey,
    retrieval: chat.retrieval,
    profileFor: knowledge.knowledge.profileFor,
    addFaqCandidates: (tenantId, drafts, source, documentId) => knowledge.knowledge.addCandidates(tenantId, drafts, source, documentId),
    audit,
  })
  const urlSources = wireSources(ctx, guards, {
    parseFile: (name, bytes) => documents.parser.parse(name, bytes),
    extractHtml: (html, url) => documents.parser.extractHtml(html, url),
    present: documents.documents.present,
    audit,
    events,
    onCrawled: (tenantId) => evals.knowledgeChanged(tenantId),
  })

  const analytics = wireAnalytics(ctx, guards, { audit, assistFigures: assist.service.figures })
  // evaluations ask the chat's own turn, as a dry run
  const evals = wireEvals(ctx, guards, { bots: botsRepo, chat: chat.service, events, ticketQuestion: escalations.ticketQuestion })

  return {
    guards,
    routes: [
      healthRoutes({ redis: ctx.redis }),
      llmRoutes({
        guards,
        monitor: ctx.llmStatus,
        llmKey: tenants.service.llmKey,
        models: { chat: config.CHAT_MODEL, embedding: config.EMBEDDING_MODEL },
        checks: llmChecks(ctx),
        vectorSearch: chat.retrieval.vectorSearchState,
      }),
      auth.routes,
      team.routes,
      auditLog.routes,
      tenants.routes,
      bots.routes,
      widget.routes,
      attachments.routes,
      urlSources.routes,
      documents.routes,
      chat.routes,
      escalations.routes,
      ...live.routes({ ticketView: escalations.service.view }),
      assist.routes,
      privacy.routes,
      knowledge.routes,
      gaps.routes,
      ...analytics.routes,
      webhooks.routes,
      actions.routes,
      evals.routes,
      languages.routes,
      emailChannel.routes,
      wireSavedReplies(ctx, guards).routes,
      dashboardRoutes(),
    ],
    jobs: [
      ...emailJobs({ cipher, mailer: ctx.mailer, files: (tenantId, ids) => attachments.service.mailAttachments(tenantId, ids) }),
      ...urlSources.jobs,
      ...documents.jobs,
      ...chat.jobs,
      ...escalations.jobs,
      ...live.jobs,
      ...privacy.jobs,
      ...auditLog.jobs,
      ...knowledge.jobs,
      ...gaps.jobs,
      ...analytics.jobs,
      ...webhooks.jobs,
      ...evals.jobs,
      ...emailChannel.jobs,
      ...attachments.jobs,
      ...pruneJobs(pruneFinishedJobs(ctx.db, ctx.clock, ctx.config.JOBS_RETENTION_DAYS)),
    ],
    widgetCors: widget.corsOptions,
    emailChannel: emailChannel.service,
  }
}
