import type { Clock } from '../../lib/clock.js'
import { notFound, ValidationError } from '../../lib/errors.js'
import {
  FINAL_OUTCOMES,
  addHist,
  dailyReads,
  finalAtOnce,
  histPercentile,
  localMidnight,
  outcomeShares,
  rangeReads,
  resolveRange,
  zeroCounts,
  type Outcome,
  type OutcomeCounts,
} from './analytics.fns.js'
import type { AnalyticsRepo, FigureFilter, RollupSums } from './analytics.repo.js'
import { scopedTopics } from './unanswered.fns.js'
import type { Metric } from './analytics.schemas.js'

export interface RangeInput {
  from: string
  to: string
  tz: string
  bot_id?: string
  channel?: 'api' | 'widget' | 'email'
}

/** Which bots the caller may see: null all, else only these (a member limited to some bots). */
export type BotScope = readonly string[] | null

const round = (x: number | null, digits = 1) => (x === null || x === undefined ? null : Math.round(Number(x) * 10 ** digits) / 10 ** digits)
const positiveShare = (up: number, down: number) => (up + down === 0 ? null : round(up / (up + down), 4))

export interface AssistFigures {
  suggestions: number
  used: number
  used_unedited: number
  summaries: number
  tokens: number
}
const NO_ASSIST: AssistFigures = { suggestions: 0, used: 0, used_unedited: 0, summaries: 0, tokens: 0 }

/** A hand-off whose conversation has been quiet this long with no human reply counts as left by the visitor. */
const ABANDON_QUIET_MS = 30 * 60_000

