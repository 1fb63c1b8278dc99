import { describe, expect, it } from 'vitest'
import {
  conversationFacts,
  finalOutcome,
  dailyReads,
  grainFor,
  histPercentile,
  latencyBucket,
  localMidnight,
  neutraliseCell,
  OUTCOMES,
  outcomeAt,
  outcomeShares,
  rangeReads,
  resolveRange,
  type FactMessage,
} from './analytics.fns.js'

const t0 = new Date('2026-03-01T10:00:00Z')
const msg = (p: Partial<FactMessage>, i = 0): FactMessage => ({
  role: 'assistant',
  fromOperator: false,
  feedback: 'none',
  tokens: 0,
  modelMs: null,
  refused: false,
  createdAt: new Date(t0.getTime() + i * 1000),
  ...p,
})
const q = (i: number) => msg({ role: 'user' }, i)

describe('conversation outcome', () => {
  it('is handed off whenever a ticket was opened, whatever the feedback', () => {
    expect(finalOutcome([q(0), msg({ feedback: 'up' }, 1)], 1)).toBe('handed_off')
  })
  it('is confirmed by positive feedback, unresolved by negative, the latest verdict winning', () => {
    expect(finalOutcome([q(0), msg({ feedback: 'up' }, 1)], 0)).toBe('resolved_confirmed')
    expect(finalOutcome([q(0), msg({ feedback: 'down' }, 1)], 0)).toBe('unresolved')
    expect(finalOutcome([q(0), msg({ feedback: 'down' }, 1), q(2), msg({ feedback: 'up' }, 3)], 0)).toBe('resolved_confirmed')
    expect(finalOutcome([q(0), msg({ feedback: 'up' }, 1), q(2), msg({ feedback: 'down' }, 3)], 0)).toBe('unresolved')
  })
  it('is unresolved when the last answer was a refusal, assumed resolved otherwise', () => {
    expect(finalOutcome([q(0), msg({ refused: true }, 1)], 0)).toBe('unresolved')
    expect(finalOutcome([q(0), msg({ refused: true }, 1), q(2), msg({}, 3)], 0)).toBe('resolved_assumed')
    expect(finalOutcome([q(0), msg({}, 1)], 0)).toBe('resolved_assumed')
    // a failed turn leaves the question without an answer
    expect(finalOutcome([q(0), msg({}, 1), q(2)], 0)).toBe('unresolved')
    // operator feedback does not decide a conversation without ticket
    expect(finalOutcome([q(0), msg({}, 1), msg({ fromOperator: true, feedback: 'down' }, 2)], 0)).toBe('resolved_assumed')
  })
  it('is pending until 24 h after the last message', () => {
    const f = conversationFacts(t0, [q(0), msg({ feedback: 'up' }, 60)], [])!
    expect(outcomeAt(f, new Date(t0.getTime() + 60_000 + 24 * 3600_000 - 1))).toBe('pending')
    expect(outcomeAt(f, new Date(t0.getTime() + 60_000 + 24 * 3600_000))).toBe('resolved_confirmed')
  })
  it('counts a hand-off at once: the ticket is open, no later message changes the outcome (Insights said 0 % with 8 tickets)', () => {
    expect(outcomeAt({ lastMessageAt: t0, outcome: 'handed_off' }, new Date(t0.getTime() + 60_000))).toBe('handed_off')
    expect(outcomeAt({ lastMessageAt: t0, outcome: 'unresolved' }, new Date(t0.getTime() + 60_000))).toBe('pending')
  })
  it('computes the facts: counts, tokens, latency, first ticket times', () => {
    const created = new Date(t0.getTime() + 5000)
    const f = conversationFacts(
      t0,
      [
        q(0),
        msg({ tokens: 30, modelMs: 800, feedback: 'up' }, 1),
        q(2),
        msg({ tokens: 20, modelMs: 1200 }, 3),
        msg({ fromOperator: true, feedback: 'down' }, 400),
      ],
      [{ createdAt: created, firstResponseAt: new Date(created.getTime() + 120_000), resolvedAt: new Date(created.getTime() + 300_000) }],
    )!
    expect(f).toMatchObject({
      questions: 2,
      messages: 5,
      botUp: 1,
      botDown: 0,
      opUp: 0,
      opDown: 1,
      tokens: 50,
      tickets: 1,
      firstResponseS: 120,
      resolveS: 300,
      outcome: 'handed_off',
    })
    expect(f.lastMessageAt).toEqual(new Date(t0.getTime() + 400_000))
    expect(Object.values(f.modelHist).reduce((a, b) => a + b, 0)).toBe(2)
    expect(conversationFacts(t0, [], [])).toBeNull()
  })
})

