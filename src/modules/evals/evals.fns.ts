import { createHash } from 'node:crypto'
import { parse } from 'csv-parse/sync'
import type { EvalCheck, EvalExpect, EvalOutcome, EvalResult, EvalTotals } from '../../db/schema/evals.js'
import { compileLinear, PatternError } from '../../lib/linear-regex.js'

/**
 * Evaluations as pure functions: reading a fact ("/regex/flags" or plain text), the deterministic checks of one
 * answer, a case's verdict over its repeats, totals, the diff of two runs, JUnit XML and the CSV/JSONL import.
 */

/** Bumped whenever the answer prompt's wording changes, so runs before and after are told apart (pins). */
export const PROMPT_VERSION = 'answer-prompt-2026-11'

const REGEX = /^\/(.+)\/([a-z]*)$/s

/**
 * A fact written as "/pattern/flags" is a regular expression, run in linear time (a tenant's pattern never
 * stalls the process); anything else is text. Throws PatternError on a pattern the engine refuses; the matcher
 * throws PatternError when the text is beyond the engine's limit (the check fails).
 */
export function factMatcher(fact: string): (text: string) => boolean {
  const m = REGEX.exec(fact)
  if (m) {
    const re = compileLinear(m[1]!, m[2]!)
    return (text) => re.test(text)
  }
  const needle = fact.toLowerCase()
  return (text) => text.toLowerCase().includes(needle)
}

/** The first invalid regex among the facts and forbidden texts, as a field path and message. */
export function badPattern(expect: Pick<EvalExpect, 'facts' | 'forbidden'>): { loc: (string | number)[]; message: string } | null {
  for (const field of ['facts', 'forbidden'] as const) {
    const list = expect[field] ?? []
    for (let i = 0; i < list.length; i++) {
      try {
        factMatcher(list[i]!)
      } catch (err) {
        const why = err instanceof PatternError ? err.message : 'it does not compile'
        return { loc: ['body', 'expect', field, i], message: `Invalid regular expression: ${why}` }
      }
    }
  }
  return null
}

/** What one dry-run turn came to, as the checks read it. */
export interface Observed {
  outcome: EvalOutcome
  answer: string
  /** cited document ids and URLs */
  cited: string[]
  /** document ids and URLs of the passages given to the model (or retrieved, when none were) */
  passages: string[]
  actions: { name: string; arguments: Record<string, unknown> }[]
  /** the language the turn answered in (the session's language, #40) */
  language?: string | null
}

/** Whether `sub`'s every key is in `whole` with an equal value (deep, for objects; strings case-insensitively). */
export function isSubset(sub: unknown, whole: unknown): boolean {
  if (sub && typeof sub === 'object' && !Array.isArray(sub)) {
    if (!whole || typeof whole !== 'object' || Array.isArray(whole)) return false
    return Object.entries(sub).every(([k, v]) => isSubset(v, (whole as Record<string, unknown>)[k]))
  }
  if (typeof sub === 'string' && typeof whole === 'string') return sub.toLowerCase() === whole.toLowerCase()
  return JSON.stringify(sub) === JSON.stringify(whole)
}

/** Whether a fact is in the text; a string: why it could not be checked (a pattern saved before the engine's rules, a limit hit). */
function safeMatch(fact: string, text: string): boolean | string {
  try {
    return factMatcher(fact)(text)
  } catch (err) {
    return `not checked: ${err instanceof PatternError ? err.message : 'the pattern could not be run'}`
  }
}

/** The deterministic checks of one answer against a case's expectation. */
export function checkAnswer(expect: EvalExpect, o: Observed): EvalCheck[] {
  const checks: EvalCheck[] = [{ name: 'outcome', passed: o.outcome === expect.outcome, detail: `expected ${expect.outcome}, got ${o.outcome}` }]
  if (expect.sources_any?.length) {
    const hit = expect.sources_any.find((s) => o.cited.includes(s))
    checks.push({
      name: 'sources_any',
      passed: !!hit,
      detail: hit ? `cited ${hit}` : `none of ${expect.sources_any.join(', ')} cited (cited: ${o.cited.join(', ') || 'nothing'})`,
    })
  }
  for (const fact of expect.facts ?? []) {
    const ok = safeMatch(fact, o.answer)
    if (typeof ok === 'string') checks.push({ name: `fact: ${fact}`, passed: false, detail: ok })
    else checks.push({ name: `fact: ${fact}`, passed: ok, detail: ok ? 'present' : 'not in the answer' })
  }
  for (const text of expect.forbidden ?? []) {
    const found = safeMatch(text, o.answer)
    if (typeof found === 'string') checks.push({ name: `forbidden: ${text}`, passed: false, detail: found })
    else checks.push({ name: `forbidden: ${text}`, passed: !found, detail: found ? 'present in the answer' : 'absent' })
  }
  if (expect.language) {
    const got = o.language ?? null
    checks.push({ name: `language: ${expect.language}`, passed: got === expect.language, detail: `expected ${expect.language}, got ${got ?? 'none'}` })
  }
  if (expect.action) {
    const want = expect.action
    const call = o.actions.find((a) => a.name === want.name && isSubset(want.arguments, a.arguments))
    const named = o.actions.filter((a) => a.name === want.name)
    checks.push({
      name: `action: ${want.name}`,
      passed: !!call,
      detail: call ? 'called with the expected arguments' : named.length ? `called with ${JSON.stringify(named[0]!.arguments)}` : 'not called',
    })
  }
  return checks
}

/** Whether an expected source was among the passages; null when the case names none (there is nothing to reach). */
export const reachedFor = (expect: EvalExpect, passages: string[]): boolean | null =>
  expect.sources_any?.length ? expect.sources_any.some((s) => passages.includes(s)) : null

