import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { AuditPort } from '../shared/audit.port.js'
import { createExtractionService } from './extraction.service.js'
import { knowledgeJobs } from './knowledge.jobs.js'
import { createKnowledgeRepo } from './knowledge.repo.js'
import { knowledgeRoutes } from './knowledge.routes.js'
import { createKnowledgeService } from './knowledge.service.js'

/**
 * The knowledge module: profile and FAQ candidates (routes), the extraction after indexing (jobs), and
 * the two things other modules plug in: `onDocumentIndexed` (documents) and `faqSearch` (retrieval).
 */
export function wireKnowledge(ctx: AppContext, guards: Guards, deps: { llmKey: (tenantId: string) => Promise<string | null>; audit: AuditPort }) {
  const { db, clock, queue, config, log } = ctx
  const repo = createKnowledgeRepo(db, ctx.database.changes)
  const knowledge = createKnowledgeService({
    db,
    clock,
    queue,
    repo,
    changes: ctx.database.changes,
    settings: {
      extractDelaySeconds: config.KNOWLEDGE_EXTRACT_DELAY_SECONDS,
      autoApproveConfidence: config.FAQ_AUTO_APPROVE_CONFIDENCE,
      faqContextScore: config.FAQ_CONTEXT_SCORE,
    },
  })
  const extraction = createExtractionService({
    db,
    clock,
    log,
    llm: ctx.llm,
    llmKey: deps.llmKey,
    repo,
    knowledge,
    settings: { guardModel: config.GUARD_MODEL, timeoutMs: config.KNOWLEDGE_LLM_TIMEOUT_MS, faqDocsPerRun: config.KNOWLEDGE_FAQ_DOCS_PER_RUN },
  })
  return {
    knowledge,
    repo,
    extraction,
    faqSearch: knowledge.faqSearch,
    /**
     * Never fails the indexing job: a missed mark is only a later extraction. An OpenAPI document's
     * candidates are drawn at once (no model); the rest waits for the debounced extraction.
     */
    onDocumentIndexed: async (tenantId: string, documentId: string) => {
      await extraction
        .swaggerNow(tenantId, documentId)
        .catch((err) => log.warn({ tenantId, documentId, err: { message: (err as Error).message } }, 'OpenAPI FAQ candidates failed; the extraction retries'))
      await knowledge
        .onDocumentIndexed(tenantId)
        .catch((err) => log.warn({ tenantId, err: { message: (err as Error).message } }, 'could not schedule the knowledge extraction'))
    },
    routes: knowledgeRoutes({ guards, knowledge, audit: deps.audit }),
    jobs: knowledgeJobs({
      extraction,
      repo,
      queue,
      clock,
      log,
      delaySeconds: config.KNOWLEDGE_EXTRACT_DELAY_SECONDS,
      sweepEverySeconds: config.KNOWLEDGE_SWEEP_INTERVAL_SECONDS,
    }),
  }
}
