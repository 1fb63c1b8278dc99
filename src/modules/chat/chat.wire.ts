import type { AttachmentsPort } from '../attachments/attachments.port.js'
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/client.js'
import type { Guards } from '../../http/auth.js'
import type { ActionsPort } from '../actions/actions.port.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { HandOffPort } from '../escalations/handoff.js'
import type { LanguagesPort } from '../languages/languages.port.js'
import { createRetrievalRepo } from '../retrieval/retrieval.repo.js'
import { createVectorIndexes, vectorIndexJobs } from '../retrieval/vector-index.js'
import { createVectorIndexRepo } from '../retrieval/vector-index.repo.js'
import { preferredIndexType } from '../retrieval/vector-index.fns.js'
import { withQueryEmbeddingCache } from './query-embeddings.js'
import { createRetrievalService, type FaqSearch } from '../retrieval/retrieval.service.js'
import { NoticeCache } from '../../db/change-feed.js'
import { TENANTS_TOPIC } from '../tenants/tenants.repo.js'
import type { PrivacyRepo } from '../tenants/privacy/privacy.repo.js'
import type { AuditPort } from '../shared/audit.port.js'
import type { EventsPort } from '../shared/events.port.js'
import type { LivePort } from '../shared/live.port.js'
import { createChatLogsService } from './chat-logs.service.js'
import { chatJobs } from './chat.jobs.js'
import { createChatRepo } from './chat.repo.js'
import { chatRoutes } from './chat.routes.js'
import { createChatService, type ChatServiceDeps } from './chat.service.js'
import { createIdempotency } from './idempotency.js'
import { createModelMeter } from './model-meter.js'

/**
 * The answer pipeline and everything it stands on: retrieval, the chat service (which the widget uses too),
 * the logs API and idempotency. Approved FAQs join retrieval through `faqSearch`; tickets and everything
 * about a hand-off are the escalations module's, reached through its port `handOff`.
 */
export function wireChat(
  ctx: AppContext,
  guards: Guards,
  deps: {
    bots: Pick<BotsRepo, 'findDefault' | 'findTenantBotByPublicId'>
    privacy: Pick<PrivacyRepo, 'insertEvents' | 'optionalTypes'>
    audit: AuditPort
    faqSearch?: FaqSearch
    profileFor?: ChatServiceDeps['profileFor']
    handOff: HandOffPort
    live?: LivePort
    onFeedback?: (tenantId: string, sessionId: string, trx: Db) => Promise<void>
    onIdealAnswer?: (tenantId: string, draft: { question: string; answer: string }, trx: Db) => Promise<number>
    events?: EventsPort
    /** the actions module's port: the bot's actions as the turn's tools */
    actions?: ActionsPort
    /** the languages module's port: the session's language and the knowledge's (#40) */
    languages?: LanguagesPort
    /** the attachments module's port: the files a message sends (issue 54) */
    attachments?: AttachmentsPort
  },
) {
  const { db, clock, cipher, config, log } = ctx
  const meter = createModelMeter(ctx.llm)
  const vectorIndexRepo = createVectorIndexRepo(db, ctx.database.kind)
  const retrieval = createRetrievalService({
    repo: createRetrievalRepo(db, ctx.database.features),
    llm: withQueryEmbeddingCache(ctx.llm, config.CHAT_QUERY_EMBEDDING_CACHE),
    features: ctx.database.features,
    log,
    embeddingModel: config.EMBEDDING_MODEL,
    // the same rule as the indexer's, so query and chunk vectors have the same length
    embeddingDimensions: config.EMBEDDING_DIMENSIONS ?? (/^text-embedding-3/.test(config.EMBEDDING_MODEL) ? 1536 : undefined),
    lexicalBudget: config.RETRIEVAL_LEXICAL_BUDGET,
    vectorCacheBytes: config.RETRIEVAL_VECTOR_CACHE_MB * 1024 * 1024,
    lexicalCacheBytes: config.RETRIEVAL_LEXICAL_CACHE_MB * 1024 * 1024,
    detailCacheBytes: config.RETRIEVAL_DETAIL_CACHE_MB * 1024 * 1024,
    faqSearch: deps.faqSearch,
    ...(ctx.database.features.vector
      ? {
          vectorIndexes: createVectorIndexes({
            repo: vectorIndexRepo,
            queue: ctx.queue,
            changes: ctx.database.changes,
            settings: {
              model: config.EMBEDDING_MODEL,
              minChunks: config.RETRIEVAL_VECTOR_INDEX_MIN_CHUNKS,
              efSearch: config.RETRIEVAL_HNSW_EF_SEARCH,
              prefer: preferredIndexType(ctx.database.kind),
            },
          }),
        }
      : {}),
  })
  const repo = createChatRepo(db)
  // Every turn reads its tenant's key and privacy settings; tenant writes announce TENANTS_TOPIC, so this copy
  // is dropped on every instance when they change.
  const settings = new NoticeCache<Awaited<ReturnType<typeof repo.tenantSettings>>>(ctx.database.changes, TENANTS_TOPIC, { ttlMs: 60_000, max: 10_000, clock })
  const tenantSettings = (tenantId: string) => settings.get(tenantId, () => repo.tenantSettings(tenantId))
  const service = createChatService({
    db,
    clock,
    cipher,
    log,
    llm: ctx.llm,
    meter,
    observeStage: (stage, ms) => ctx.metrics.observeStage(stage, ms),
    repo,
    handOff: deps.handOff,
    privacy: deps.privacy,
    retrieval,
    bots: deps.bots,
    config,
    profileFor: deps.profileFor,
    tenantSettings,
    events: deps.events,
    actions: deps.actions,
    live: deps.live,
    languages: deps.languages,
    attachments: deps.attachments,
  })
  const logs = createChatLogsService({
    db,
    clock,
    cipher,
    repo,
    handOff: deps.handOff,
    privacy: deps.privacy,
    onFeedback: deps.onFeedback,
    onIdealAnswer: deps.onIdealAnswer,
    audit: deps.audit,
    events: deps.events,
    actions: deps.actions,
    attachments: deps.attachments,
  })
  const idempotency = createIdempotency({ db, redis: ctx.redis, prefix: config.REDIS_PREFIX, clock, waitMs: config.IDEMPOTENCY_WAIT_MS, log })
  return {
    service,
    retrieval,
    routes: chatRoutes({ guards, chat: service, logs, idempotency }),
    jobs: [
      ...chatJobs({ idempotency }),
      ...vectorIndexJobs({ db, repo: vectorIndexRepo, changes: ctx.database.changes, maintenanceMb: config.RETRIEVAL_VECTOR_INDEX_BUILD_MB, log }),
    ],
  }
}
