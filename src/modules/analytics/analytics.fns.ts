/**
 * The definitions of support analytics, in one place: the API, the charts (through the API) and the
 * exports all decide a conversation's outcome here. Pure functions, unit-tested beside this file.
 *
 * Each conversation has exactly one outcome, decided 24 h after its last message:
 * - handed_off: a ticket was opened in it;
 * - unresolved: no ticket, and the last answer was a refusal (or the last question got no answer at all, a
 *   failed turn) or the visitor's latest verdict on a bot answer was negative;
 * - resolved_confirmed: no ticket, and the visitor's latest verdict on a bot answer was positive;
 * - resolved_assumed: no ticket, no negative verdict, and no message for 24 h;
 * - pending: its last message is less than 24 h old (a hand-off excepted: the ticket is open, the outcome cannot
 *   change any more, so it counts as handed_off at once, as the tickets screen already shows it).
 * "Latest verdict": a visitor who down-voted an answer and up-voted the next one was helped in the end.
 */

export const OUTCOMES = ['handed_off', 'resolved_confirmed', 'resolved_assumed', 'unresolved', 'pending'] as const
export type Outcome = (typeof OUTCOMES)[number]
export type FinalOutcome = Exclude<Outcome, 'pending'>
export const FINAL_OUTCOMES = OUTCOMES.filter((o): o is FinalOutcome => o !== 'pending')

/** A conversation is decided this long after its last message (the visitor may come back until then). */
export const FINAL_AFTER_MS = 24 * 3600 * 1000

/** One message of a conversation as the definitions read it. */
export interface FactMessage {
  role: 'user' | 'assistant'
  fromOperator: boolean
  feedback: 'none' | 'up' | 'down'
  tokens: number
  /** Model time of a bot answer (ms), when recorded. */
  modelMs: number | null
  /** The bot refused to answer (question log outcome `refused`). */
  refused: boolean
  createdAt: Date
}

export interface FactTicket {
  createdAt: Date
  /** First operator reply, or the resolution when there is none. */
  firstResponseAt: Date | null
  resolvedAt: Date | null
}

/** Everything the figures need of one conversation, computed from its messages and tickets. */
export interface ConversationFacts {
  startedAt: Date
  lastMessageAt: Date
  questions: number
  messages: number
  botUp: number
  botDown: number
  opUp: number
  opDown: number
  tokens: number
  /** Model latency histogram of the bot answers ({bucket: count}, see latencyBucket). */
  modelHist: Record<string, number>
  tickets: number
  /** Of the conversation's first ticket, in seconds. */
  firstResponseS: number | null
  resolveS: number | null
  outcome: FinalOutcome
}

/** The outcome once final: a pure function of the conversation's record. */
export function finalOutcome(messages: readonly FactMessage[], ticketCount: number): FinalOutcome {
  if (ticketCount > 0) return 'handed_off'
  // a question left without any answer (the turn failed) is refused in effect
  if (messages[messages.length - 1]?.role === 'user') return 'unresolved'
  const bot = messages.filter((m) => m.role === 'assistant' && !m.fromOperator)
  const last = bot[bot.length - 1]
  if (last?.refused && last.feedback !== 'up') return 'unresolved'
  const rated = bot.filter((m) => m.feedback !== 'none')
  const verdict = rated[rated.length - 1]?.feedback
  if (verdict === 'down') return 'unresolved'
  if (verdict === 'up') return 'resolved_confirmed'
  return 'resolved_assumed'
}

/** An outcome that no later message changes: a ticket was opened, so it is handed_off from that moment. */
export const finalAtOnce = (o: string) => o === 'handed_off'

/** The outcome at `now`: pending until 24 h after the last message, unless it is final at once (a hand-off). */
export function outcomeAt(f: Pick<ConversationFacts, 'lastMessageAt' | 'outcome'>, now: Date): Outcome {
  if (finalAtOnce(f.outcome)) return f.outcome
  return now.getTime() < f.lastMessageAt.getTime() + FINAL_AFTER_MS ? 'pending' : f.outcome
}

