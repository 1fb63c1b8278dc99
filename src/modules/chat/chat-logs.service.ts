import type { AttachmentsPort } from '../attachments/attachments.port.js'
import { sessionSearch } from './session-search.js'
import type { PrivacyRepo } from '../tenants/privacy/privacy.repo.js'
import type { Db } from '../../db/client.js'
import type { ChatChannel, Feedback } from '../../db/schema/chat.js'
import type { Clock } from '../../lib/clock.js'
import { decryptOrNull as decrypt, type Cipher } from '../../lib/crypto.js'
import { badRequest, forbidden, notFound } from '../../lib/errors.js'
import type { Viewer } from '../../http/auth.js'
import type { AuditPort } from '../shared/audit.port.js'
import { inScope, type BotScope } from '../shared/bot-scope.js'
import type { HandOffPort } from '../escalations/handoff.js'
import type { ChatRepo } from './chat.repo.js'
import { piiEvents, sumCounts } from '../shared/pii-events.js'
import { entityCounts, redactOperatorText } from '../shared/redaction.js'
import type { EventsPort } from '../shared/events.port.js'
import type { ActionsPort, SessionCall } from '../actions/actions.port.js'

/**
 * The dashboard's view of conversations (JWT): session list, message logs with the encrypted originals on
 * explicit request (each viewing and erasure leaves a PII audit event), feedback and bad answers.
 */
