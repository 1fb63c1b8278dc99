import type { Body, Res } from '../api/types'

/** The evaluations screens' types, straight from the generated schema. */
export type EvalCase = Res<'/evals/cases', 'get'>['items'][number]
export type EvalCaseInput = Body<'/evals/cases', 'post'>
export type EvalRunSummary = Res<'/evals/runs', 'get'>['items'][number]
export type EvalRun = Exclude<Res<'/evals/runs/{id}', 'get'>, string>
export type EvalResult = EvalRun['results'][number]
export type EvalDiff = Res<'/evals/runs/{id}/diff', 'get'>

/** Share of passed cases of a run, 0..1 (null: no case ran). */
export const passRate = (t: EvalRunSummary['totals']): number | null => (t.cases > 0 ? t.passed / t.cases : null)
export const percent = (v: number | null): string => (v === null ? '–' : `${Math.round(v * 100)}%`)

/** "a, b" to a list of tags, blanks dropped, each trimmed. */
export const tagsOf = (text: string): string[] => [
  ...new Set(
    text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ),
]

export const OUTCOMES = [
  ['answered', 'Answered'],
  ['handed_off', 'Handed off to a person'],
] as const
