import type { RetrievalHit, RetrievalResult, RetrievalService } from '../../retrieval/retrieval.service.js'
import { numberSources, type PromptSource } from './07-prompt.js'
import type { CitableSource } from './10-persist.js'

/**
 * Stage 5: hybrid retrieval (src/modules/retrieval) for the standalone query, and the evidence that goes
 * on: hits well below the threshold are noise to the model and are dropped from the prompt (the best
 * one always stays, so a caveat answer still has something to go on).
 */

/**
 * How long a new question's embedding may take before the answer starts from the lexical evidence (turn.ts): an
 * embedder that answers within it (in process, on the same host) costs no second request; one that takes a
 * provider round trip (100-300 ms) is not waited for. In bench:chat (model and embedder at 300 ms a call) the
 * first token then comes at about 1.1x one call instead of 2x.
 */
export const LEXICAL_GRACE_MS = 25

export function retrieve(
  retrieval: Pick<RetrievalService, 'search'>,
  tenantId: string,
  query: string,
  opts: { apiKey: string; k: number; budgetTokens?: number; signal?: AbortSignal; onLexical?: (preliminary: RetrievalResult) => void },
) {
  return retrieval.search(tenantId, query, {
    apiKey: opts.apiKey,
    k: opts.k,
    budgetTokens: opts.budgetTokens,
    signal: opts.signal,
    onLexical: opts.onLexical,
    lexicalGraceMs: LEXICAL_GRACE_MS,
  })
}

export function usableHits(result: Pick<RetrievalResult, 'hits'>, minScore: number): RetrievalHit[] {
  const floor = minScore / 2
  // a NaN confidence must not silently drop a hit that fusion ranked (issue 37): it counts as 0
  return result.hits.filter((h, i) => i === 0 || (Number.isFinite(h.confidence) ? h.confidence : 0) >= floor)
}

export function promptSources(hits: RetrievalHit[]): { prompt: PromptSource[]; citable: CitableSource[] } {
  const prompt = numberSources(hits)
  const citable = prompt.map((p, i) => ({ n: p.n, documentId: hits[i]!.documentId, title: hits[i]!.title, url: hits[i]!.url, text: hits[i]!.text }))
  return { prompt, citable }
}

/** What the debug log keeps of the evidence: ids and scores, no text. */
export function evidence(hits: RetrievalHit[]) {
  const r = (x: number | null) => (x === null ? null : Math.round(x * 10000) / 10000)
  return hits.map((h) => ({
    chunk_id: h.kind === 'chunk' ? h.id : null,
    faq_id: h.kind === 'faq' ? h.id.slice(4) : null,
    document_id: h.documentId,
    title: h.title.slice(0, 200),
    confidence: r(h.confidence),
    bm25: r(h.bm25),
    lexical: r(h.lexical),
    vector: r(h.vector),
    rrf: r(h.score),
  }))
}
