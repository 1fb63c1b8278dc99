import type { QuestionOutcome } from '../../db/schema/chat.js'
import { badRequest, notFound } from '../../lib/errors.js'
import type { RetrievalHit, RetrievalResult } from '../retrieval/retrieval.service.js'
import { visitorLanguage } from '../shared/language.js'
import { redactMessage } from '../shared/redaction.js'
import { sessionLanguage } from './stages/01-language.js'
import { loadHistory, resolveSession } from './stages/01-session.js'
import { attachTurn } from './stages/02-attachments.js'
import { answeredByOwner } from './stages/02-owner.js'
import { guardTurn, isSmalltalk, matchesHuman, matchesInjection, type GuardVerdict } from './stages/03-guards.js'
import { rewriteTurn, type HistoryTurn } from './stages/04-rewrite.js'
import { evidence, promptSources, retrieve, usableHits } from './stages/05-retrieve.js'
import { withSearchRewrite, wouldRewrite } from './stages/05-search-rewrite.js'
import { startTranslation, withTranslation } from './stages/05-translate.js'
import { decide, type Decision, type EscalationTrigger } from './stages/06-decide.js'
import type { BusinessProfile, PromptInput } from './stages/07-prompt.js'
import { writeAnswer } from './stages/08-generate.js'
import { holdsLead, LEAD_SOURCES, promptKey, restartReason, speculate, TRANSLATED_LEAD_SOURCES, type Speculation } from './stages/08-speculate.js'
import { maskedAnswer, offerTools } from './stages/08-tools.js'
import { checkAnswer } from './stages/09-validate.js'
import { persistTurn, type CitableSource, type Finish } from './stages/10-persist.js'
import { linkPolicy } from './stages/links.js'
import { canned } from './stages/messages.js'
import { decideInput, decideTurn, directFaq, floorOf, measureFloor } from './turn-decide.js'
import { Stopwatch, type Turn, type TurnDeps, type TurnInput, type TurnResult } from './turn.context.js'

/**
 * The answer pipeline (see docs/ARCHITECTURE.md), one named step per stage in stages/: 1 session,
 * 2 redaction, 3 guards, 4 rewriting, 5 retrieval (3-5 overlap), 6 decision, 7 prompt, 8 generation
 * with 9b link cleaning, 9a validation, 10 persistence.
 */
export function runTurn(deps: TurnDeps, input: TurnInput): Promise<TurnResult> {
  if (!deps.meter) return turn(deps, input, () => 0)
  // the turn's own meter: its model client, and retrieval told of it for the query embedding and the floor's probes
  const m = deps.meter.start()
  const retrieval: TurnDeps['retrieval'] = {
    search: (tenantId, query, opts) => deps.retrieval.search(tenantId, query, { ...opts, modelWait: m.wait }),
    probeFloor: (tenantId, corpus, apiKey) => deps.retrieval.probeFloor(tenantId, corpus, apiKey, m.wait),
  }
  return turn({ ...deps, llm: m.llm, retrieval }, input, m.read)
}

async function turn(deps: TurnDeps, input: TurnInput, modelMs: () => number): Promise<TurnResult> {
  // The profile is read alongside (cached per tenant; a failure only means answering without it).
  const profileP = readProfile(deps, input.tenantId)
  const t = await beginTurn(deps, input, modelMs)
  // 2c. the files sent with the message: claimed for it, their text and images part of the question
  if (input.attachmentIds?.length) await t.sw.time('attachments', () => attachTurn(deps, t))
  // 2b. a closed chat, or one a person owns, is answered before the pipeline
  const early = await answeredByOwner(deps, t)
  if (early) return early
  // 1b. the fallback language's note, said once before the reply (stages/01-language.ts)
  if (t.lang?.notice) t.reply(`${t.lang.notice}\n\n`)
  // the bot's actions this session may use, read beside the history (none: the turn runs as without actions)
  const toolsP = offerTools(deps, t)
  const history = t.newSession ? [] : await t.sw.time('history', () => loadHistory(deps.repo, t.tenantId, t.session.id, deps.config, t.input.evaluation))
  const profile = await profileP
  t.tools = await toolsP
  const ev = await gatherEvidence(deps, t, history, profile)
  try {
    return withNotice(t, await answerTurn(deps, t, history, profile, ev))
  } finally {
    // a turn that failed on the way still aborts the request it started early
    ev.early()?.run.cancel()
  }
}