type Repeat = EvalResult['runs'][number]

/** A case over its repeats: passed only when every repeat passed; flaky when some did. The first failing repeat is shown. */
export function caseResult(caseId: string, runs: Repeat[]): EvalResult {
  const passed = runs.length > 0 && runs.every((r) => r.passed)
  const flaky = !passed && runs.some((r) => r.passed)
  const shown = runs.find((r) => !r.passed) ?? runs[0]!
  return {
    case_id: caseId,
    passed,
    flaky,
    outcome: shown.outcome,
    answer: shown.answer,
    cited: shown.cited,
    reached: shown.reached,
    checks: shown.checks,
    runs,
  }
}

export function totalsOf(results: Pick<EvalResult, 'passed' | 'flaky'>[]): EvalTotals {
  const passed = results.filter((r) => r.passed).length
  const flaky = results.filter((r) => r.flaky).length
  return { cases: results.length, passed, failed: results.length - passed, flaky }
}

/** Case ids by how they moved from the `against` run to this one; `missing`: in one run only. */
export function diffRuns(run: Pick<EvalResult, 'case_id' | 'passed'>[], against: Pick<EvalResult, 'case_id' | 'passed'>[]) {
  const before = new Map(against.map((r) => [r.case_id, r.passed]))
  const now = new Set(run.map((r) => r.case_id))
  const out = { fixed: [] as string[], broken: [] as string[], still_passing: [] as string[], still_failing: [] as string[], missing: [] as string[] }
  for (const r of run) {
    const b = before.get(r.case_id)
    if (b === undefined) out.missing.push(r.case_id)
    else if (r.passed) (b ? out.still_passing : out.fixed).push(r.case_id)
    else (b ? out.broken : out.still_failing).push(r.case_id)
  }
  for (const id of before.keys()) if (!now.has(id)) out.missing.push(id)
  return out
}

const xml = (s: string) =>
  s
    // what XML 1.0 cannot hold (controls, U+FFFE/U+FFFF, lone surrogates) is dropped, so the report stays valid XML
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
    .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)

/** JUnit XML: one testcase per case (named by its question), a failure listing the failed checks. */
export function junitXml(run: { id: string; partial: boolean }, results: EvalResult[], questions: Map<string, string>): string {
  const t = totalsOf(results)
  const cases = results.map((r) => {
    const name = xml(`${(questions.get(r.case_id) ?? r.case_id).slice(0, 200)} [${r.case_id}]`)
    if (r.passed) return `    <testcase classname="evals" name="${name}"/>`
    const failed = r.checks.filter((c) => !c.passed).map((c) => `${c.name}: ${c.detail}`)
    const message = xml(`${r.flaky ? 'flaky: ' : ''}${failed.join('; ')}`)
    return `    <testcase classname="evals" name="${name}">\n      <failure message="${message}">${message}</failure>\n    </testcase>`
  })
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="evals" tests="${t.cases}" failures="${t.failed}">`,
    `  <testsuite name="run ${xml(run.id)}${run.partial ? ' (partial)' : ''}" tests="${t.cases}" failures="${t.failed}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n')
}

/** A stable short hash of anything JSON. */
export const hashOf = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16)

/** A lone surrogate (half of a pair, from a `\ud800` escape) as U+FFFD: the database stores only well-formed text. */
const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')

/** One line of an import: a case to validate, or why the line could not be read. */
export type ImportLine = { line: number; input: unknown } | { line: number; error: string }

const multi = (v: unknown) =>
  typeof v === 'string' && v.trim()
    ? v
        .split('|')
        .map((x) => x.trim())
        .filter(Boolean)
    : null

/** CSV (header: question, expected_outcome, sources, facts, tags; "|" between values) or JSONL, by its first character. */
export function importLines(text: string): ImportLine[] {
  const body = text.replace(/^\uFEFF/, '')
  if (body.trimStart().startsWith('{')) {
    return body.split(/\r?\n/).flatMap((l, i): ImportLine[] => {
      if (!l.trim()) return []
      try {
        return [{ line: i + 1, input: JSON.parse(l, (_k, v: unknown) => (typeof v === 'string' ? wellFormed(v) : v)) }]
      } catch {
        return [{ line: i + 1, error: 'Not valid JSON' }]
      }
    })
  }
  let rows: Record<string, string>[]
  try {
    rows = parse(body, { columns: (h: string[]) => h.map((x) => x.trim().toLowerCase()), skip_empty_lines: true, relax_column_count: true, trim: true })
  } catch (err) {
    return [{ line: 1, error: `Not valid CSV: ${(err as Error).message.slice(0, 200)}` }]
  }
  // line 1 is the header
  return rows.map((r, i) => ({
    line: i + 2,
    input: {
      question: r.question ?? '',
      expect: {
        outcome: r.expected_outcome || 'answered',
        sources_any: multi(r.sources),
        facts: multi(r.facts),
        forbidden: null,
        action: null,
        ...(r.language ? { language: r.language.toLowerCase() } : {}),
      },
      tags: multi(r.tags) ?? [],
    },
  }))
}

/**
 * The case list's keyset cursor: the last case's creation time and id, so the next page starts strictly after
 * it in creation order (an import gives many cases one time; the id orders them). Opaque to clients
 * (base64url of "<ms>.<uuid>"); null when it is not one of ours.
 */
export function encodeCaseCursor(at: Date, id: string): string {
  return Buffer.from(`${at.getTime()}.${id}`).toString('base64url')
}

export function decodeCaseCursor(cursor: string): { at: Date; id: string } | null {
  const m = /^(\d{1,15})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!m) return null
  const at = new Date(Number(m[1]))
  return Number.isNaN(at.getTime()) ? null : { at, id: m[2]! }
}