/** The figures (GET /analytics/summary, /timeseries, /unanswered): the rollup for sums, the facts for the rest. */
export function createAnalyticsService(deps: {
  repo: AnalyticsRepo
  clock: Clock
  lookbackDays: number
  /** Operator assist's figures (suggestions, summaries, their model tokens) over the range's bots. */
  assistFigures?: (tenantId: string, f: { start: Date; end: Date; botIds: readonly string[] | null }) => Promise<AssistFigures>
}) {
  const { repo, clock } = deps

  /** The query's range and bots, checked: a bad field is a 422 naming it, a bot outside the caller's scope a 404. */
  async function filterOf(tenantId: string, q: RangeInput, scope: BotScope, byDay: boolean): Promise<{ f: FigureFilter; days: string[] }> {
    const range = resolveRange(q.from, q.to, q.tz)
    if ('field' in range) throw new ValidationError(['query', range.field], range.message)
    let botIds: readonly string[] | null = scope
    if (q.bot_id) {
      if (scope && !scope.includes(q.bot_id)) throw notFound('Bot not found')
      if ((await repo.knownBots(tenantId, [q.bot_id])).length === 0) throw notFound('Bot not found')
      botIds = [q.bot_id]
    }
    // a total reads whole UTC days inside and finer bins at the edges; days by local day read the coarsest
    // grain whose bins start at every local midnight of the range
    const reads = byDay ? dailyReads([...range.days.map((d) => localMidnight(d, q.tz)), range.end]) : rangeReads(range.start, range.end)
    return { f: { start: range.start, end: range.end, botIds, channel: q.channel ?? null, tz: byDay ? q.tz : null, reads }, days: range.days }
  }

  /** Final outcomes from the rollup; those still within 24 h of their last message move to pending, but a hand-off (final at once). */
  function countsOf(sums: RollupSums | undefined, recent: { outcome: string; n: number }[]): OutcomeCounts {
    const c = zeroCounts()
    if (sums) for (const o of FINAL_OUTCOMES) c[o] = sums[o]
    for (const r of recent) {
      const o = r.outcome as Outcome
      if (o in c && !finalAtOnce(o)) {
        c[o] -= r.n
        c.pending += r.n
      }
    }
    return c
  }

  return {
    async summary(tenantId: string, q: RangeInput, scope: BotScope) {
      const { f } = await filterOf(tenantId, q, scope, false)
      const now = clock.now()
      const [sums, hist, recent, times, queue, assist] = await Promise.all([
        repo.sums(tenantId, f),
        repo.modelHist(tenantId, f),
        repo.recent(tenantId, f, now),
        repo.ticketTimes(tenantId, f),
        repo.queueTimes(tenantId, f, now, ABANDON_QUIET_MS),
        deps.assistFigures?.(tenantId, f) ?? NO_ASSIST,
      ])
      const s = sums[0]
      const h = addHist({}, Object.fromEntries(hist.map((x) => [x.bucket, x.n])))
      const t = times[0]
      return {
        conversations: s?.conversations ?? 0,
        questions: s?.questions ?? 0,
        outcomes: outcomeShares(countsOf(s, recent)),
        first_response_s: { p50: round(t?.fr50 ?? null), p90: round(t?.fr90 ?? null) },
        resolve_s: { p50: round(t?.rs50 ?? null), p90: round(t?.rs90 ?? null) },
        feedback: { bot: { up: s?.bot_up ?? 0, down: s?.bot_down ?? 0 }, operator: { up: s?.op_up ?? 0, down: s?.op_down ?? 0 } },
        // the model tokens the workspace is billed for: the bot's turns and the assist's suggestions and summaries
        tokens: Number(s?.tokens ?? 0) + assist.tokens,
        model_latency_ms: { p50: histPercentile(h, 0.5), p95: histPercentile(h, 0.95) },
        queue_wait_s: { p50: round(queue.w50 === null ? null : Number(queue.w50)), p90: round(queue.w90 === null ? null : Number(queue.w90)) },
        abandoned_in_queue: queue.abandoned,
        assist: { suggestions: assist.suggestions, used: assist.used, used_unedited: assist.used_unedited, summaries: assist.summaries },
      }
    },

    /** Per member: the hand-offs of the range they have, and how fast they first replied and resolved. */
    async agents(tenantId: string, q: RangeInput, scope: BotScope) {
      const { f } = await filterOf(tenantId, q, scope, false)
      const rows = await repo.agentTimes(tenantId, f)
      return {
        items: rows.map((r) => ({
          user_id: r.user_id,
          name: r.name ?? null,
          conversations: r.conversations,
          resolved: r.resolved,
          first_reply_s: { p50: round(r.fr50 === null ? null : Number(r.fr50)), p90: round(r.fr90 === null ? null : Number(r.fr90)) },
          resolve_s: { p50: round(r.rs50 === null ? null : Number(r.rs50)), p90: round(r.rs90 === null ? null : Number(r.rs90)) },
        })),
      }
    },

    async timeseries(tenantId: string, q: RangeInput & { metric: Metric }, scope: BotScope) {
      const { f, days } = await filterOf(tenantId, q, scope, true)
      const m = q.metric
      const values = new Map<string, number | null>()
      if (m.startsWith('first_response') || m.startsWith('resolve')) {
        const col = { first_response_s_p50: 'fr50', first_response_s_p90: 'fr90', resolve_s_p50: 'rs50', resolve_s_p90: 'rs90' } as const
        for (const r of await repo.ticketTimes(tenantId, f)) values.set(r.day!, round(r[col[m as keyof typeof col]]))
      } else if (m.startsWith('model_latency')) {
        const perDay = new Map<string, Record<string, number>>()
        for (const r of await repo.modelHist(tenantId, f)) perDay.set(r.day!, addHist(perDay.get(r.day!) ?? {}, { [r.bucket]: r.n }))
        for (const [day, h] of perDay) values.set(day, histPercentile(h, m === 'model_latency_ms_p50' ? 0.5 : 0.95))
      } else {
        const [sums, recent] = await Promise.all([repo.sums(tenantId, f), m.startsWith('share_') ? repo.recent(tenantId, f, clock.now()) : []])
        for (const s of sums) {
          const day = s.day!
          if (m.startsWith('share_')) {
            const shares = outcomeShares(
              countsOf(
                s,
                recent.filter((r) => r.day === day),
              ),
            )
            values.set(day, s.conversations === 0 ? null : shares[m.slice(6) as Outcome].share)
          } else if (m === 'feedback_bot_positive_share') values.set(day, positiveShare(s.bot_up, s.bot_down))
          else if (m === 'feedback_operator_positive_share') values.set(day, positiveShare(s.op_up, s.op_down))
          else {
            const col = {
              conversations: 'conversations',
              questions: 'questions',
              tokens: 'tokens',
              feedback_bot_up: 'bot_up',
              feedback_bot_down: 'bot_down',
              feedback_operator_up: 'op_up',
              feedback_operator_down: 'op_down',
            } as const
            values.set(day, Number(s[col[m as keyof typeof col]]))
          }
        }
      }
      const countLike = !/share|_p\d\d$/.test(m)
      return { metric: m, points: days.map((date) => ({ date, value: values.get(date) ?? (countLike ? 0 : null) })) }
    },

    /** The gap analyzer's open topics with most questions, each example linked to the newest conversation that asked it. */
    /**
     * Unanswered topics. The workspace's gaps cluster every bot's questions, so a view limited to some bots (a
     * member's scope or `bot_id`) is rebuilt from those bots' questions alone (unanswered.fns.ts).
     */
    async unanswered(tenantId: string, q: { limit: number; bot_id?: string }, scope: BotScope) {
      let botIds = scope
      if (q.bot_id) {
        if (scope && !scope.includes(q.bot_id)) throw notFound('Bot not found')
        if ((await repo.knownBots(tenantId, [q.bot_id])).length === 0) throw notFound('Bot not found')
        botIds = [q.bot_id]
      }
      if (botIds) {
        const since = new Date(clock.now().getTime() - deps.lookbackDays * 86_400_000)
        const [gaps, questions] = await Promise.all([repo.gapTerms(tenantId, 500), repo.botQuestions(tenantId, botIds, since, 5000)])
        const topics = await scopedTopics(
          gaps.map((g) => ({ ...g, terms: g.terms ?? {} })),
          questions,
          q.limit,
        )
        return { items: topics.map((t) => ({ ...t, last_question_at: t.last_question_at ? t.last_question_at.toISOString() : null })) }
      }
      const gaps = await repo.topGaps(tenantId, q.limit)
      const examples = gaps.flatMap((g) => g.example_questions.slice(0, 5))
      const asked = await repo.conversationsAsking(tenantId, examples, botIds)
      const sessionOf = new Map<string, string>()
      for (const a of asked) if (!sessionOf.has(a.question) && a.session_id) sessionOf.set(a.question, a.session_id)
      return {
        items: gaps.map((g) => ({
          gap_id: g.id,
          source: g.source,
          label: g.label,
          classification: g.classification,
          question_count: g.question_count,
          last_question_at: g.last_question_at ? g.last_question_at.toISOString() : null,
          examples: g.example_questions.slice(0, 5).map((question) => ({ question, session_id: sessionOf.get(question) ?? null })),
        })),
      }
    },
  }
}

export type AnalyticsService = ReturnType<typeof createAnalyticsService>