/** Stages 6 to 10, from the guard verdict and the evidence. */
async function answerTurn(
  deps: TurnDeps,
  t: Turn,
  history: HistoryTurn[],
  profile: BusinessProfile | null,
  { guard, found, early }: Evidence,
): Promise<TurnResult> {
  const decision = decideTurn(deps, t, guard, found)
  const bestScore = found ? found.bestScore : null
  const done = (f: Omit<Finish, 'tenantId' | 'bot' | 'session' | 'question' | 'tokens' | 'debug' | 'bestScore'>) =>
    finishTurn(deps, t, decision, { ...turnParts(t), tokens: t.tokens, debug: t.debug, bestScore, ...f })
  const say = async (f: Parameters<typeof done>[0]) => {
    const r = await done(f)
    t.reply(r.text)
    return r
  }
  // 7. prompt, when the turn is answered by the model
  const faq = decision.kind === 'answer' && found ? directFaq(deps, found) : undefined
  const finalPlan = decision.kind === 'answer' && !faq ? answerPlan(deps, t, found, decision.caveat, history, profile) : null
  // 8 (early). the answer requested while the guards ran is used only for this prompt (or one holding its lead sources)
  const spec = early()
  const adoptedAs = spec && finalPlan ? adoption(spec, finalPlan) : null
  const adopted = adoptedAs ? spec : null
  if (spec) {
    t.debug.speculation = adoptedAs ?? (finalPlan ? 'restarted' : 'discarded')
    if (!adoptedAs && finalPlan) t.debug.speculation_why = restartWhy(spec, finalPlan)
    if (!adopted) t.tokens += spec.run.cancel()
  }
  // an adopted early answer keeps the sources it was asked with
  const plan = adopted ? adopted.plan : finalPlan

  if (decision.kind === 'refuse') {
    return say({ text: canned(decision.reason === 'injection' ? 'refuse_injection' : 'refuse_off_topic', t.language, { bot: t.bot.name }), outcome: 'refused' })
  }
  if (decision.kind === 'smalltalk') {
    const thanks = /\b(?:thank|thanks|thx|ty|danke|merci|gracias|grazie|спасибо)\b/i.test(t.question.text)
    return say({ text: canned(thanks ? 'thanks' : 'greeting', t.language), outcome: null })
  }
  if (decision.kind === 'escalate') return say(handOffFinish(t, decision.trigger, found))
  // 6b. a very close approved FAQ (knowledge module) is the answer itself, cited as the FAQ: no generation
  if (faq) {
    t.debug.faq = { id: faq.id.slice(4), score: faq.confidence, direct: true }
    const cited = [{ n: 1, documentId: null, title: `FAQ: ${faq.title}`, url: null, text: faq.text }]
    return say({ text: faq.text.slice(faq.text.indexOf('\nA: ') + 4), outcome: 'answered', cited })
  }

  // 8. generation (9b: links cleaned as they stream)
  const { prompt, hits, citable } = plan!
  t.emit({ type: 'status', stage: 'writing' })
  const policy = linkPolicy(hits, t.bot.allowed_domains ?? [])
  const written = await writeAnswer(deps, t, prompt, policy, citable, adopted?.run)
  if (written.kind === 'interrupted') return done({ text: written.text, outcome: 'answered', cited: [] })
  // the answer model's verdict: the sources do not hold the answer (the contract's low_similarity path)
  if (written.kind === 'not_covered') return notCoveredTurn(deps, t, found)
  // a write to approve (the pending action goes with the answer), or a failed call with a person offered
  if (written.kind === 'said') {
    const r = await done({ text: written.text, outcome: written.pending ? null : 'refused', cited: [] })
    return written.pending ? { ...r, pending_action: written.pending } : r
  }
  // 9a. validation (an answer from action results is not the knowledge's to check)
  const checked = written.byActions ? written : await checkAnswer(deps, t, written, { prompt, policy, citable })
  if (!checked) return notCoveredTurn(deps, t, found)
  // 10. persist
  const outcome: QuestionOutcome = prompt.caveat ? 'caveat' : 'answered'
  return done({ text: checked.text, outcome, cited: checked.cited })
}

