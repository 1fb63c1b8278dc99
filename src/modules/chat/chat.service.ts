import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Config } from '../../config.js'
import type { Db } from '../../db/client.js'
import type { QuestionOutcome, TicketTrigger, TranscriptEntry } from '../../db/schema/chat.js'
import type { Clock } from '../../lib/clock.js'
import type { Cipher } from '../../lib/crypto.js'
import { badRequest, notFound } from '../../lib/errors.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { BotRow } from '../bots/bots.service.js'
import type { TicketsRepo } from '../escalations/tickets.repo.js'
import type { TicketsService } from '../escalations/tickets.service.js'
import type { LlmClient } from '../llm/llm.js'
import type { RetrievalResult, RetrievalService } from '../retrieval/retrieval.service.js'
import type { ProfileData } from '../knowledge/knowledge.fns.js'
import type { PrivacyRepo } from '../privacy/privacy.repo.js'
import type { IdentityClaims } from '../tenants/identity-token.fns.js'
import type { ChatRepo, SessionRow } from './chat.repo.js'
import { afterEscalation } from './stages/after-escalation.js'
import { decide, type Decision } from './stages/decide.js'
import { generateAnswer, PartialAnswerError } from './stages/generate.js'
import { isSmalltalk, matchesHuman, matchesInjection, runGuards, type GuardVerdict } from './stages/guards.js'
import { localeLanguage, visitorLanguage } from './stages/language.js'
import { createStreamCleaner, linkPolicy } from './stages/links.js'
import { canned, type CannedKey } from './stages/messages.js'
import { citedSources, documentIds, piiEvents, preview, sourceRefs, sumCounts, type CitableSource } from './stages/persist.js'
import { buildAnswerPrompt, type BusinessProfile } from './stages/prompt.js'
import { redactMessage, type Redaction } from './stages/redact.js'
import { evidence, promptSources, retrieve, usableHits } from './stages/retrieve.js'
import { looksLikeFollowUp, rewriteQuery, type Rewrite } from './stages/rewrite.js'
import { historyTurns, readIdentity, resolveSession } from './stages/session.js'
import { validateAnswer, type Verdict } from './stages/validate.js'

export interface NewSessionInput {
  tenantId: string
  botId: string
  channel: 'api' | 'widget'
  mode: 'identified' | 'anonymous'
  identity?: IdentityClaims | null
  locale?: string | null
}

export type TurnEvent = { type: 'status'; stage: 'thinking' | 'searching' | 'writing' } | { type: 'chunk'; text: string }

export interface TurnInput {
  tenantId: string
  bot: BotRow
  sessionId?: string | null
  message: string
  locale?: string | null
  channel: 'api' | 'widget'
  signal?: AbortSignal
  onEvent?: (e: TurnEvent) => void
}

export interface TurnResult {
  text: string
  session_id: string
  message_id: string
  chat_ended: boolean
  ticket_number?: string
  delivered_to_operator: boolean
  source_documents: string[]
  sources: { title: string; url: string }[]
  tokens_used: number
}

export type EscalateTrigger = 'user_request' | 'answer_rejected' | 'llm_unavailable'

export interface EscalateInput {
  trigger?: EscalateTrigger | string
  user_note?: string | null
  failure_type?: string | null
  original_user_message?: string | null
}

/**
 * A turn in a session that waits for something after an escalation (session.awaiting, e.g. the visitor's
 * e-mail). The escalations module provides it; returning null runs the normal pipeline.
 */
export type AwaitingHandler = (ctx: {
  tenantId: string
  bot: BotRow
  session: SessionRow
  /** The visitor's message, redacted, with its encrypted original. */
  message: Redaction
  language: string
}) => Promise<{ text: string; chatEnded?: boolean; deliveredToOperator?: boolean; ticketNumber?: string } | null>

