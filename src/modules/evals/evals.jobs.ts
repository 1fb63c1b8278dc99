import type { Logger } from 'pino'
import type { EvalOutcome, EvalPins, EvalResult } from '../../db/schema/evals.js'
import { defineJob } from '../../jobs/types.js'
import type { Clock } from '../../lib/clock.js'
import type { BotRow } from '../bots/bots.service.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { EvaluationTrace, TurnInput, TurnResult } from '../chat/turn.context.js'
import type { EventsPort } from '../shared/events.port.js'
import { presentAnswer } from './evals.present.fns.js'
import { caseResult, checkAnswer, hashOf, type Observed, PROMPT_VERSION, reachedFor, totalsOf } from './evals.fns.js'
import type { CaseRow, EvalsRepo, RunRow } from './evals.repo.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** One evaluation run: every case through the turn pipeline as a dry run (the run row says its status). */
    'evals.run': { tenantId: string; runId: string }
    /** With evals_auto_run on: a run after the knowledge changed (at most one an hour; evals.auto.ts). */
    'evals.auto': { tenantId: string }
    'evals.sweep': Record<string, never>
  }
}

export interface EvalRunnerDeps {
  repo: EvalsRepo
  bots: Pick<BotsRepo, 'find' | 'findDefault'>
  /** the chat service's turn: the real pipeline; `evaluation` makes it a dry run */
  runTurn: (input: TurnInput) => Promise<TurnResult>
  clock: Clock
  log: Pick<Logger, 'warn' | 'info'>
  config: { EVAL_MAX_TOKENS: number; CHAT_MODEL: string; EMBEDDING_MODEL: string; [k: string]: unknown }
  events?: EventsPort
}

export const RUN_MAX_ATTEMPTS = 5

/** The bot settings and pipeline thresholds an answer depends on: a run's settings_hash pins them. */
const SETTINGS_KEYS = [
  'RETRIEVAL_TOP_K',
  'RETRIEVAL_SOURCE_TOKENS',
  'RETRIEVAL_MIN_SCORE',
  'RETRIEVAL_CAVEAT_SCORE',
  'GUARDS_ENABLED',
  'VALIDATION_ENABLED',
  'CHAT_MAX_ANSWER_TOKENS',
]
const botSettings = (b: BotRow) => ({ id: b.id, name: b.name, instructions: b.agent_instructions, disclosure: b.disclosure_level, domains: b.allowed_domains })

/** One dry-run conversation of a case: its earlier turns, then the question; what the last turn came to. */
async function askCase(deps: EvalRunnerDeps, tenantId: string, bot: BotRow, c: CaseRow): Promise<{ observed: Observed; tokens: number }> {
  const history: EvaluationTrace['history'] = []
  let tokens = 0
  for (const turn of c.turns ?? []) {
    const trace: EvaluationTrace = { history: [...history], claims: c.visitor_claims, offered: [], actions: [] }
    const r = await deps.runTurn({ tenantId, bot, message: turn, channel: 'api', evaluation: trace })
    tokens += r.tokens_used
    history.push({ role: 'user', content: turn }, { role: 'assistant', content: r.text })
  }
  const trace: EvaluationTrace = { history, claims: c.visitor_claims, offered: [], actions: [] }
  const r = await deps.runTurn({ tenantId, bot, message: c.question, channel: 'api', evaluation: trace })
  tokens += r.tokens_used
  const cited = trace.finish?.cited ?? []
  const refs = (xs: { documentId: string | null; url: string | null }[]) => [
    ...new Set(xs.flatMap((s) => [s.documentId, s.url]).filter((x): x is string => !!x)),
  ]
  // passages given to the model; a hand-off before the prompt falls back on what retrieval found
  const retrieved = ((trace.finish?.debug.retrieval as { hits?: { document_id: string | null }[] } | undefined)?.hits ?? []).map((h) => ({
    documentId: h.document_id,
    url: null,
  }))
  const outcome: EvalOutcome = trace.finish?.handedOff || r.delivered_to_operator ? 'handed_off' : 'answered'
  return {
    observed: {
      outcome,
      answer: presentAnswer(r.text, trace.actions),
      cited: refs(cited),
      passages: refs(trace.offered.length ? trace.offered : retrieved),
      actions: trace.actions,
      language: (trace.finish?.debug.language as string | undefined) ?? null,
    },
    tokens,
  }
}

/** A turn that threw (no model key, the provider down): a failed repeat saying why. */
const failedRepeat = (err: unknown): EvalResult['runs'][number] => ({
  passed: false,
  outcome: 'handed_off',
  answer: '',
  cited: [],
  reached: false,
  checks: [{ name: 'turn', passed: false, detail: `the turn failed: ${(err as Error).message?.slice(0, 300) ?? 'error'}` }],
})

