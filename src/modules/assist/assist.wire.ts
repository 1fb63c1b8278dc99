import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { LlmClient } from '../llm/llm.js'
import type { RetrievalService } from '../retrieval/retrieval.service.js'
import { createAssistRepo } from './assist.repo.js'
import { assistRoutes } from './assist.routes.js'
import { createAssistService } from './assist.service.js'
import { createLearning } from './learn.js'

/** Operator assist: suggested replies and summaries on a ticket, with the chat's retrieval and model client. */
export function wireAssist(
  ctx: AppContext,
  guards: Guards,
  deps: {
    retrieval: Pick<RetrievalService, 'search'>
    llm?: Pick<LlmClient, 'chat'>
    addCandidates: Parameters<typeof createLearning>[0]['addCandidates']
  },
) {
  const { config } = ctx
  const repo = createAssistRepo(ctx.db)
  const service = createAssistService({
    db: ctx.db,
    clock: ctx.clock,
    cipher: ctx.cipher,
    repo,
    llm: deps.llm ?? ctx.llm,
    retrieval: deps.retrieval,
    settings: {
      model: config.CHAT_MODEL,
      timeoutMs: config.CHAT_TIMEOUT_MS,
      maxTokens: config.CHAT_MAX_ANSWER_TOKENS,
      topK: config.RETRIEVAL_TOP_K,
      sourceTokens: config.RETRIEVAL_SOURCE_TOKENS,
      minScore: config.RETRIEVAL_MIN_SCORE,
    },
  })
  return { service, learn: createLearning({ addCandidates: deps.addCandidates }), routes: assistRoutes({ guards, assist: service }) }
}
