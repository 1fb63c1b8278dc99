import type { PrivacyRepo } from '../tenants/privacy/privacy.repo.js'
import type { Db } from '../../db/client.js'
import type { Feedback } from '../../db/schema/chat.js'
import type { Clock } from '../../lib/clock.js'
import { decryptOrNull as decrypt, type Cipher } from '../../lib/crypto.js'
import { badRequest, notFound } from '../../lib/errors.js'
import type { HandOffPort } from '../escalations/handoff.js'
import type { ChatRepo } from './chat.repo.js'
import { piiEvents, sumCounts } from '../shared/pii-events.js'
import type { EventsPort } from '../shared/events.port.js'

/**
 * The dashboard's view of conversations (JWT): session list, message logs with the encrypted originals on
 * explicit request (each viewing and erasure leaves a PII audit event), feedback and bad answers.
 */
export function createChatLogsService(deps: {
  db: Db
  clock: Clock
  cipher: Pick<Cipher, 'decrypt'>
  repo: ChatRepo
  handOff: Pick<HandOffPort, 'latestTicketNumber'>
  privacy: Pick<PrivacyRepo, 'insertEvents'>
  events?: EventsPort
}) {
  const { db, clock, cipher, repo, privacy } = deps

  async function sessionOr404(tenantId: string, sessionId: string) {
    const s = await repo.findSession(tenantId, sessionId)
    if (!s) throw notFound('Session not found')
    return s
  }

  const decryptOrNull = (enc: string | null) => decrypt(cipher, enc)

  return {
    async listSessions(tenantId: string, page: { limit: number; offset: number }) {
      const [rows, total] = await Promise.all([repo.listSessions(tenantId, page.limit, page.offset), repo.countSessions(tenantId)])
      return {
        sessions: rows.map((r) => ({
          session_id: r.id,
          bot_public_id: r.bot_public_id,
          mode: r.mode,
          message_count: r.message_count,
          last_question: r.last_question,
          last_answer_preview: r.last_answer_preview,
          last_activity: r.last_activity_at.toISOString(),
          chat_ended: r.chat_ended,
          ticket_number: r.ticket_number ?? null,
        })),
        total,
      }
    },

    async sessionLog(tenantId: string, sessionId: string, opts: { includeOriginal: boolean; actorUserId: string | null }) {
      await sessionOr404(tenantId, sessionId)
      const rows = await repo.sessionMessages(tenantId, sessionId)
      const docs = await repo.citedDocuments(tenantId, [...new Set(rows.flatMap((m) => m.source_documents ?? []))])
      const byId = new Map(docs.map((d) => [d.id, { id: d.id, title: d.title ?? d.filename, url: d.source_url }]))
      const shown: (Record<string, number> | null)[] = []
      const messages = rows.map((m) => {
        const original = opts.includeOriginal ? decryptOrNull(m.content_original_enc) : null
        if (original !== null) shown.push(m.pii_counts)
        return {
          id: m.id,
          session_id: m.session_id,
          role: m.role,
          content: m.content,
          content_original: original,
          content_original_available: m.content_original_enc !== null,
          feedback: m.feedback,
          ideal_answer: m.ideal_answer,
          created_at: m.created_at.toISOString(),
          from_operator: m.from_operator,
          source_documents: m.source_documents ?? [],
          /** Which documents the answer cited, by title (for the operator; a deleted document drops out). */
          cited_documents: (m.source_documents ?? []).flatMap((id) => byId.get(id) ?? []),
          sources: m.sources ?? [],
          tokens_used: m.tokens_used,
          debug: m.debug ?? null,
        }
      })
      if (shown.length) {
        const counts = sumCounts(shown)
        if (Object.keys(counts).length === 0) counts.UNKNOWN = shown.length
        await privacy.insertEvents(
          tenantId,
          piiEvents(counts, { action: 'original_viewed', direction: 'message', sessionId, actorUserId: opts.actorUserId }),
          clock.now(),
        )
      }
      return { session_id: sessionId, messages }
    },

    async deleteOriginals(tenantId: string, sessionId: string, actorUserId: string | null) {
      await sessionOr404(tenantId, sessionId)
      return db.transaction().execute(async (trx) => {
        const erased = await repo.deleteOriginals(tenantId, sessionId, trx)
        if (erased.length) {
          const counts = sumCounts(erased.map((e) => e.pii_counts))
          if (Object.keys(counts).length === 0) counts.UNKNOWN = erased.length
          await privacy.insertEvents(
            tenantId,
            piiEvents(counts, { action: 'original_deleted', direction: 'message', sessionId, actorUserId }),
            clock.now(),
            trx,
          )
        }
        return { deleted_count: erased.length }
      })
    },

    async feedback(tenantId: string, messageId: string, input: { feedback: Feedback; ideal_answer?: string | null }) {
      const m = await repo.findMessage(tenantId, messageId)
      if (!m) throw notFound('Message not found')
      if (m.role !== 'assistant') throw badRequest('Feedback can only be given on assistant messages', 'not_assistant_message')
      const ideal = input.ideal_answer === undefined ? m.ideal_answer : input.ideal_answer?.trim() || null
      const session = deps.events ? await repo.findSession(tenantId, m.session_id) : null
      const row = await db.transaction().execute(async (trx) => {
        const r = await repo.setFeedback(tenantId, messageId, input.feedback, ideal, trx)
        const data = { message_id: messageId, session_id: m.session_id, bot_id: session?.bot_id ?? null, feedback: input.feedback, ideal_answer: ideal }
        await deps.events?.emit(tenantId, { type: 'feedback.received', botId: session?.bot_id ?? null, data }, trx)
        return r
      })
      return { id: row!.id, feedback: row!.feedback, ideal_answer: row!.ideal_answer }
    },

    async badAnswers(tenantId: string, page: { limit: number; offset: number }) {
      const [rows, total] = await Promise.all([repo.badAnswers(tenantId, page.limit, page.offset), repo.countBadAnswers(tenantId)])
      return {
        items: rows.map((r) => ({
          message_id: r.id,
          session_id: r.session_id,
          question: r.question ?? null,
          answer: r.content,
          ideal_answer: r.ideal_answer,
          created_at: r.created_at.toISOString(),
        })),
        total,
      }
    },

    async history(tenantId: string, sessionId: string) {
      const s = await sessionOr404(tenantId, sessionId)
      const [rows, ticket] = await Promise.all([repo.sessionMessages(tenantId, sessionId), deps.handOff.latestTicketNumber(tenantId, sessionId)])
      return {
        session_id: sessionId,
        messages: rows.map((m) => ({ id: m.id, role: m.role, content: m.content, created_at: m.created_at.toISOString(), from_operator: m.from_operator })),
        chat_ended: s.chat_ended,
        ticket_number: ticket,
      }
    },
  }
}

export type ChatLogsService = ReturnType<typeof createChatLogsService>
