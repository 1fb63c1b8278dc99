import type { GuardVerdict } from './03-guards.js'

/**
 * Stage 6: what the turn does with the guard verdicts and the retrieval evidence. A pure function of its
 * inputs, so every branch is tested without a model or a database.
 */

export type EscalationTrigger = 'user_request' | 'no_documents' | 'low_similarity'

export type Decision =
  | { kind: 'refuse'; reason: 'injection' | 'off_topic' }
  | { kind: 'smalltalk' }
  | { kind: 'escalate'; trigger: EscalationTrigger }
  | { kind: 'answer'; caveat: boolean }

export interface DecideInput {
  guard: Pick<GuardVerdict, 'injection' | 'wantsHuman' | 'relevant' | 'smalltalk'>
  /** Chunks the tenant has indexed (0: no knowledge at all). */
  corpusChunks: number
  /** Best retrieval confidence, 0..1. */
  bestScore: number
  minScore: number
  caveatScore: number
  /**
   * The relevance floor (retrieval/relevance.fns.ts): the knowledge holds lexical or vector evidence for the
   * question. Without it nothing is answered from the chunks, whatever the guard model says. Default true.
   */
  grounded?: boolean
}

export function decide(i: DecideInput): Decision {
  if (i.guard.injection) return { kind: 'refuse', reason: 'injection' }
  if (i.guard.wantsHuman) return { kind: 'escalate', trigger: 'user_request' }
  // a greeting is answered as one, unless it also matched the knowledge well ("hi, how do refunds work")
  if (i.guard.smalltalk && i.bestScore < i.minScore) return { kind: 'smalltalk' }
  // an off-topic verdict only stands when the knowledge does not clearly cover the question
  if (!i.guard.relevant && i.bestScore < i.caveatScore) return { kind: 'refuse', reason: 'off_topic' }
  if (i.bestScore < i.minScore || i.grounded === false) return { kind: 'escalate', trigger: i.corpusChunks === 0 ? 'no_documents' : 'low_similarity' }
  return { kind: 'answer', caveat: i.bestScore < i.caveatScore }
}
