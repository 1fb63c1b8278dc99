import { randomUUID } from 'node:crypto'
import type { Db } from '../../db/client.js'
import type { AssistCitation } from '../../db/schema/assist.js'
import type { Viewer } from '../../http/auth.js'
import type { Clock } from '../../lib/clock.js'
import type { Cipher } from '../../lib/crypto.js'
import { AppError, badRequest, conflict, notFound, unavailable } from '../../lib/errors.js'
import { promptSources, usableHits } from '../chat/stages/05-retrieve.js'
import { citedSources } from '../chat/stages/10-persist.js'
import { LlmUnavailableError, type LlmClient, type LlmMessage } from '../llm/llm.js'
import type { RetrievalService } from '../retrieval/retrieval.service.js'
import {
  buildSuggestPrompt,
  buildSummaryPrompt,
  citedNumbers,
  cleanDraft,
  cleanInstruction,
  CONVERSATION_MESSAGES,
  conversationLanguage,
  searchQuery,
  sentUnedited,
  transcript,
} from './assist.fns.js'
import type { AssistRepo, ConversationHead } from './assist.repo.js'

export interface AssistSettings {
  model: string
  timeoutMs: number
  maxTokens: number
  topK: number
  sourceTokens: number
  minScore: number
}

type CitedSource = { n: number; documentId: string | null; title: string; url: string | null }

const sameHead = (a: ConversationHead, b: ConversationHead) => a.latestId === b.latestId && a.count === b.count
const stale = () => new AppError(409, 'stale', 'The conversation moved on while this was written: ask again', { coded: true })
const providerDown = () => unavailable('The language-model provider is unavailable; please try again later', 'llm_unavailable')

/**
 * Help for the person on a ticket: a suggested reply written by the workspace's model from the conversation and
 * the bot's own retrieval (cited, in the visitor's language, never sent by itself), and a summary of the
 * conversation kept until a new message arrives. Each costs one model call (plus the retrieval's query
 * embedding for a suggestion), made outside any transaction; its tokens are counted in the workspace's usage.
 */