/** Stage 7: the answer prompt from the usable evidence. */
function answerPlan(
  deps: Pick<TurnDeps, 'config'>,
  t: Turn,
  found: RetrievalResult | null,
  caveat: boolean,
  history: HistoryTurn[],
  profile: BusinessProfile | null,
): { prompt: PromptInput; hits: RetrievalHit[]; citable: CitableSource[] } {
  const hits = found ? usableHits(found, deps.config.RETRIEVAL_MIN_SCORE) : []
  const { prompt: sources, citable } = promptSources(hits)
  const prompt: PromptInput = {
    botName: t.bot.name,
    profile,
    agentInstructions: t.bot.agent_instructions,
    disclosure: t.bot.disclosure_level,
    language: t.language,
    locale: t.input.locale ?? t.session.locale,
    sources,
    history,
    question: t.question.text,
    ...(t.attachments ? { attachments: { note: t.attachments.note, images: t.attachments.images } } : {}),
    caveat,
    ...(t.lang ? { knowledgeLanguage: t.lang.knowledge, languageFixed: t.lang.source !== null } : {}),
    ...(t.translatedQuestion ? { translatedQuestion: t.translatedQuestion } : {}),
  }
  return { prompt, hits, citable }
}

/** The answer model found no answer in the sources: the localised "not covered" text, a ticket, no sources. */
async function notCoveredTurn(deps: TurnDeps, t: Turn, found: RetrievalResult | null): Promise<TurnResult> {
  const decision: Decision = { kind: 'escalate', trigger: 'low_similarity' }
  // `by` tells this hand-off from the floor's in the log (the dashboard's "why", bench:grounding)
  t.debug.decision = { ...decision, by: 'answer_model' }
  const bestScore = found ? found.bestScore : null
  const r = await finishTurn(deps, t, decision, { ...turnParts(t), tokens: t.tokens, debug: t.debug, bestScore, ...handOffFinish(t, 'low_similarity', found) })
  t.reply(r.text)
  return r
}

/** A hand-off's part of the finish: the localised "not covered" (or "a person will answer") text comes with the ticket. */
function handOffFinish(t: Turn, trigger: EscalationTrigger, found: RetrievalResult | null) {
  const handOff = { trigger, evidence: found ? evidence(found.hits) : [], language: t.language }
  return {
    text: '',
    outcome: 'escalated' as const,
    handOff: { ...handOff, say: trigger === 'user_request' ? ('user_request' as const) : ('no_answer' as const) },
  }
}

const turnParts = ({ tenantId, bot, session, question, stored, input, lang }: Turn) => ({
  tenantId,
  bot,
  session,
  // the message as the visitor wrote it (stage 2c keeps it apart from the files' text the stages read)
  question: stored ?? question,
  evaluation: input.evaluation,
  language: lang?.store,
  draft: input.draft,
})

function readProfile(deps: Pick<TurnDeps, 'profileFor'>, tenantId: string): Promise<BusinessProfile | null> {
  if (!deps.profileFor) return Promise.resolve(null)
  return deps.profileFor(tenantId).then(
    (p) => (p ? { productName: p.product_name, topics: p.topics, glossary: p.glossary } : null),
    () => null,
  )
}