export function createChatLogsService(deps: {
  db: Db
  clock: Clock
  cipher: Pick<Cipher, 'decrypt' | 'emailHash'>
  repo: ChatRepo
  handOff: Pick<HandOffPort, 'latestTicketNumber'>
  privacy: Pick<PrivacyRepo, 'insertEvents' | 'optionalTypes'>
  /** A visitor's verdict changed a conversation (analytics marks it for its next refresh, in this transaction). */
  onFeedback?: (tenantId: string, sessionId: string, trx: Db) => Promise<void>
  audit: AuditPort
  events?: EventsPort
  /**
   * An operator wrote the ideal answer to a visitor's question: the knowledge module proposes it as an FAQ
   * candidate (in this transaction), which answers the question once approved.
   */
  onIdealAnswer?: (tenantId: string, draft: { question: string; answer: string }, trx: Db) => Promise<number>
  /** the actions module: the calls a conversation made, for its transcript */
  actions?: Pick<ActionsPort, 'sessionCalls'>
  /** the attachments module: the files each message sent */
  attachments?: Pick<AttachmentsPort, 'byMessages'>
}) {
  const { db, clock, cipher, repo, privacy } = deps

  /** The session, if it is the tenant's and of one of the viewer's bots. */
  async function sessionOr404(tenantId: string, sessionId: string, scope: BotScope) {
    const s = await repo.findSession(tenantId, sessionId)
    if (!s || !inScope(scope, s.bot_id)) throw notFound('Session not found')
    return s
  }
  const actorEntry = (v: Viewer) => ({ actorUserId: v.userId, ip: v.ip })

  const decryptOrNull = (enc: string | null) => decrypt(cipher, enc)

  /**
   * Each call of the conversation under the message that names it in its debug record: the turn that made it
   * (`actions[].call_id`), or for an approved write the message that told its outcome (`action_call`), the later one winning.
   */
  async function actionCallsByMessage(tenantId: string, sessionId: string, rows: { id: string; debug: Record<string, unknown> | null }[]) {
    const out = new Map<string, SessionCall[]>()
    const named = rows.some((m) => m.debug && ('actions' in m.debug || 'action_call' in m.debug))
    if (!deps.actions || !named) return out
    const where = new Map<string, string>()
    for (const m of rows) {
      const d = (m.debug ?? {}) as { actions?: { call_id?: unknown }[]; action_call?: unknown }
      for (const a of Array.isArray(d.actions) ? d.actions : []) if (typeof a?.call_id === 'string') where.set(a.call_id, m.id)
      if (typeof d.action_call === 'string') where.set(d.action_call, m.id)
    }
    for (const c of await deps.actions.sessionCalls(tenantId, sessionId)) {
      const at = where.get(c.id)
      if (at) out.set(at, [...(out.get(at) ?? []), c])
    }
    return out
  }

  return {
    /**
     * The viewer's conversations, newest activity first; `q` finds a ticket number, a visitor's e-mail or words of the
     * messages; `channel` keeps one channel's.
     */
    async listSessions(tenantId: string, page: { limit: number; offset: number; q?: string; channel?: ChatChannel }, viewer: Viewer) {
      const search = page.q === undefined ? null : sessionSearch(page.q, (a) => cipher.emailHash(a))
      const channel = page.channel ?? null
      const [rows, total] = await Promise.all([
        repo.listSessions(tenantId, page.limit, page.offset, viewer.scope, search, channel),
        repo.countSessions(tenantId, viewer.scope, search, channel),
      ])
      return {
        sessions: rows.map((r) => ({
          session_id: r.id,
          bot_public_id: r.bot_public_id,
          channel: r.channel,
          subject: r.subject ?? null,
          mode: r.mode,
          message_count: r.message_count,
          last_question: r.last_question,
          last_answer_preview: r.last_answer_preview,
          last_activity: r.last_activity_at.toISOString(),
          chat_ended: r.owner !== 'bot',
          ticket_number: r.ticket_number ?? null,
          owner: r.owner,
          assignee_name: r.owner === 'human' ? (r.assignee_name ?? null) : null,
          visitor_gone: r.visitor_gone,
          language: r.language,
          language_source: r.language_source,
        })),
        total,
      }
    },

    async sessionLog(tenantId: string, sessionId: string, opts: { includeOriginal: boolean }, viewer: Viewer) {
      if (opts.includeOriginal && !viewer.canViewOriginal) throw forbidden(`Your role (${viewer.role}) may not show original text unless granted`)
      await sessionOr404(tenantId, sessionId, viewer.scope)
      const rows = await repo.sessionMessages(tenantId, sessionId)
      const docs = await repo.citedDocuments(tenantId, [...new Set(rows.flatMap((m) => m.source_documents ?? []))])
      const byId = new Map(docs.map((d) => [d.id, { id: d.id, title: d.title ?? d.filename, url: d.source_url }]))
      const shown: (Record<string, number> | null)[] = []
      const optional = rows.some((m) => m.from_operator) ? await privacy.optionalTypes(tenantId) : []
      const [callsOf, files] = await Promise.all([
        actionCallsByMessage(tenantId, sessionId, rows),
        deps.attachments
          ? deps.attachments.byMessages(
              tenantId,
              rows.map((m) => m.id),
            )
          : new Map(),
      ])
      const messages = rows.map((m) => {
        // an operator's message is stored as sent to the visitor; this view redacts it as it does the visitor's text
        const operator = m.from_operator ? redactOperatorText(m.content, optional) : null
        const operatorChanged = operator !== null && operator !== m.content
        const original = opts.includeOriginal ? (operatorChanged ? m.content : decryptOrNull(m.content_original_enc)) : null
        if (original !== null) shown.push(operatorChanged ? entityCounts(m.content, optional) : m.pii_counts)
        return {
          id: m.id,
          session_id: m.session_id,
          role: m.role,
          content: operator ?? m.content,
          content_original: original,
          content_original_available: operatorChanged || m.content_original_enc !== null,
          feedback: m.feedback,
          ideal_answer: m.ideal_answer,
          created_at: m.created_at.toISOString(),
          from_operator: m.from_operator,
          author_name: m.from_operator ? m.author_name : null,
          source_documents: m.source_documents ?? [],
          /** Which documents the answer cited, by title (for the operator; a deleted document drops out). */
          cited_documents: (m.source_documents ?? []).flatMap((id) => byId.get(id) ?? []),
          sources: m.sources ?? [],
          tokens_used: m.tokens_used,
          debug: m.debug ?? null,
          action_calls: callsOf.get(m.id) ?? [],
          ...(m.from_operator ? { mailed_at: m.mailed_at ? new Date(m.mailed_at).toISOString() : null } : {}),
          attachments: files.get(m.id) ?? [],
        }
      })
      if (shown.length) {
        const counts = sumCounts(shown)
        if (Object.keys(counts).length === 0) counts.UNKNOWN = shown.length
        await privacy.insertEvents(
          tenantId,
          piiEvents(counts, { action: 'original_viewed', direction: 'message', sessionId, actorUserId: viewer.userId }),
          clock.now(),
        )
        await deps.audit.record(tenantId, {
          ...actorEntry(viewer),
          action: 'showed_original',
          itemType: 'conversation',
          itemId: sessionId,
          detail: { messages: shown.length },
        })
      }
      return { session_id: sessionId, messages }
    },

    async deleteOriginals(tenantId: string, sessionId: string, viewer: Viewer) {
      const actorUserId = viewer.userId
      await sessionOr404(tenantId, sessionId, viewer.scope)
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
        await deps.audit.record(
          tenantId,
          { ...actorEntry(viewer), action: 'deleted_original', itemType: 'conversation', itemId: sessionId, detail: { deleted_count: erased.length } },
          trx,
        )
        return { deleted_count: erased.length }
      })
    },

    async feedback(tenantId: string, messageId: string, input: { feedback: Feedback; ideal_answer?: string | null }, viewer: Viewer) {
      const m = await repo.findMessage(tenantId, messageId)
      if (!m || (viewer.scope !== null && !inScope(viewer.scope, (await repo.findSession(tenantId, m.session_id))?.bot_id))) throw notFound('Message not found')
      if (m.role !== 'assistant') throw badRequest('Feedback can only be given on assistant messages', 'not_assistant_message')
      const ideal = input.ideal_answer === undefined ? m.ideal_answer : input.ideal_answer?.trim() || null
      const session = deps.events ? await repo.findSession(tenantId, m.session_id) : null
      // the payload carries the ideal answer redacted (read before the transaction: the embedded database has one connection)
      const idealRedacted = ideal && deps.events ? redactOperatorText(ideal, await privacy.optionalTypes(tenantId)) : null
      const row = await db.transaction().execute(async (trx) => {
        const r = await repo.setFeedback(tenantId, messageId, input.feedback, ideal, trx)
        await deps.onFeedback?.(tenantId, m.session_id, trx)
        if (ideal && ideal !== m.ideal_answer && deps.onIdealAnswer) {
          const question = await repo.questionBefore(tenantId, m, trx)
          if (question) await deps.onIdealAnswer(tenantId, { question, answer: ideal }, trx)
        }
        const data = { message_id: messageId, session_id: m.session_id, bot_id: session?.bot_id ?? null, feedback: input.feedback, ideal_answer: idealRedacted }
        await deps.events?.emit(tenantId, { type: 'feedback.received', botId: session?.bot_id ?? null, data }, trx)
        return r
      })
      return { id: row!.id, feedback: row!.feedback, ideal_answer: row!.ideal_answer }
    },

    async badAnswers(tenantId: string, page: { limit: number; offset: number }, viewer: Viewer) {
      const [rows, total] = await Promise.all([repo.badAnswers(tenantId, page.limit, page.offset, viewer.scope), repo.countBadAnswers(tenantId, viewer.scope)])
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

    async history(tenantId: string, sessionId: string, viewer: Viewer) {
      const s = await sessionOr404(tenantId, sessionId, viewer.scope)
      const [rows, ticket, owner] = await Promise.all([
        repo.sessionMessages(tenantId, sessionId),
        deps.handOff.latestTicketNumber(tenantId, sessionId),
        repo.ownerOf(tenantId, sessionId),
      ])
      return {
        session_id: sessionId,
        messages: rows.map(presentMessage),
        chat_ended: s.owner !== 'bot',
        ticket_number: ticket,
        owner: owner?.owner ?? s.owner,
        assignee_name: owner?.assignee_name ?? null,
        visitor_gone: s.visitor_gone,
        language: s.language,
        language_source: s.language_source,
      }
    },
  }
}

/** A MessageResponse: an operator's message names its author. */
export const presentMessage = (m: {
  id: string
  role: 'user' | 'assistant'
  content: string
  created_at: Date
  from_operator: boolean
  author_name: string | null
}) => ({
  id: m.id,
  role: m.role,
  content: m.content,
  created_at: m.created_at.toISOString(),
  from_operator: m.from_operator,
  author_name: m.from_operator ? m.author_name : null,
})

export type ChatLogsService = ReturnType<typeof createChatLogsService>