export function createAssistService(deps: {
  db: Db
  clock: Clock
  cipher: Pick<Cipher, 'decrypt'>
  repo: AssistRepo
  llm: Pick<LlmClient, 'chat'>
  retrieval: Pick<RetrievalService, 'search'>
  settings: AssistSettings
}) {
  const { repo, clock, settings } = deps

  async function ticketOf(tenantId: string, ticketId: string, viewer: Viewer) {
    const t = await repo.ticket(tenantId, ticketId, viewer.scope)
    if (!t) throw notFound('Ticket not found')
    if (!t.session_id) throw conflict('This ticket has no conversation', 'no_conversation')
    if (!t.llm_key_enc) throw badRequest('No language-model API key is configured for this workspace', 'llm_key_missing')
    return { ...t, sessionId: t.session_id, apiKey: deps.cipher.decrypt(t.llm_key_enc), botName: t.bot_name ?? 'the bot' }
  }

  async function callModel(apiKey: string, messages: LlmMessage[], maxTokens: number) {
    const start = performance.now()
    try {
      const r = await deps.llm.chat({ apiKey, model: settings.model, messages, temperature: 0.3, maxTokens, timeoutMs: settings.timeoutMs })
      return { text: r.text, tokens: r.usage.total_tokens, modelMs: Math.round(performance.now() - start) }
    } catch (err) {
      if (err instanceof LlmUnavailableError) throw providerDown()
      throw err
    }
  }

  return {
    /** A suggested reply for the ticket's conversation; 409 stale when a message arrived while it was written. */
    async suggest(tenantId: string, ticketId: string, body: { instruction?: string }, viewer: Viewer) {
      const t = await ticketOf(tenantId, ticketId, viewer)
      const instruction = cleanInstruction(body.instruction)
      const { lines, head: before } = await repo.conversation(tenantId, t.sessionId, CONVERSATION_MESSAGES)
      const language = conversationLanguage(t.session_language, lines, t.locale)
      let tokens = 0
      let found: Awaited<ReturnType<RetrievalService['search']>> | null = null
      try {
        found = await deps.retrieval.search(tenantId, searchQuery(lines, t.primary_question, t.user_note), {
          apiKey: t.apiKey,
          k: settings.topK,
          budgetTokens: settings.sourceTokens,
        })
        tokens += found.tokens
      } catch (err) {
        if (!(err instanceof LlmUnavailableError)) throw err
        // no embedding: the reply is still written, from the conversation alone
      }
      const { prompt, citable } = promptSources(found ? usableHits(found, settings.minScore) : [])
      const messages = buildSuggestPrompt({
        botName: t.botName,
        agentInstructions: t.agent_instructions,
        language,
        sources: prompt,
        conversation: transcript(lines, t.botName),
        instruction,
        note: t.user_note,
      })
      const out = await callModel(t.apiKey, messages, settings.maxTokens)
      tokens += out.tokens
      const text = cleanDraft(out.text)
      const cited: AssistCitation[] = citedSources(text, citedNumbers(text), citable).map((s) => ({
        n: s.n,
        document_id: s.documentId,
        title: s.title,
        url: s.url,
      }))
      const after = await repo.head(tenantId, t.sessionId)
      const moved = !sameHead(before, after)
      const id = randomUUID()
      await repo.insert(tenantId, {
        id,
        kind: 'suggestion',
        ticketId,
        sessionId: t.sessionId,
        botId: t.bot_id,
        userId: viewer.userId,
        text,
        language,
        cited,
        head: before,
        instruction,
        tokens,
        modelMs: out.modelMs,
        stale: moved,
        now: clock.now(),
      })
      if (moved) throw stale()
      if (!text) throw providerDown()
      return { id, text, cited, language, based_on_message_id: before.latestId }
    },

    /** The ticket's summary: the stored one while no message arrived since, else written again. */
    async summary(tenantId: string, ticketId: string, viewer: Viewer) {
      const t = await ticketOf(tenantId, ticketId, viewer)
      const [head, cached] = await Promise.all([repo.head(tenantId, t.sessionId), repo.latestSummary(tenantId, ticketId)])
      if (cached && cached.based_on_message_id === head.latestId && cached.message_count === head.count) {
        return { summary: cached.text, language: cached.language, message_count: cached.message_count, generated_at: cached.created_at.toISOString() }
      }
      const { lines } = await repo.conversation(tenantId, t.sessionId, CONVERSATION_MESSAGES)
      // for the team: the workspace's team language (its escalation mails'), English without one
      const language = t.escalation_language || 'en'
      const messages = buildSummaryPrompt({
        botName: t.botName,
        language,
        question: t.primary_question,
        note: t.user_note,
        conversation: transcript(lines, t.botName),
      })
      const out = await callModel(t.apiKey, messages, 300)
      const text = cleanDraft(out.text, 2000)
      if (!text) throw providerDown()
      const after = await repo.head(tenantId, t.sessionId)
      const now = clock.now()
      await repo.insert(tenantId, {
        id: randomUUID(),
        kind: 'summary',
        ticketId,
        sessionId: t.sessionId,
        botId: t.bot_id,
        userId: viewer.userId,
        text,
        language,
        cited: [],
        head,
        instruction: null,
        tokens: out.tokens,
        modelMs: out.modelMs,
        // written over an older conversation: shown, not kept as the cache
        stale: !sameHead(head, after),
        now,
      })
      return { summary: text, language, message_count: head.count, generated_at: now.toISOString() }
    },

    /**
     * A message posted with `suggestion_id` (in the message's transaction): the suggestion counts as used, unedited
     * when the text is the same. A suggestion of another ticket or workspace is a 404; a second use counts once.
     */
    async used(tenantId: string, u: { ticketId: string; suggestionId: string; messageId: string; content: string }, trx: Db): Promise<void> {
      const s = await repo.suggestionOf(tenantId, u.ticketId, u.suggestionId, trx)
      if (!s) throw notFound('Suggestion not found')
      if (s.used_at) return
      await repo.markUsed(tenantId, s.id, { messageId: u.messageId, unedited: sentUnedited(s.text, u.content), now: clock.now() }, trx)
    },

    /**
     * An e-mail bot in draft mode (issue 52): its answer, not sent, kept as the ticket's suggested reply (no member
     * asked for it, no model call of its own: the turn's tokens are counted with the turn).
     */
    async keepBotDraft(tenantId: string, d: { sessionId: string; text: string; cited: CitedSource[]; language: string }): Promise<string | null> {
      const ticket = await repo.ticketOfSession(tenantId, d.sessionId)
      if (!ticket) return null
      const head = await repo.head(tenantId, d.sessionId)
      const id = randomUUID()
      await repo.insert(tenantId, {
        id,
        kind: 'suggestion',
        ticketId: ticket.id,
        sessionId: d.sessionId,
        botId: ticket.bot_id,
        userId: null,
        text: d.text,
        language: d.language,
        cited: d.cited.map((s) => ({ n: s.n, document_id: s.documentId, title: s.title, url: s.url })),
        head,
        instruction: null,
        tokens: 0,
        modelMs: null,
        stale: false,
        now: clock.now(),
      })
      return id
    },

    /** The bot's draft waiting on the ticket (GET /escalations/{id}/draft): the suggestion panel offers it. */
    async waitingDraft(tenantId: string, ticketId: string, viewer: Viewer) {
      const t = await repo.ticket(tenantId, ticketId, viewer.scope)
      if (!t) throw notFound('Ticket not found')
      const d = await repo.waitingDraft(tenantId, ticketId)
      return {
        draft: d
          ? {
              id: d.id,
              text: d.text,
              cited: d.cited as AssistCitation[],
              language: d.language,
              based_on_message_id: d.based_on_message_id,
              created_at: d.created_at.toISOString(),
            }
          : null,
      }
    },

    figures: repo.figures,
  }
}

export type AssistService = ReturnType<typeof createAssistService>