type ChatConfig = Pick<
  Config,
  | 'CHAT_MODEL'
  | 'GUARD_MODEL'
  | 'GUARDS_ENABLED'
  | 'GUARD_INJECTION_ENABLED'
  | 'GUARD_RELEVANCE_ENABLED'
  | 'GUARD_HUMAN_ENABLED'
  | 'GUARD_TIMEOUT_MS'
  | 'VALIDATION_ENABLED'
  | 'CHAT_FIRST_TOKEN_TIMEOUT_MS'
  | 'CHAT_TIMEOUT_MS'
  | 'CHAT_MAX_ANSWER_TOKENS'
  | 'CHAT_HISTORY_TURNS'
  | 'CHAT_HISTORY_MESSAGE_CHARS'
  | 'RETRIEVAL_TOP_K'
  | 'RETRIEVAL_MIN_SCORE'
  | 'RETRIEVAL_CAVEAT_SCORE'
  | 'FAQ_DIRECT_SCORE'
>

export interface ChatServiceDeps {
  db: Db
  clock: Clock
  cipher: Cipher
  log: Pick<Logger, 'info' | 'warn'>
  llm: LlmClient
  repo: ChatRepo
  tickets: TicketsService
  ticketsRepo: Pick<TicketsRepo, 'latestNumberForSession'>
  /** The PII audit trail (events of a ticket's transcript; a turn's own go in with the turn). */
  privacy: Pick<PrivacyRepo, 'insertEvents'>
  retrieval: Pick<RetrievalService, 'search'>
  bots: Pick<BotsRepo, 'findDefault' | 'findTenantBotByPublicId'>
  config: ChatConfig
  awaiting?: AwaitingHandler
  /** The tenant's settings a turn needs (chat.repo's read by default; the wiring passes a cached one). */
  tenantSettings?: ChatRepo['tenantSettings']
  /** The tenant's knowledge profile (product name, topics, glossary), for the guard and the prompt. */
  profileFor?: (tenantId: string) => Promise<ProfileData | null>
  /** Measures the time a turn waits on the model (see model-meter.ts); `llm` must be its metered client. */
  measure?: <T>(fn: (modelMs: () => number) => Promise<T>) => Promise<T>
}

/** Who the relevance guard judges against: the product (or bot) name, its topics, then the bot's instructions. */
export function guardBusiness(bot: { name: string; agent_instructions: string | null }, profile: BusinessProfile | null): { name: string; description: string | null } {
  const topics = (profile?.topics ?? []).map((t) => t.replace(/\s+/g, ' ').trim()).filter(Boolean).slice(0, 20)
  const description = [topics.length ? `Topics: ${topics.join('; ')}.` : null, bot.agent_instructions?.trim() || null].filter(Boolean).join('\n')
  return { name: profile?.productName?.trim() || bot.name, description: description || null }
}

/** Timings of the stages of one turn, in ms. */
class Stopwatch {
  readonly timings: Record<string, number> = {}
  private readonly start = performance.now()
  async time<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t = performance.now()
    try {
      return await fn()
    } finally {
      this.timings[name] = Math.round((performance.now() - t) * 100) / 100
    }
  }
  total() {
    return Math.round((performance.now() - this.start) * 100) / 100
  }
}

const TRANSCRIPT_MESSAGES = 50

