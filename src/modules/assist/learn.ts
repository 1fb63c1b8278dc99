import type { Db } from '../../db/client.js'
import type { FaqSource } from '../../db/schema/knowledge.js'
import { sanitizeFaqPairs, type FaqDraft } from '../knowledge/knowledge.fns.js'
import { redactOperatorText } from '../shared/redaction.js'

/** An operator's answer is proposed for review, below the auto-approve threshold's default (0.85). */
export const OPERATOR_FAQ_CONFIDENCE = 0.8

/**
 * The answer of a resolution: the person's longest message to the visitor on this ticket (the resolution's reply
 * included), so "Done, anything else?" does not stand for the answer given two messages before.
 */
export function operatorAnswer(reply: string, messages: string[]): string {
  return [...messages, reply].map((m) => m.trim()).reduce((best, m) => (m.length > best.length ? m : best), '')
}

/**
 * Learning from people: a ticket resolved with a person's answer proposes the visitor's question (stored redacted)
 * and that answer (redacted like the chat's operator text in copies) as an FAQ candidate, source `operator`.
 * `addCandidates` deduplicates against every FAQ and candidate the workspace has or had, and the candidate is
 * reviewed as the others are. Runs in the resolution's transaction (SQL only, no model call).
 */
export function createLearning(deps: {
  addCandidates: (tenantId: string, drafts: FaqDraft[], source: FaqSource, documentId: null, trx: Db) => Promise<number>
}) {
  return async function learn(
    tenantId: string,
    r: { ticketId: string; sessionId: string | null; question: string; reply: string; since: Date },
    trx: Db,
  ): Promise<void> {
    const tenant = await trx.selectFrom('tenants').select('pii_optional_types').where('id', '=', tenantId).executeTakeFirst()
    const said = r.sessionId
      ? await trx
          .selectFrom('chat_messages')
          .select('content')
          .where('tenant_id', '=', tenantId)
          .where('session_id', '=', r.sessionId)
          .where('from_operator', '=', true)
          .where('created_at', '>=', r.since)
          .orderBy('created_at', 'desc')
          .limit(50)
          .execute()
      : []
    const answer = redactOperatorText(
      operatorAnswer(
        r.reply,
        said.map((m) => m.content),
      ),
      tenant?.pii_optional_types ?? [],
    )
    const drafts = sanitizeFaqPairs({ faqs: [{ question: r.question, answer, confidence: OPERATOR_FAQ_CONFIDENCE }] }, 1)
    if (drafts.length) await deps.addCandidates(tenantId, drafts, 'operator', null, trx)
  }
}