/** The facts of one conversation (messages in time order); null for a session without messages. */
export function conversationFacts(startedAt: Date, messages: readonly FactMessage[], tickets: readonly FactTicket[]): ConversationFacts | null {
  if (messages.length === 0) return null
  const f: ConversationFacts = {
    startedAt,
    lastMessageAt: messages[0]!.createdAt,
    questions: 0,
    messages: messages.length,
    botUp: 0,
    botDown: 0,
    opUp: 0,
    opDown: 0,
    tokens: 0,
    modelHist: {},
    tickets: tickets.length,
    firstResponseS: null,
    resolveS: null,
    outcome: finalOutcome(messages, tickets.length),
  }
  for (const m of messages) {
    if (m.createdAt > f.lastMessageAt) f.lastMessageAt = m.createdAt
    f.tokens += m.tokens
    if (m.role === 'user') f.questions++
    else if (m.fromOperator) {
      if (m.feedback === 'up') f.opUp++
      if (m.feedback === 'down') f.opDown++
    } else {
      if (m.feedback === 'up') f.botUp++
      if (m.feedback === 'down') f.botDown++
      if (m.modelMs !== null && m.modelMs > 0) {
        const b = String(latencyBucket(m.modelMs))
        f.modelHist[b] = (f.modelHist[b] ?? 0) + 1
      }
    }
  }
  const first = [...tickets].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())[0]
  if (first) {
    const secs = (d: Date | null) => (d ? Math.max(0, Math.round((d.getTime() - first.createdAt.getTime()) / 1000)) : null)
    f.firstResponseS = secs(first.firstResponseAt)
    f.resolveS = secs(first.resolvedAt)
  }
  return f
}

export type OutcomeCounts = Record<Outcome, number>
export const zeroCounts = (): OutcomeCounts => ({ handed_off: 0, resolved_confirmed: 0, resolved_assumed: 0, unresolved: 0, pending: 0 })

/** Shares are given to this many decimals. */
export const SHARE_DECIMALS = 4

/**
 * Each outcome's count and share of the total, the shares rounded so that they sum to exactly 1 (largest
 * remainder: whole units of 10^-4 go to the outcomes whose exact share lost most to rounding down). With
 * no conversation every share is 0.
 */
export function outcomeShares(counts: OutcomeCounts): Record<Outcome, { count: number; share: number }> {
  const total = OUTCOMES.reduce((s, o) => s + counts[o], 0)
  const unit = 10 ** SHARE_DECIMALS
  const exact = OUTCOMES.map((o) => (total === 0 ? 0 : (counts[o] * unit) / total))
  const floors = exact.map(Math.floor)
  let left = total === 0 ? 0 : unit - floors.reduce((s, x) => s + x, 0)
  const order = exact.map((x, i) => ({ i, rest: x - floors[i]! })).sort((a, b) => b.rest - a.rest || a.i - b.i)
  for (const { i } of order) {
    if (left <= 0) break
    floors[i]!++
    left--
  }
  return Object.fromEntries(OUTCOMES.map((o, i) => [o, { count: counts[o], share: floors[i]! / unit }])) as Record<Outcome, { count: number; share: number }>
}

/** Model latency buckets: powers of 1.1 (each value reported within 5 %), so histograms add up across days. */
const BUCKET_BASE = 1.1
export function latencyBucket(ms: number): number {
  return ms <= 1 ? 0 : Math.ceil(Math.log(ms) / Math.log(BUCKET_BASE))
}
/** The value a bucket stands for: the geometric middle of (1.1^(b-1), 1.1^b], to 0.1 ms (whole milliseconds would add up to 5 % more error on a fast model's few milliseconds). */
export const bucketValue = (b: number): number => (b <= 0 ? 1 : Math.round(10 * BUCKET_BASE ** (b - 0.5)) / 10)

/** The p-quantile (0..1) of a histogram {bucket: count}; null when empty. Nearest rank. */
export function histPercentile(hist: Record<string, number>, p: number): number | null {
  const entries = Object.entries(hist)
    .map(([b, n]) => [Number(b), n] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => a[0] - b[0])
  const total = entries.reduce((s, [, n]) => s + n, 0)
  if (total === 0) return null
  const rank = Math.max(1, Math.ceil(p * total))
  let seen = 0
  for (const [b, n] of entries) {
    seen += n
    if (seen >= rank) return bucketValue(b)
  }
  return bucketValue(entries[entries.length - 1]![0])
}

export function addHist(into: Record<string, number>, from: Record<string, number>): Record<string, number> {
  for (const [b, n] of Object.entries(from)) into[b] = (into[b] ?? 0) + Number(n)
  return into
}

// --- dates and time zones -------------------------------------------------------------------------------

export const MAX_RANGE_DAYS = 366

/** True when Intl knows the IANA zone. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz })
    return tz.length <= 64
  } catch {
    return false
  }
}

/** Offset of `tz` from UTC at instant `t`, in ms (local = utc + offset). */
const formats = new Map<string, Intl.DateTimeFormat>()
function tzOffsetMs(t: number, tz: string): number {
  let f = formats.get(tz)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    if (formats.size > 500) formats.clear()
    formats.set(tz, f)
  }
  const parts = f.formatToParts(new Date(t))
  const v = (type: string) => Number(parts.find((p) => p.type === type)!.value)
  const asUtc = Date.UTC(v('year'), v('month') - 1, v('day'), v('hour'), v('minute'), v('second'))
  return asUtc - Math.floor(t / 1000) * 1000
}