export function createChatService(deps: ChatServiceDeps) {
  const { db, clock, cipher, log, llm, repo, tickets, config } = deps
  const tenantSettings = deps.tenantSettings ?? repo.tenantSettings

  async function tenantKey(tenantId: string): Promise<{ apiKey: string; optional: string[] }> {
    const t = await tenantSettings(tenantId)
    if (!t) throw notFound('Tenant not found')
    if (!t.llm_key_enc) throw badRequest('No language-model API key is configured for this tenant', 'llm_key_missing')
    return { apiKey: cipher.decrypt(t.llm_key_enc), optional: t.pii_optional_types ?? [] }
  }

  /** Turn timestamps: the answer always sorts after the question, even on a clock that stands still. */
  function turnTimes() {
    const asked = clock.now()
    const answered = new Date(Math.max(clock.now().getTime(), asked.getTime() + 1))
    return { asked, answered }
  }

  async function transcriptOf(tenantId: string, sessionId: string, trx: Db): Promise<TranscriptEntry[]> {
    const rows = await repo.recentMessages(tenantId, sessionId, TRANSCRIPT_MESSAGES, trx)
    return rows.map((m) => ({ role: m.from_operator ? 'operator' : m.role, content: m.content, created_at: m.created_at.toISOString() }))
  }

  interface Finish {
    tenantId: string
    bot: BotRow
    session: SessionRow
    question: Redaction
    text: string
    outcome: QuestionOutcome | null
    trigger?: TicketTrigger | null
    bestScore?: number | null
    cited?: CitableSource[]
    tokens: number
    debug: Record<string, unknown>
    escalate?: { trigger: TicketTrigger; evidence: unknown[]; language: string; key: (created: boolean) => CannedKey }
    chatEnded?: boolean
    deliveredToOperator?: boolean
    ticketNumber?: string
  }

  /** Stage 10: both messages, the session's summary, PII events, the question log and any ticket, in one transaction. */
  async function persistTurn(f: Finish): Promise<TurnResult> {
    const { tenantId, session } = f
    const userId = randomUUID()
    const assistantId = randomUUID()
    const { asked, answered } = turnTimes()
    const cited = f.cited ?? []
    let text = f.text
    let ticketNumber = f.ticketNumber
    let delivered = f.deliveredToOperator ?? false
    const write = async (trx?: Db) => {
      await repo.writeTurn(
        tenantId,
        {
          sessionId: session.id,
          messages: [
            { id: userId, sessionId: session.id, role: 'user', content: f.question.text, contentOriginalEnc: f.question.originalEnc, piiCounts: f.question.counts, createdAt: asked },
            {
              id: assistantId,
              sessionId: session.id,
              role: 'assistant',
              content: text,
              sourceDocuments: documentIds(cited),
              sources: sourceRefs(cited),
              tokensUsed: f.tokens,
              debug: f.debug,
              createdAt: answered,
            },
          ],
          lastQuestion: preview(f.question.text, 500),
          lastAnswerPreview: preview(text),
          chatEnded: f.chatEnded ?? false,
          now: answered,
          pii: piiEvents(f.question.counts, { action: 'redacted', direction: 'message', sessionId: session.id }),
          questionLog: f.outcome
            ? { botId: f.bot.id, messageId: assistantId, question: f.question.text, outcome: f.outcome, trigger: f.trigger ?? f.escalate?.trigger ?? null, bestScore: f.bestScore ?? null }
            : null,
        },
        trx,
      )
    }
    if (!f.escalate) {
      await write()
    } else {
      const esc = f.escalate
      // a ticket needs the session lock (one open ticket per session) and the tenant's counter: a transaction
      await db.transaction().execute(async (trx) => {
        await repo.lockSession(tenantId, session.id, trx)
        const transcript = [...(await transcriptOf(tenantId, session.id, trx)), { role: 'user', content: f.question.text, created_at: asked.toISOString() }]
        const { ticket, created } = await tickets.open(
          tenantId,
          {
            sessionId: session.id,
            botId: f.bot.id,
            trigger: esc.trigger,
            primaryQuestion: f.question.text,
            primaryQuestionOriginalEnc: f.question.originalEnc,
            transcript,
            identity: readIdentity(session, cipher),
            visitorEmailEnc: session.visitor_email_enc,
            evidence: esc.evidence,
          },
          trx,
        )
        text = canned(esc.key(created), esc.language, { bot: f.bot.name, ticket: ticket.ticket_number })
        // the escalations module's follow-up: ask for an e-mail, or whether there is anything else
        text = await afterEscalation(trx, cipher, { tenantId, sessionId: session.id, ticket, question: f.question, language: esc.language, text })
        if (created) ticketNumber = ticket.ticket_number
        delivered = true
        f.debug.ticket = { number: ticket.ticket_number, created, priority: ticket.priority }
        await write(trx)
      })
    }
    return {
      text,
      session_id: session.id,
      message_id: assistantId,
      chat_ended: (f.chatEnded ?? false) || session.chat_ended,
      ...(ticketNumber ? { ticket_number: ticketNumber } : {}),
      delivered_to_operator: delivered,
      source_documents: documentIds(cited),
      sources: sourceRefs(cited),
      tokens_used: f.tokens,
    }
  }

  /** A failed turn still leaves the visitor's (redacted) message in the log, so an escalation has it. */
  async function persistQuestionOnly(tenantId: string, session: SessionRow, question: Redaction): Promise<void> {
    const now = clock.now()
    await repo
      .writeTurn(tenantId, {
        sessionId: session.id,
        messages: [{ id: randomUUID(), sessionId: session.id, role: 'user', content: question.text, contentOriginalEnc: question.originalEnc, piiCounts: question.counts, createdAt: now }],
        lastQuestion: preview(question.text, 500),
        lastAnswerPreview: null,
        chatEnded: false,
        now,
        pii: piiEvents(question.counts, { action: 'redacted', direction: 'message', sessionId: session.id }),
        questionLog: null,
      })
      .catch((err) => log.warn({ err: { message: (err as Error).message } }, 'could not store the question of a failed turn'))
  }

  /**
   * The answer pipeline, stage by stage (see docs/ARCHITECTURE.md): session, redaction, guards,
   * rewriting, retrieval, decision, prompt, generation, validation and links, persistence.
   */
  function runTurn(input: TurnInput): Promise<TurnResult> {
    return deps.measure ? deps.measure((modelMs) => turn(input, modelMs)) : turn(input, () => 0)
  }

  async function turn(input: TurnInput, modelMs: () => number): Promise<TurnResult> {
    const sw = new Stopwatch()
    const { tenantId, bot } = input
    const emit = input.onEvent ?? (() => {})
    // The profile is read alongside (cached per tenant; a failure only means answering without it).
    const profileP: Promise<BusinessProfile | null> = deps.profileFor
      ? deps.profileFor(tenantId).then(
          (p) => (p ? { productName: p.product_name, topics: p.topics, glossary: p.glossary } : null),
          () => null,
        )
      : Promise.resolve(null)
    const { apiKey, optional } = await sw.time('tenant', () => tenantKey(tenantId))
    emit({ type: 'status', stage: 'thinking' })

    // 1. session and history
    const { session, created: newSession } = await sw.time('session', () =>
      resolveSession(repo, { tenantId, botId: bot.id, sessionId: input.sessionId, channel: input.channel, locale: input.locale ?? null, now: clock.now() }),
    )
    // 2. redaction, before anything leaves the process or is stored
    const question = redactMessage(input.message.trim(), optional, cipher)
    const language = visitorLanguage(question.text, input.locale ?? session.locale)
    const debug: Record<string, unknown> = { language, channel: input.channel }
    const reply = (text: string) => emit({ type: 'chunk', text })

    if (session.chat_ended) {
      const r = await persistTurn({ tenantId, bot, session, question, text: canned('chat_ended', language), outcome: null, tokens: 0, debug: { ...debug, closed: true } })
      reply(r.text)
      return { ...r, chat_ended: true }
    }
    if (session.awaiting && deps.awaiting) {
      const handled = await deps.awaiting({ tenantId, bot, session, message: question, language })
      if (handled) {
        const r = await persistTurn({
          tenantId,
          bot,
          session,
          question,
          text: handled.text,
          outcome: null,
          tokens: 0,
          debug: { ...debug, awaiting: session.awaiting },
          chatEnded: handled.chatEnded,
          deliveredToOperator: handled.deliveredToOperator,
          ticketNumber: handled.ticketNumber,
        })
        reply(r.text)
        return r
      }
    }
    const loadHistory = async () =>
      historyTurns(await repo.recentMessages(tenantId, session.id, config.CHAT_HISTORY_TURNS * 2), config.CHAT_HISTORY_TURNS, config.CHAT_HISTORY_MESSAGE_CHARS)
    const history = newSession ? [] : await sw.time('history', loadHistory)

    // 3 + 4 + 5: guards, rewriting and retrieval overlap; retrieval waits only for a rewrite it needs
    const profile = await profileP
    const decisiveByPattern = matchesInjection(question.text) || matchesHuman(question.text) || isSmalltalk(question.text)
    const followUp = looksLikeFollowUp(question.text, history)
    const guardP = sw.time('guards', () =>
      runGuards(llm, {
        apiKey,
        model: config.GUARD_MODEL,
        timeoutMs: config.GUARD_TIMEOUT_MS,
        enabled: config.GUARDS_ENABLED,
        switches: { injection: config.GUARD_INJECTION_ENABLED, relevance: config.GUARD_RELEVANCE_ENABLED, human: config.GUARD_HUMAN_ENABLED },
        question: question.text,
        business: guardBusiness(bot, profile),
        signal: input.signal,
      }),
    )
    const rewriteP: Promise<Rewrite> = followUp
      ? sw.time('rewrite', () =>
          rewriteQuery(llm, { apiKey, model: config.GUARD_MODEL, timeoutMs: config.GUARD_TIMEOUT_MS, question: question.text, history, signal: input.signal }),
        )
      : Promise.resolve({ query: question.text, rewritten: false, tokens: 0, ms: 0 })
    const retrievalP: Promise<RetrievalResult | null> = decisiveByPattern
      ? Promise.resolve(null)
      : rewriteP.then((rw) => {
          emit({ type: 'status', stage: 'searching' })
          return sw.time('retrieval', () => retrieve(deps.retrieval, tenantId, rw.query, { apiKey, k: config.RETRIEVAL_TOP_K, signal: input.signal }))
        })
    retrievalP.catch(() => {})
    const guard: GuardVerdict = await guardP
    const rewrite = await rewriteP
    let tokens = guard.tokens + rewrite.tokens
    debug.guard = { source: guard.source, injection: guard.injection, wants_human: guard.wantsHuman, relevant: guard.relevant, smalltalk: guard.smalltalk, error: guard.error }
    debug.rewrite = { query: rewrite.query, rewritten: rewrite.rewritten, error: rewrite.error }

    const blocked = guard.injection || guard.wantsHuman
    const found = blocked ? null : await retrievalP
    if (found) {
      tokens += found.tokens
      debug.retrieval = { best: Math.round(found.bestScore * 10000) / 10000, corpus_chunks: found.corpusChunks, vector: found.vectorUsed, timings: found.timings, hits: evidence(found.hits) }
    }

    // 6. decision
    const decision: Decision = decide({
      guard,
      corpusChunks: found?.corpusChunks ?? 0,
      bestScore: found?.bestScore ?? 0,
      minScore: config.RETRIEVAL_MIN_SCORE,
      caveatScore: config.RETRIEVAL_CAVEAT_SCORE,
    })
    debug.decision = decision
    const bestScore = found ? found.bestScore : null
    /** Stage 10 with the timings so far in the stored debug record; the log line gets the total with persistence. */
    const done = async (f: Parameters<typeof persistTurn>[0]) => {
      debug.timings = { ...sw.timings, model: modelMs(), total: sw.total() }
      const res = await sw.time('persist', () => persistTurn(f))
      const total = sw.total()
      const model = modelMs()
      log.info(
        { tenant_id: tenantId, session_id: res.session_id, decision: decision.kind, tokens: res.tokens_used, timings: { ...sw.timings, model, service: Math.round((total - model) * 100) / 100, total } },
        'chat turn',
      )
      return res
    }

    if (decision.kind === 'refuse') {
      const text = canned(decision.reason === 'injection' ? 'refuse_injection' : 'refuse_off_topic', language, { bot: bot.name })
      const r = await done({ tenantId, bot, session, question, text, outcome: 'refused', bestScore, tokens, debug })
      reply(r.text)
      return r
    }
    if (decision.kind === 'smalltalk') {
      const thanks = /\b(?:thank|thanks|thx|ty|danke|merci|gracias|grazie|спасибо)\b/i.test(question.text)
      const r = await done({ tenantId, bot, session, question, text: canned(thanks ? 'thanks' : 'greeting', language), outcome: null, tokens, debug })
      reply(r.text)
      return r
    }
    if (decision.kind === 'escalate') {
      const r = await done({
        tenantId,
        bot,
        session,
        question,
        text: '',
        outcome: 'escalated',
        bestScore,
        tokens,
        debug,
        escalate: {
          trigger: decision.trigger,
          evidence: found ? evidence(found.hits) : [],
          language,
          key: (created) => (!created ? 'escalated_existing' : decision.trigger === 'user_request' ? 'escalated_user_request' : 'escalated_no_answer'),
        },
      })
      reply(r.text)
      return r
    }

    // 6b. a very close approved FAQ (knowledge module) is the answer itself, cited as the FAQ: no generation
    const faq = found?.hits.filter((h) => h.kind === 'faq' && h.confidence >= config.FAQ_DIRECT_SCORE && h.text.includes('\nA: ')).sort((x, y) => y.confidence - x.confidence)[0]
    if (faq) {
      debug.faq = { id: faq.id.slice(4), score: faq.confidence, direct: true }
      const text = faq.text.slice(faq.text.indexOf('\nA: ') + 4)
      const cited = [{ n: 1, documentId: null, title: `FAQ: ${faq.title}`, url: null, text: faq.text }]
      const r = await done({ tenantId, bot, session, question, text, outcome: 'answered', bestScore, cited, tokens, debug })
      reply(r.text)
      return r
    }

    // 7. prompt
    const hits = usableHits(found!, config.RETRIEVAL_MIN_SCORE)
    const { prompt: sources, citable } = promptSources(hits)
    const promptInput = {
      botName: bot.name,
      profile,
      agentInstructions: bot.agent_instructions,
      disclosure: bot.disclosure_level,
      language,
      locale: input.locale ?? session.locale,
      sources,
      history,
      question: question.text,
      caveat: decision.caveat,
    }

    // 8. generation, streamed through the link cleaner (9b) so no invented URL is ever shown
    emit({ type: 'status', stage: 'writing' })
    const policy = linkPolicy(hits, bot.allowed_domains ?? [])
    const cleaner = createStreamCleaner(policy)
    const streaming = !!input.onEvent
    let text: string
    let cited: CitableSource[]
    try {
      const gen = await sw.time('generation', () =>
        generateAnswer(llm, {
          apiKey,
          model: config.CHAT_MODEL,
          messages: buildAnswerPrompt(promptInput),
          maxTokens: config.CHAT_MAX_ANSWER_TOKENS,
          firstTokenTimeoutMs: config.CHAT_FIRST_TOKEN_TIMEOUT_MS,
          totalTimeoutMs: config.CHAT_TIMEOUT_MS,
          signal: input.signal,
          onDelta: (d) => {
            const piece = cleaner.push(d)
            if (piece) reply(piece)
          },
        }),
      )
      const tail = cleaner.end()
      if (tail) reply(tail)
      tokens += gen.tokens
      debug.generation = { attempts: gen.attempts, first_token_ms: gen.firstTokenMs }
      text = cleaner.result.text
      cited = citedSources(text, cleaner.result.cited, citable)
    } catch (err) {
      if (err instanceof PartialAnswerError && streaming) {
        // the visitor already sees part of an answer: say it broke off instead of pretending it is whole
        const tail = cleaner.end()
        if (tail) reply(tail)
        const note = `\n\n${canned('interrupted_note', language)}`
        reply(note)
        debug.generation = { attempts: err.attempts, interrupted: err.reason.kind }
        return done({ tenantId, bot, session, question, text: cleaner.result.text + note, outcome: 'answered', bestScore, tokens, debug, cited: [] })
      }
      await persistQuestionOnly(tenantId, session, question)
      if (err instanceof PartialAnswerError) throw err.reason
      throw err
    }
    if (cleaner.result.removed.length) debug.links_removed = cleaner.result.removed.length

    // 9a. validation: one regeneration when nothing was shown yet, else a note after the streamed text
    let verdict: Verdict | null = null
    if (config.VALIDATION_ENABLED && sources.length > 0) {
      verdict = await sw.time('validation', () =>
        validateAnswer(llm, { apiKey, model: config.GUARD_MODEL, timeoutMs: config.GUARD_TIMEOUT_MS, question: question.text, answer: text, sources, signal: input.signal }),
      )
      tokens += verdict.tokens
      debug.validation = { supported: verdict.supported, unsupported: verdict.unsupported.length, error: verdict.error, regenerated: false }
      if (verdict.supported === false) {
        if (streaming && text.length > 0) {
          const note = `\n\n${canned('unverified_note', language)}`
          reply(note)
          text += note
        } else {
          const again = await regenerate(apiKey, { ...promptInput, strict: true }, policy, citable, input.signal)
          tokens += again.tokens
          ;(debug.validation as Record<string, unknown>).regenerated = true
          ;(debug.validation as Record<string, unknown>).supported_after = again.supported
          if (again.supported === false || again.text === null) {
            text = canned('unverified_fallback', language)
            cited = []
          } else {
            text = again.text
            cited = again.cited
          }
        }
      }
    }

    // 10. persist
    const outcome: QuestionOutcome = decision.caveat ? 'caveat' : 'answered'
    return done({ tenantId, bot, session, question, text, outcome, bestScore, cited, tokens, debug })
  }

  /** The second attempt after a failed validation (not streamed: nothing of it was shown yet). */
  async function regenerate(
    apiKey: string,
    prompt: Parameters<typeof buildAnswerPrompt>[0],
    policy: ReturnType<typeof linkPolicy>,
    citable: CitableSource[],
    signal?: AbortSignal,
  ): Promise<{ text: string | null; cited: CitableSource[]; supported: boolean | null; tokens: number }> {
    const cleaner = createStreamCleaner(policy)
    let tokens = 0
    try {
      const gen = await generateAnswer(llm, {
        apiKey,
        model: config.CHAT_MODEL,
        messages: buildAnswerPrompt(prompt),
        maxTokens: config.CHAT_MAX_ANSWER_TOKENS,
        firstTokenTimeoutMs: config.CHAT_FIRST_TOKEN_TIMEOUT_MS,
        totalTimeoutMs: config.CHAT_TIMEOUT_MS,
        signal,
        onDelta: (d) => void cleaner.push(d),
      })
      cleaner.end()
      tokens += gen.tokens
    } catch {
      return { text: null, cited: [], supported: null, tokens }
    }
    const text = cleaner.result.text
    const v = await validateAnswer(llm, { apiKey, model: config.GUARD_MODEL, timeoutMs: config.GUARD_TIMEOUT_MS, question: prompt.question, answer: text, sources: prompt.sources, signal })
    return { text, cited: citedSources(text, cleaner.result.cited, citable), supported: v.supported, tokens: tokens + v.tokens }
  }

  async function sessionOr404(tenantId: string, sessionId: string) {
    const s = await repo.findSession(tenantId, sessionId)
    if (!s) throw notFound('Session not found')
    return s
  }

  const ESCALATE_KEYS: Record<EscalateTrigger, CannedKey> = {
    user_request: 'escalated_manual',
    answer_rejected: 'escalated_answer_rejected',
    llm_unavailable: 'escalated_llm_unavailable',
  }

  return {
    runTurn,

    /** The bot a server-to-server turn talks to: the named one (this tenant's, active) or the default. */
    async resolveBot(tenantId: string, publicId?: string | null): Promise<BotRow> {
      const id = publicId?.trim()
      const bot = id ? await deps.bots.findTenantBotByPublicId(tenantId, id) : await deps.bots.findDefault(tenantId)
      if (!bot || !bot.is_active) throw notFound('Bot not found')
      return bot
    },

    async createSession(input: NewSessionInput): Promise<{ id: string }> {
      const s = await repo.insertSession(input.tenantId, {
        botId: input.botId,
        channel: input.channel,
        mode: input.mode,
        identityEnc: input.identity ? cipher.encrypt(JSON.stringify(input.identity)) : null,
        locale: input.locale?.slice(0, 35) ?? null,
        now: clock.now(),
      })
      return { id: s.id }
    },

    async getSession(tenantId: string, sessionId: string) {
      const s = await repo.findSession(tenantId, sessionId)
      if (!s) return null
      return { ...s, ticket_number: await deps.ticketsRepo.latestNumberForSession(tenantId, sessionId) }
    },

    async history(tenantId: string, sessionId: string) {
      const s = await sessionOr404(tenantId, sessionId)
      const [messages, ticket] = await Promise.all([repo.sessionMessages(tenantId, sessionId), deps.ticketsRepo.latestNumberForSession(tenantId, sessionId)])
      return {
        session_id: s.id,
        messages: messages.map((m) => ({ id: m.id, role: m.role, content: m.content, created_at: m.created_at, from_operator: m.from_operator })),
        chat_ended: s.chat_ended,
        ticket_number: ticket,
      }
    },

    /**
     * A hand-off the visitor (or the integrating backend) asks for: opens a ticket (or adds to the open
     * one), tells the visitor its number in the chat, and closes the chat.
     */
    async escalate(tenantId: string, sessionId: string, input: EscalateInput) {
      const session = await sessionOr404(tenantId, sessionId)
      const trigger: EscalateTrigger = input.trigger === 'answer_rejected' || input.trigger === 'llm_unavailable' ? input.trigger : 'user_request'
      const optional = (await tenantSettings(tenantId))?.pii_optional_types ?? []
      const original = input.original_user_message?.trim() ? redactMessage(input.original_user_message.trim(), optional, cipher) : null
      const note = input.user_note?.trim() ? redactMessage(input.user_note.trim(), optional, cipher) : null
      const lang = localeLanguage(session.locale) ?? (session.last_question ? visitorLanguage(session.last_question, null) : 'en')
      const now = clock.now()
      const bot = await db.selectFrom('bots').select(['id', 'name']).where('tenant_id', '=', tenantId).where('id', '=', session.bot_id).executeTakeFirst()
      const result = await db.transaction().execute(async (trx) => {
        await repo.lockSession(tenantId, sessionId, trx)
        const transcript = await transcriptOf(tenantId, sessionId, trx)
        const lastUser = [...transcript].reverse().find((m) => m.role === 'user')
        const { ticket, created } = await tickets.open(
          tenantId,
          {
            sessionId,
            botId: session.bot_id,
            trigger,
            primaryQuestion: original?.text ?? lastUser?.content ?? session.last_question ?? '(no question)',
            primaryQuestionOriginalEnc: original?.originalEnc ?? null,
            transcript,
            userNote: note?.text ?? null,
            identity: readIdentity(session, cipher),
            visitorEmailEnc: session.visitor_email_enc,
            evidence: input.failure_type ? [{ failure_type: String(input.failure_type).slice(0, 200) }] : [],
          },
          trx,
        )
        const message = canned(created ? ESCALATE_KEYS[trigger] : 'escalated_existing', lang, { bot: bot?.name, ticket: ticket.ticket_number })
        await repo.insertMessages(tenantId, [{ id: randomUUID(), sessionId, role: 'assistant', content: message, debug: { escalation: trigger }, createdAt: now }], trx)
        await repo.touchSession(tenantId, sessionId, { addMessages: 1, lastAnswerPreview: preview(message), chatEnded: true, now }, trx)
        const counts = sumCounts([original?.counts, note?.counts])
        await deps.privacy.insertEvents(tenantId, piiEvents(counts, { action: 'redacted', direction: 'ticket', sessionId, ticketId: ticket.id }), now, trx)
        await trx
          .updateTable('question_log')
          .set({ outcome: 'escalated', trigger })
          .where('tenant_id', '=', tenantId)
          .where('id', '=', (eb) =>
            eb.selectFrom('question_log').select('id').where('tenant_id', '=', tenantId).where('session_id', '=', sessionId).orderBy('created_at', 'desc').limit(1),
          )
          .execute()
        return { message, ticket_number: ticket.ticket_number, created }
      })
      return { message: result.message, ticket_number: result.ticket_number, chat_ended: true, delivered_to_operator: true, ticket_created: result.created }
    },
  }
}

export type ChatService = ReturnType<typeof createChatService>