/** The tenant's model key and privacy settings; a tenant without a key cannot answer. */
async function tenantKey(deps: Pick<TurnDeps, 'tenantSettings' | 'cipher'>, tenantId: string): Promise<{ apiKey: string; optional: string[] }> {
  const t = await deps.tenantSettings(tenantId)
  if (!t) throw notFound('Tenant not found')
  if (!t.llm_key_enc) throw badRequest('No language-model API key is configured for this tenant', 'llm_key_missing')
  return { apiKey: deps.cipher.decrypt(t.llm_key_enc), optional: t.pii_optional_types ?? [] }
}

/** Stages 1 and 2: the session, and the visitor's message redacted before it goes anywhere. */
async function beginTurn(deps: TurnDeps, input: TurnInput, modelMs: () => number): Promise<Turn> {
  const sw = new Stopwatch()
  const { tenantId, bot } = input
  const emit = input.onEvent ?? (() => {})
  const { apiKey, optional } = await sw.time('tenant', () => tenantKey(deps, tenantId))
  emit({ type: 'status', stage: 'thinking' })
  const locale = input.locale ?? null
  const { session, created, version } = await sw.time('session', () =>
    resolveSession(deps.repo, {
      tenantId,
      botId: bot.id,
      sessionId: input.sessionId,
      channel: input.channel,
      locale,
      now: deps.clock.now(),
      dryRun: dryRunOf(deps, input),
    }),
  )
  const question = redactMessage(input.message.trim(), optional, deps.cipher, input.locale ?? session.locale)
  // 1b. the session's language: kept once known; without the languages port, this message's
  const lang = deps.languages
    ? await sw.time('language', () =>
        sessionLanguage(deps.languages, {
          tenantId,
          session,
          question: question.text,
          locale: input.locale ?? session.locale,
          chosen: input.language,
          dryRun: !!input.evaluation,
        }),
      )
    : undefined
  const language = lang ? lang.language : visitorLanguage(question.text, input.locale ?? session.locale)
  const reply = (text: string) => emit({ type: 'chunk', text })
  const debug: Record<string, unknown> = { language, channel: input.channel, ...(lang ? { language_source: lang.source } : {}) }
  return {
    input,
    tenantId,
    bot,
    apiKey,
    session,
    newSession: created,
    createdVersion: version ?? null,
    question,
    language,
    lang,
    debug,
    tokens: 0,
    sw,
    modelMs,
    emit,
    reply,
    tools: [],
  }
}

/** Stage 1's part of an evaluation's dry run: the claims as a verified identity, whether there are earlier turns. */
function dryRunOf(deps: Pick<TurnDeps, 'cipher'>, input: TurnInput) {
  const e = input.evaluation
  if (!e) return undefined
  return { identityEnc: e.claims ? deps.cipher.encrypt(JSON.stringify(e.claims)) : null, hasHistory: e.history.length > 0 }
}

interface Evidence {
  guard: GuardVerdict
  found: RetrievalResult | null
  /** The answer requested before the guards and retrieval were done, if any (see 08-speculate.ts). */
  early: () => EarlyAnswer | null
}

type AnswerPlan = ReturnType<typeof answerPlan>

/**
 * An answer requested early, with the plan it was requested for; `preliminary` when from evidence that was not yet
 * the final one (the lexical evidence before the vectors, or the question as asked before its translation).
 */
interface EarlyAnswer {
  run: Speculation
  plan: AnswerPlan
  preliminary: boolean
  /** from the evidence for a question as asked before its translation landed: a stricter agreement (#40) */
  untranslated: boolean
}

/** How many of the final evidence's first passages an early answer must hold (holdsLead): three before a translation. */
const leadOf = (e: EarlyAnswer) => (e.untranslated ? TRANSLATED_LEAD_SOURCES : LEAD_SOURCES)

/**
 * Whether the early answer serves the final plan: 'used' for the very same prompt, 'used_lexical' for one from
 * preliminary evidence that holds what the final evidence leads with (holdsLead), null otherwise.
 */
function adoption(early: EarlyAnswer, plan: AnswerPlan): 'used' | 'used_lexical' | null {
  if (early.run.key === promptKey(plan.prompt)) return 'used'
  return early.preliminary && holdsLead(early.plan.prompt, plan.prompt, leadOf(early)) ? 'used_lexical' : null
}

