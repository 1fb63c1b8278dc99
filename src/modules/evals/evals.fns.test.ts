import { XMLParser } from 'fast-xml-parser'
import { describe, expect, it } from 'vitest'
import type { EvalExpect } from '../../db/schema/evals.js'
import {
  badPattern,
  caseResult,
  checkAnswer,
  decodeCaseCursor,
  diffRuns,
  encodeCaseCursor,
  factMatcher,
  importLines,
  isSubset,
  junitXml,
  totalsOf,
} from './evals.fns.js'

const expectOf = (e: Partial<EvalExpect>): EvalExpect => ({ outcome: 'answered', sources_any: null, facts: null, forbidden: null, action: null, ...e })
const observed = {
  outcome: 'answered' as const,
  answer: 'Refunds take 5 business days.',
  cited: ['doc-1', 'https://x.test/r'],
  passages: ['doc-1'],
  actions: [],
}

describe('evals.fns', () => {
  it('reads a fact as case-insensitive text or as /regex/flags, and names a bad regex by its field', () => {
    expect(factMatcher('BUSINESS days')('5 business days')).toBe(true)
    expect(factMatcher('/^\\d business/')('5 business days')).toBe(true)
    expect(factMatcher('/BUSINESS/')('5 business days')).toBe(false)
    expect(factMatcher('/BUSINESS/i')('5 business days')).toBe(true)
    expect(badPattern({ facts: ['ok', '/(/'], forbidden: null })?.loc).toEqual(['body', 'expect', 'facts', 1])
    expect(badPattern({ facts: null, forbidden: ['/[/'] })?.loc).toEqual(['body', 'expect', 'forbidden', 0])
    expect(badPattern({ facts: ['/a+/g'], forbidden: null })).toBeNull()
  })

  it('checks outcome, any cited source, facts, forbidden texts and an action with an argument subset', () => {
    const checks = checkAnswer(
      expectOf({
        sources_any: ['https://x.test/r'],
        facts: ['5 business'],
        forbidden: ['30 days'],
        action: { name: 'order_status', arguments: { order: 'A1' } },
      }),
      { ...observed, actions: [{ name: 'order_status', arguments: { order: 'a1', extra: 1 } }] },
    )
    expect(checks.map((c) => [c.name, c.passed])).toEqual([
      ['outcome', true],
      ['sources_any', true],
      ['fact: 5 business', true],
      ['forbidden: 30 days', true],
      ['action: order_status', true],
    ])
    const bad = checkAnswer(expectOf({ outcome: 'handed_off', forbidden: ['5 BUSINESS'], action: { name: 'x', arguments: {} } }), observed)
    expect(bad.filter((c) => !c.passed).map((c) => c.name)).toEqual(['outcome', 'forbidden: 5 BUSINESS', 'action: x'])
    expect(isSubset({ a: { b: 1 } }, { a: { b: 1, c: 2 } })).toBe(true)
    expect(isSubset({ a: 2 }, { a: '2' })).toBe(false)
  })

  it('passes a case only when every repeat passes; some passing is flaky; totals and diffs by case id', () => {
    const rep = (passed: boolean) => ({ passed, outcome: 'answered' as const, answer: '', cited: [], reached: true, checks: [] })
    expect(caseResult('a', [rep(true), rep(true)])).toMatchObject({ passed: true, flaky: false })
    expect(caseResult('a', [rep(true), rep(false)])).toMatchObject({ passed: false, flaky: true })
    expect(caseResult('a', [rep(false)])).toMatchObject({ passed: false, flaky: false })
    expect(
      totalsOf([
        { passed: true, flaky: false },
        { passed: false, flaky: true },
      ]),
    ).toEqual({ cases: 2, passed: 1, failed: 1, flaky: 1 })
    const before = [
      { case_id: 'a', passed: true },
      { case_id: 'b', passed: false },
      { case_id: 'c', passed: true },
      { case_id: 'd', passed: false },
      { case_id: 'gone', passed: true },
    ]
    const now = [
      { case_id: 'a', passed: false },
      { case_id: 'b', passed: true },
      { case_id: 'c', passed: true },
      { case_id: 'd', passed: false },
      { case_id: 'new', passed: true },
    ]
    expect(diffRuns(now, before)).toEqual({ fixed: ['b'], broken: ['a'], still_passing: ['c'], still_failing: ['d'], missing: ['new', 'gone'] })
  })

  it('writes JUnit XML that parses, escaping questions and listing failed checks', () => {
    const results = [
      caseResult('1', [{ passed: true, outcome: 'answered', answer: '', cited: [], reached: true, checks: [] }]),
      caseResult('2', [
        {
          passed: false,
          outcome: 'answered',
          answer: '',
          cited: [],
          reached: false,
          checks: [{ name: 'fact: <b>&', passed: false, detail: 'not in the answer' }],
        },
      ]),
    ]
    const text = junitXml({ id: 'r', partial: false }, results, new Map([['2', 'Is "A" < B & C?']]))
    const doc = new XMLParser({ ignoreAttributes: false }).parse(text)
    expect(doc.testsuites['@_failures']).toBe('1')
    expect(doc.testsuites.testsuite.testcase[1]['@_name']).toBe('Is "A" < B & C? [2]')
    expect(doc.testsuites.testsuite.testcase[1].failure['@_message']).toBe('fact: <b>&: not in the answer')
  })

  it('imports CSV with "|" between values, and JSONL, by line number', () => {
    const csv = importLines('question,expected_outcome,sources,facts,tags\n"Hi, there",handed_off,a|b,,x|y\n')
    expect(csv).toEqual([
      {
        line: 2,
        input: {
          question: 'Hi, there',
          expect: { outcome: 'handed_off', sources_any: ['a', 'b'], facts: null, forbidden: null, action: null },
          tags: ['x', 'y'],
        },
      },
    ])
    expect(importLines('{"question":"q"}\n\nnope').map((l) => [l.line, 'error' in l])).toEqual([
      [1, false],
      [3, true],
    ])
  })
})