/** The instant a local calendar day (YYYY-MM-DD) starts in `tz`. */
export function localMidnight(date: string, tz: string): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number]
  const wall = Date.UTC(y, m - 1, d)
  let t = wall - tzOffsetMs(wall, tz)
  t = wall - tzOffsetMs(t, tz)
  return new Date(t)
}

/** The calendar day after `date`. */
export function nextDay(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number]
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10)
}

/** Every day from `from` to `to`, inclusive. */
export function daysOf(from: string, to: string): string[] {
  const out: string[] = []
  for (let d = from; d <= to && out.length <= MAX_RANGE_DAYS; d = nextDay(d)) out.push(d)
  return out
}

export function isIsoDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false
  const d = new Date(`${s}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s
}

/** A range problem, naming the field (the service turns it into a 422). */
export interface RangeProblem {
  field: 'from' | 'to' | 'tz'
  message: string
}

/** [start, end) instants of the local days from..to (inclusive) in `tz`, or what is wrong with them. */
export function resolveRange(from: string, to: string, tz: string): { start: Date; end: Date; days: string[] } | RangeProblem {
  if (!isTimeZone(tz)) return { field: 'tz', message: 'Unknown time zone (an IANA name such as Europe/Berlin)' }
  if (!isIsoDate(from)) return { field: 'from', message: 'Expected a date YYYY-MM-DD' }
  if (!isIsoDate(to)) return { field: 'to', message: 'Expected a date YYYY-MM-DD' }
  if (to < from) return { field: 'to', message: 'Must not be before from' }
  const days = daysOf(from, to)
  if (days.length > MAX_RANGE_DAYS) return { field: 'to', message: `The range may span at most ${MAX_RANGE_DAYS} days` }
  return { start: localMidnight(from, tz), end: localMidnight(nextDay(to), tz), days }
}

/** Rollup bins a range can be read in: 15-minute slots, hours, UTC days (see rollup.repo.ts). */
export type RangeGrain = 'q' | 'h' | 'd'
const HOUR = 3600_000
const DAY = 24 * HOUR

/** The coarsest grain whose bins start at every one of these instants. */
export function grainFor(boundaries: readonly Date[]): RangeGrain {
  if (boundaries.every((b) => b.getTime() % DAY === 0)) return 'd'
  if (boundaries.every((b) => b.getTime() % HOUR === 0)) return 'h'
  return 'q'
}

export interface RollupRead {
  grain: RangeGrain
  from: Date
  to: Date
  /** Only (or all but) the bins whose UTC hour of day is one of these. */
  hours?: { only: boolean; list: number[] }
}

/**
 * The rollup reads that give local days exactly: the coarsest grain that starts at every local midnight; for
 * a zone off the whole hour (India, Nepal, Newfoundland...), hours except those a local midnight falls in, and
 * 15-minute slots within those (a few per day instead of 96).
 */
export function dailyReads(midnights: readonly Date[]): RollupRead[] {
  const from = midnights[0]!
  const to = midnights[midnights.length - 1]!
  const grain = grainFor(midnights)
  if (grain !== 'q') return [{ grain, from, to }]
  const list = [...new Set(midnights.map((m) => Math.floor((m.getTime() % DAY) / HOUR)))]
  return [
    { grain: 'h', from, to, hours: { only: false, list } },
    { grain: 'q', from, to, hours: { only: true, list } },
  ]
}

/**
 * The rollup reads that sum [start, end) exactly with the fewest rows: whole UTC days inside, and the edges
 * in hours or 15-minute slots.
 */
export function rangeReads(start: Date, end: Date): RollupRead[] {
  const edge = grainFor([start, end])
  const a = Math.ceil(start.getTime() / DAY) * DAY
  const b = Math.floor(end.getTime() / DAY) * DAY
  if (a >= b) return [{ grain: edge, from: start, to: end }]
  const reads: RollupRead[] = [{ grain: 'd', from: new Date(a), to: new Date(b) }]
  if (start.getTime() < a) reads.push({ grain: edge, from: start, to: new Date(a) })
  if (b < end.getTime()) reads.push({ grain: edge, from: new Date(b), to: end })
  return reads
}

// --- exports ----------------------------------------------------------------------------------------------

/**
 * A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, or a leading tab / carriage return)
 * is prefixed with `'`, which spreadsheets show as text (OWASP "CSV injection").
 */
export function neutraliseCell(value: unknown): unknown {
  if (typeof value !== 'string') return value
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
}