/**
 * Why an early answer did not serve the final plan (the debug record and the log line, for bench:chat's tally):
 * 'evidence' (started from the final evidence, which then changed), else restartReason's (08-speculate.ts).
 */
function restartWhy(early: EarlyAnswer, plan: AnswerPlan): string {
  return early.preliminary ? (restartReason(early.plan.prompt, plan.prompt, leadOf(early)) ?? 'evidence') : 'evidence'
}

/** What the guards are assumed to say while they run: the speculative answer is only kept if they do. */
const PASSING = { injection: false, wantsHuman: false, relevant: true, smalltalk: false }

/**
 * Stages 3, 4 and 5 overlap: retrieval waits only for a rewrite it needs, and is skipped when a pattern
 * decides. When the evidence is in before the guard call, the answer for it is requested at once
 * (08-speculate.ts). A new question's answer may start from the lexical evidence while its embedding is in
 * flight (CHAT_EARLY_ANSWER_FROM_BM25), and a question in another language than the knowledge's from the evidence
 * for it as asked while its translation is in flight: kept when the final sources' lead is among its own
 * (holdsLead), else restarted; a repeated question's embedding comes from a cache instead (chat.wire.ts).
 */
async function gatherEvidence(deps: TurnDeps, t: Turn, history: HistoryTurn[], profile: BusinessProfile | null): Promise<Evidence> {
  const text = t.question.text
  const decisiveByPattern = matchesInjection(text) || matchesHuman(text) || isSmalltalk(text)
  let spec: EarlyAnswer | null = null
  let guardNow: GuardVerdict | null = null
  // 5c. the question in the knowledge's language, asked beside the guard (null: same language)
  const translationP = startTranslation(deps, t, profile)
  // a translation already landed (a cached one) leaves nothing to start early on: the fused evidence is a search away
  let translated = false
  translationP?.then(() => (translated = true))
  const speculateOn = (found: RetrievalResult, preliminary = found.preliminary === true) => {
    const untranslated = preliminary && translationP !== null
    // once the guards are in too, the answer starts the ordinary way; an answer with tools is never speculated
    if (!deps.config.CHAT_SPECULATIVE_ANSWER || guardNow || t.tools.length) return
    const { input } = decideInput(deps, PASSING, found)
    // the floor reads the question's words against the knowledge's, which a question in another language does not
    // share: before the translation lands, what the vectors found is started on, and the final floor judges it
    if (untranslated && found.vectorUsed) input.grounded = true
    const d = decide(input)
    const plan = d.kind === 'answer' && !directFaq(deps, found) ? answerPlan(deps, t, found, d.caveat, history, profile) : null
    if (spec) {
      // later evidence after an answer started from preliminary evidence: it goes on if its sources hold the later's lead
      if (plan && adoption(spec, plan)) return
      t.tokens += spec.run.cancel()
      t.debug.speculation_restarts = 1
      if (plan) t.debug.speculation_why = restartWhy(spec, plan)
    }
    spec = plan ? { run: speculate(deps, t, plan.prompt), plan, preliminary, untranslated } : null
  }
  const guardP = guardTurn(deps, t, profile)
  guardP.then(
    (g) => (guardNow = g),
    () => {},
  )
  const rewriteP = rewriteTurn(deps, t, history)
  const retrievalP: Promise<RetrievalResult | null> = decisiveByPattern
    ? Promise.resolve(null)
    : rewriteP.then(async (rw) => {
        t.emit({ type: 'status', stage: 'searching' })
        // a new question's embedding (or its translation) takes a provider call: the answer can start from the evidence at hand meanwhile
        const early = deps.config.CHAT_SPECULATIVE_ANSWER && deps.config.CHAT_EARLY_ANSWER_FROM_BM25
        const opts = {
          apiKey: t.apiKey,
          k: deps.config.RETRIEVAL_TOP_K,
          budgetTokens: deps.config.RETRIEVAL_SOURCE_TOKENS,
          signal: t.input.signal,
          // not from evidence a rewrite is about to replace (its early answer would only be restarted)
          ...(early
            ? { onLexical: (p: RetrievalResult) => wouldRewrite(deps.config.RETRIEVAL_QUERY_REWRITE, floorOf(deps.config, p).lexical) || speculateOn(p) }
            : {}),
        }
        const first = await t.sw.time('retrieval', () => retrieve(deps.retrieval, t.tenantId, rw.query, opts))
        // the question as asked, before its translation lands (#40): kept when the fused evidence's lead agrees
        if (early && translationP && !translated) speculateOn(first, true)
        // 5b. a weak question searched again in the knowledge's words (RETRIEVAL_QUERY_REWRITE)
        const again = (q: string) => retrieve(deps.retrieval, t.tenantId, q, { ...opts, onLexical: undefined })
        const asked = translationP
          ? await t.sw.time('translation', () => withTranslation(deps, t, first, translationP, rw.query, again, (r) => floorOf(deps.config, r).grounded))
          : first
        const found = await withSearchRewrite(deps, t, asked, again, (r) => floorOf(deps.config, r).lexical)
        await measureFloor(deps, t, found)
        speculateOn(found)
        return found
      })
  retrievalP.catch(() => {})
  const early = () => spec
  const guard = await guardP
  const rewrite = await rewriteP
  t.tokens += guard.tokens + rewrite.tokens
  const { source, injection, wantsHuman: wants_human, relevant, smalltalk, error } = guard
  t.debug.guard = { source, injection, wants_human, relevant, smalltalk, error }
  t.debug.rewrite = { query: rewrite.query, rewritten: rewrite.rewritten, error: rewrite.error }
  if (guard.injection || guard.wantsHuman) return { guard, found: null, early }
  let found: RetrievalResult | null
  try {
    found = await retrievalP
  } catch (err) {
    early()?.run.cancel()
    throw err
  }
  if (found) {
    t.tokens += found.tokens
    const best = Math.round(found.bestScore * 10000) / 10000
    t.debug.retrieval = { best, corpus_chunks: found.corpusChunks, vector: found.vectorUsed, timings: found.timings, hits: evidence(found.hits) }
  }
  return { guard, found, early }
}

