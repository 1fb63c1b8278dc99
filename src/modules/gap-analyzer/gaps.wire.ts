import type { AuditPort } from '../shared/audit.port.js'
import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { FaqDraft, ProfileData } from '../knowledge/knowledge.fns.js'
import type { RetrievalService } from '../retrieval/retrieval.service.js'
import { createGapAnalyzer } from './gaps.analyzer.js'
import { gapsJobs } from './gaps.jobs.js'
import { createGapsRepo } from './gaps.repo.js'
import { gapsRoutes } from './gaps.routes.js'
import { createGapsService } from './gaps.service.js'

/** The gap analyzer: routes, the recalculation job, and the analyzer it runs (retrieval and the knowledge profile plugged in). */
export function wireGaps(
  ctx: AppContext,
  guards: Guards,
  deps: {
    llmKey: (tenantId: string) => Promise<string | null>
    retrieval: Pick<RetrievalService, 'search'>
    profileFor: (tenantId: string) => Promise<ProfileData | null>
    addFaqCandidates: (tenantId: string, drafts: FaqDraft[], source: 'logs', documentId: null) => Promise<number>
    audit: AuditPort
  },
) {
  const { db, clock, queue, config, log } = ctx
  const repo = createGapsRepo(db)
  const analyzer = createGapAnalyzer({
    db,
    clock,
    log,
    repo,
    retrieval: deps.retrieval,
    llm: ctx.llm,
    llmKey: deps.llmKey,
    profileFor: deps.profileFor,
    addFaqCandidates: deps.addFaqCandidates,
    settings: {
      guardModel: config.GUARD_MODEL,
      embeddingModel: config.EMBEDDING_MODEL,
      llmTimeoutMs: config.KNOWLEDGE_LLM_TIMEOUT_MS,
      partialAt: config.GAP_PARTIAL_SCORE,
      coveredAt: config.GAP_COVERED_SCORE,
      lookbackDays: config.GAP_LOOKBACK_DAYS,
      maxQuestions: config.GAP_MAX_QUESTIONS,
      inactiveDays: config.GAP_INACTIVE_DAYS,
      minClusterSize: config.GAP_MIN_CLUSTER_SIZE,
      rescoreLimit: config.GAP_RESCORE_LIMIT,
      maxTopics: 40,
    },
  })
  const gaps = createGapsService({
    db,
    clock,
    queue,
    log,
    repo,
    llm: ctx.llm,
    llmKey: deps.llmKey,
    retrieval: deps.retrieval,
    settings: { guardModel: config.GUARD_MODEL, llmTimeoutMs: config.KNOWLEDGE_LLM_TIMEOUT_MS },
  })
  return { gaps, analyzer, repo, routes: gapsRoutes({ guards, gaps, audit: deps.audit }), jobs: gapsJobs({ analyzer, repo, clock, log }) }
}