describe('expect.language (#40)', () => {
  const base: EvalExpect = { outcome: 'answered', sources_any: null, facts: null, forbidden: null, action: null }
  const o = { outcome: 'answered' as const, answer: 'Ja.', cited: [], passages: [], actions: [] }
  it('checks the turn language deterministically', () => {
    expect(checkAnswer({ ...base, language: 'de' }, { ...o, language: 'de' }).find((c) => c.name === 'language: de')?.passed).toBe(true)
    expect(checkAnswer({ ...base, language: 'de' }, { ...o, language: 'en' }).find((c) => c.name === 'language: de')?.passed).toBe(false)
    expect(checkAnswer(base, { ...o, language: 'en' }).some((c) => c.name.startsWith('language'))).toBe(false)
  })
  it('imports a language column from CSV', () => {
    const [line] = importLines('question,expected_outcome,language\nWie geht das?,answered,DE\n')
    expect((line as { input: { expect: EvalExpect } }).input.expect.language).toBe('de')
  })
})

describe('case list cursor', () => {
  it('round-trips the time and id, and refuses what it did not make', () => {
    const at = new Date('2026-01-02T03:04:05.678Z')
    const id = '0b6c2f4e-1d2a-4c3b-9e8f-7a6b5c4d3e2f'
    expect(decodeCaseCursor(encodeCaseCursor(at, id))).toEqual({ at, id })
    expect(decodeCaseCursor('not-a-cursor')).toBeNull()
    expect(decodeCaseCursor(Buffer.from(`${at.getTime()}.42`).toString('base64url'))).toBeNull()
    expect(decodeCaseCursor(Buffer.from(`99999999999999999.${id}`).toString('base64url'))).toBeNull()
  })
})