/** Stage 10 with the timings so far in the stored debug record; the log line gets the total with persistence. */
async function finishTurn(deps: TurnDeps, t: Turn, decision: Decision, f: Finish): Promise<TurnResult> {
  const { sw, modelMs } = t
  t.debug.timings = { ...sw.timings, model: modelMs(), total: sw.total() }
  const res = await sw.time('persist', () => persistTurn(deps, { ...f, text: maskedAnswer(t, f.text), tokens: t.tokens, createdVersion: t.createdVersion }))
  const total = sw.total()
  const model = modelMs()
  const timings = { ...sw.timings, model, service: Math.round((total - model) * 100) / 100, total }
  const speculation = t.debug.speculation
  const why = t.debug.speculation_why
  deps.log.info(
    {
      tenant_id: t.tenantId,
      session_id: res.session_id,
      decision: decision.kind,
      tokens: res.tokens_used,
      speculation,
      ...(why ? { speculation_why: why } : {}),
      ...(t.debug.ticket ? { handoff: (t.debug.ticket as { written?: string }).written } : {}),
      timings,
    },
    'chat turn',
  )
  if (deps.observeStage) for (const [stage, ms] of Object.entries(timings)) deps.observeStage(stage, ms)
  return res
}

/** A reply with the fallback language's note before it (1b), as the visitor saw it stream. */
function withNotice(t: Turn, r: TurnResult): TurnResult {
  // the session's language once known: the widget shows its own texts in it
  const known = t.lang?.source ? { language: t.lang.language } : {}
  return t.lang?.notice ? { ...r, ...known, text: `${t.lang.notice}\n\n${r.text}` } : { ...r, ...known }
}