/** Runs an evaluation: each case `repeat` times, results stored as they come, progress on the run; stops at EVAL_MAX_TOKENS. */
export function createEvalRunner(deps: EvalRunnerDeps) {
  const { repo, clock } = deps

  async function pins(tenantId: string, bots: BotRow[]): Promise<EvalPins> {
    const [docs, faqs] = await Promise.all([repo.knowledgeState(tenantId), repo.approvedFaqs(tenantId)])
    const settings = Object.fromEntries(SETTINGS_KEYS.map((k) => [k, deps.config[k]]))
    const docState = docs.map((d) => [d.id, d.updated_at.toISOString()])
    return {
      // approved FAQs answer questions too: their text is part of the knowledge (without any, the documents' hash as before)
      knowledge_version: hashOf(faqs.length ? { docs: docState, faqs: faqs.map((f) => [f.id, f.question, f.answer]) } : docState),
      settings_hash: hashOf({ settings, bots: bots.map(botSettings) }),
      chat_model: deps.config.CHAT_MODEL,
      embedding_model: deps.config.EMBEDDING_MODEL,
      prompt_version: PROMPT_VERSION,
    }
  }

  async function botFor(tenantId: string, id: string | null, cache: Map<string, BotRow | null>): Promise<BotRow | null> {
    const key = id ?? ''
    if (!cache.has(key)) cache.set(key, (id ? await deps.bots.find(tenantId, id) : await deps.bots.findDefault(tenantId)) ?? null)
    return cache.get(key)!
  }

  /** Asks the cases a run has no result for yet: a run taken up again after a restart resumes where it stopped. */
  async function execute(run: RunRow, signal?: AbortSignal) {
    const tenantId = run.tenant_id
    const cases = await repo.listCases(tenantId, { tags: run.tags, botId: run.bot_id })
    const bots = new Map<string, BotRow | null>()
    for (const c of cases) await botFor(tenantId, c.bot_id ?? run.bot_id, bots)
    if (run.status === 'queued' || !run.pins)
      await repo.updateRun(tenantId, run.id, {
        status: 'running',
        pins: await pins(
          tenantId,
          [...bots.values()].filter((b): b is BotRow => !!b),
        ),
      })
    const earlier = new Map((await repo.results(tenantId, run.id)).map((r) => [r.case_id, r]))
    const results: EvalResult[] = []
    let tokens = run.tokens
    let partial = false
    for (const [i, c] of cases.entries()) {
      const before = earlier.get(c.id)
      if (before) {
        results.push(before)
        continue
      }
      if (signal?.aborted) throw new RunInterrupted()
      if (tokens >= deps.config.EVAL_MAX_TOKENS) {
        partial = true
        break
      }
      const bot = await botFor(tenantId, c.bot_id ?? run.bot_id, bots)
      const repeats: EvalResult['runs'] = []
      for (let n = 0; n < run.repeat; n++) {
        if (!bot) {
          repeats.push(failedRepeat(new Error('the case names a bot that no longer exists')))
          break
        }
        try {
          const { observed, tokens: used } = await askCase(deps, tenantId, bot, c)
          tokens += used
          const checks = checkAnswer(c.expect, observed)
          const reached = reachedFor(c.expect, observed.passages)
          repeats.push({ passed: checks.every((x) => x.passed), outcome: observed.outcome, answer: observed.answer, cited: observed.cited, reached, checks })
        } catch (err) {
          if (signal?.aborted) throw new RunInterrupted()
          repeats.push(failedRepeat(err))
        }
      }
      const result = caseResult(c.id, repeats)
      results.push(result)
      await repo.upsertResult(tenantId, run.id, i, result)
      await repo.updateRun(tenantId, run.id, { progress: (i + 1) / cases.length, tokens, totals: totalsOf(results) })
    }
    const totals = totalsOf(results)
    await repo.updateRun(tenantId, run.id, {
      status: 'done',
      progress: partial ? results.length / Math.max(1, cases.length) : 1,
      partial,
      totals,
      tokens,
      finishedAt: clock.now(),
    })
    await deps.events?.emit(tenantId, { type: 'eval.run.completed', botId: run.bot_id, data: { run_id: run.id, partial, totals } })
    deps.log.info({ tenant_id: tenantId, run_id: run.id, tokens, partial, ...totals }, 'evaluation run')
  }

  return {
    async run(tenantId: string, runId: string, signal?: AbortSignal) {
      const run = await repo.findRun(tenantId, runId)
      // a finished run (a job delivered twice) is not run again
      if (!run || run.status === 'done' || run.status === 'failed') return
      try {
        await execute(run, signal)
      } catch (err) {
        // a shutdown: the job is tried again after the restart and resumes from the stored results
        if (err instanceof RunInterrupted) throw err
        deps.log.warn({ tenant_id: tenantId, run_id: runId, err: { message: (err as Error).message } }, 'evaluation run failed')
        await repo.updateRun(tenantId, runId, { status: 'failed', error: (err as Error).message.slice(0, 500), finishedAt: clock.now() })
      }
    },

    /** Runs whose job is gone without finishing them (the process died on its last attempt): failed, saying why. */
    async settleOrphans() {
      for (const r of await repo.orphanRuns())
        await repo.updateRun(r.tenant_id, r.id, { status: 'failed', error: INTERRUPTED_MESSAGE, finishedAt: clock.now() })
    },
  }
}

export const INTERRUPTED_MESSAGE = 'The run was interrupted (the service restarted) and could not be resumed; start it again.'

class RunInterrupted extends Error {
  constructor() {
    super('evaluation run interrupted by a shutdown; it resumes when the job runs again')
  }
}

export type EvalRunner = ReturnType<typeof createEvalRunner>

/** Seconds between sweeps for runs left behind by a process that died on the run's last attempt. */
const SWEEP_EVERY_SECONDS = 300

export const evalsJobs = (deps: { runner: EvalRunner; auto: { handle: (tenantId: string) => Promise<void> } }) => [
  defineJob({
    kind: 'evals.run',
    // each restart during a run is one attempt; the run resumes from its stored results
    maxAttempts: RUN_MAX_ATTEMPTS,
    backoffSeconds: () => 2,
    async handler({ tenantId, runId }, ctx) {
      await deps.runner.run(tenantId, runId, ctx.signal)
    },
  }),
  defineJob({
    kind: 'evals.auto',
    maxAttempts: 3,
    async handler({ tenantId }) {
      await deps.auto.handle(tenantId)
    },
  }),
  defineJob({
    kind: 'evals.sweep',
    everySeconds: SWEEP_EVERY_SECONDS,
    maxAttempts: 1,
    async handler() {
      await deps.runner.settleOrphans()
    },
  }),
]
