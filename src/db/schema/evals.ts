import type { Generated } from 'kysely'
import type { Json, NullableJson, NullableTimestamp, Timestamp } from './foundation.js'

export type EvalOutcome = 'answered' | 'handed_off'
export type EvalRunStatus = 'queued' | 'running' | 'done' | 'failed'

export interface EvalExpect {
  outcome: EvalOutcome
  sources_any: string[] | null
  facts: string[] | null
  forbidden: string[] | null
  action: { name: string; arguments: Record<string, unknown> } | null
  /** the language the answer is in (the session's language, #40); absent or null: not checked */
  language?: string | null
}

export interface EvalPins {
  knowledge_version: string
  settings_hash: string
  chat_model: string
  embedding_model: string
  prompt_version: string
}

export interface EvalTotals {
  cases: number
  passed: number
  failed: number
  flaky: number
}

export interface EvalCheck {
  name: string
  passed: boolean
  detail: string
}

/** One case's result in a run (the contract's result item), stored whole. */
export interface EvalResult {
  case_id: string
  passed: boolean
  flaky: boolean
  outcome: EvalOutcome
  answer: string
  cited: string[]
  /** whether an expected source was among the passages given to the model; null when the case names none */
  reached: boolean | null
  checks: EvalCheck[]
  runs: { passed: boolean; outcome: EvalOutcome; answer: string; cited: string[]; reached: boolean | null; checks: EvalCheck[] }[]
}

export interface EvalCasesTable {
  id: Generated<string>
  tenant_id: string
  bot_id: string | null
  question: string
  turns: NullableJson<string[]>
  visitor_claims: NullableJson<Record<string, unknown>>
  expect: Json<EvalExpect>
  tags: Json<string[]>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface EvalRunsTable {
  id: Generated<string>
  tenant_id: string
  bot_id: string | null
  tags: NullableJson<string[]>
  repeat: number
  status: Generated<EvalRunStatus>
  progress: Generated<number>
  partial: Generated<boolean>
  pins: NullableJson<EvalPins>
  totals: Json<EvalTotals>
  tokens: Generated<number>
  error: string | null
  created_by: string | null
  created_at: Timestamp
  finished_at: NullableTimestamp
  /** manual, or auto: started by a knowledge change with evals_auto_run on (1400) */
  trigger: Generated<'manual' | 'auto'>
}

export interface EvalResultsTable {
  run_id: string
  tenant_id: string
  case_id: string
  position: number
  result: Json<EvalResult>
}

export interface EvalsTables {
  eval_cases: EvalCasesTable
  eval_runs: EvalRunsTable
  eval_results: EvalResultsTable
}
