import type { AppContext } from '../../context.js'
import { createCheckCache, runChecks, withQuirks, type CheckCache } from './capability-checks.js'

/** The capability checks of GET /llm/status, run through the service's own client (quirks learned there count). */
export function llmChecks(ctx: Pick<AppContext, 'llm' | 'llmStatus' | 'config'>): CheckCache {
  const { config } = ctx
  return createCheckCache(
    (apiKey) =>
      runChecks(ctx.llm, ctx.llmStatus.quirks, apiKey, {
        chatModel: config.CHAT_MODEL,
        embeddingModel: config.EMBEDDING_MODEL,
        dimensions: config.EMBEDDING_DIMENSIONS ?? (/^text-embedding-3/.test(config.EMBEDDING_MODEL) ? 1536 : undefined),
      }),
    Date.now,
    // a quirk learned after the run (tools refused mid-way) shows in the cached checks it contradicts
    (report) => withQuirks(report, ctx.llmStatus.quirks, config.CHAT_MODEL),
  )
}