describe('shares', () => {
  const sum = (s: ReturnType<typeof outcomeShares>) => OUTCOMES.reduce((a, o) => a + Math.round(s[o].share * 10_000), 0)
  it('sum to exactly 1 however the counts divide', () => {
    for (const counts of [
      [1, 1, 1, 0, 0],
      [1, 1, 1, 1, 1],
      [2, 3, 0, 0, 1],
      [7, 11, 13, 17, 19],
      [1, 0, 0, 0, 0],
      [9999, 1, 1, 1, 1],
    ]) {
      const s = outcomeShares(Object.fromEntries(OUTCOMES.map((o, i) => [o, counts[i]!])) as never)
      expect(sum(s)).toBe(10_000)
      expect(Math.abs(OUTCOMES.reduce((a, o) => a + s[o].share, 0) - 1)).toBeLessThan(1e-9)
    }
  })
  it('are all 0 without conversations', () => {
    const s = outcomeShares({ handed_off: 0, resolved_confirmed: 0, resolved_assumed: 0, unresolved: 0, pending: 0 })
    expect(OUTCOMES.map((o) => s[o].share)).toEqual([0, 0, 0, 0, 0])
  })
})

describe('latency histogram', () => {
  it('reports a percentile within 5 %', () => {
    const hist: Record<string, number> = {}
    for (const ms of [100, 200, 300, 400, 1000]) hist[latencyBucket(ms)] = (hist[latencyBucket(ms)] ?? 0) + 1
    expect(Math.abs(histPercentile(hist, 0.5)! - 300) / 300).toBeLessThan(0.05)
    expect(Math.abs(histPercentile(hist, 0.95)! - 1000) / 1000).toBeLessThan(0.05)
    expect(histPercentile({}, 0.5)).toBeNull()
  })
})

describe('ranges and time zones', () => {
  it('starts local days at local midnight, across DST and half-hour zones', () => {
    expect(localMidnight('2026-03-29', 'Europe/Berlin').toISOString()).toBe('2026-03-28T23:00:00.000Z')
    expect(localMidnight('2026-03-30', 'Europe/Berlin').toISOString()).toBe('2026-03-29T22:00:00.000Z')
    expect(localMidnight('2026-01-15', 'Asia/Kolkata').toISOString()).toBe('2026-01-14T18:30:00.000Z')
    expect(localMidnight('2026-01-15', 'America/New_York').toISOString()).toBe('2026-01-15T05:00:00.000Z')
  })
  it('names the bad field', () => {
    expect(resolveRange('2026-01-01', '2026-01-31', 'Mars/Base')).toMatchObject({ field: 'tz' })
    expect(resolveRange('2026-02-30', '2026-03-01', 'UTC')).toMatchObject({ field: 'from' })
    expect(resolveRange('2026-13-01', '2026-03-01', 'UTC')).toMatchObject({ field: 'from' })
    expect(resolveRange('2026-03-01', '2026-02-01', 'UTC')).toMatchObject({ field: 'to' })
    expect(resolveRange('2024-01-01', '2025-01-02', 'UTC')).toMatchObject({ field: 'to' })
    expect(resolveRange('2024-01-01', '2024-12-31', 'UTC')).toMatchObject({ days: expect.any(Array) })
  })
})

describe('CSV cells', () => {
  it('neutralises formulas', () => {
    for (const v of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) expect(neutraliseCell(v)).toBe(`'${v}`)
    expect(neutraliseCell('hello = world')).toBe('hello = world')
    expect(neutraliseCell(-5)).toBe(-5)
  })
})

describe('rollup reads', () => {
  it('read whole UTC days inside a range and finer bins at its edges, covering it exactly', () => {
    const start = localMidnight('2026-01-10', 'Asia/Kolkata')
    const end = localMidnight('2026-02-10', 'Asia/Kolkata')
    const reads = rangeReads(start, end)
    expect(reads.map((r) => r.grain)).toEqual(['d', 'q', 'q'])
    const covered = reads.reduce((s, r) => s + (r.to.getTime() - r.from.getTime()), 0)
    expect(covered).toBe(end.getTime() - start.getTime())
    expect(rangeReads(localMidnight('2026-01-10', 'America/New_York'), localMidnight('2026-01-11', 'America/New_York')).map((r) => r.grain)).toEqual(['h'])
    expect(rangeReads(localMidnight('2026-01-10', 'UTC'), localMidnight('2026-03-10', 'UTC')).map((r) => r.grain)).toEqual(['d'])
  })
  it('pick the coarsest grain that starts at every local midnight', () => {
    expect(grainFor([localMidnight('2026-01-10', 'UTC')])).toBe('d')
    expect(grainFor([localMidnight('2026-03-29', 'Europe/Berlin'), localMidnight('2026-03-30', 'Europe/Berlin')])).toBe('h')
    expect(grainFor([localMidnight('2026-01-10', 'Asia/Kathmandu')])).toBe('q')
  })
})

describe('daily reads', () => {
  it('read a zone off the whole hour in hours, and slots only in the hours its midnights fall in', () => {
    const days = ['2026-01-10', '2026-01-11', '2026-01-12'].map((d) => localMidnight(d, 'Asia/Kolkata'))
    const reads = dailyReads(days)
    expect(reads).toEqual([
      { grain: 'h', from: days[0], to: days[2], hours: { only: false, list: [18] } },
      { grain: 'q', from: days[0], to: days[2], hours: { only: true, list: [18] } },
    ])
    expect(dailyReads(['2026-03-28', '2026-03-29', '2026-03-30'].map((d) => localMidnight(d, 'Europe/Berlin')))).toEqual([
      { grain: 'h', from: localMidnight('2026-03-28', 'Europe/Berlin'), to: localMidnight('2026-03-30', 'Europe/Berlin') },
    ])
  })
})
