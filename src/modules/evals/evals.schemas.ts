import { Type, type Static } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'

const Outcome = Type.Union([Type.Literal('answered'), Type.Literal('handed_off')])
const Text = Type.String({ minLength: 1, maxLength: 2000 })
const Tag = Type.String({ minLength: 1, maxLength: 64 })

export const Expect = Type.Object(
  {
    outcome: Outcome,
    sources_any: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 20, description: 'document ids or URLs' }))),
    facts: Type.Optional(Nullable(Type.Array(Text, { maxItems: 20, description: 'text (case-insensitive) or "/regex/flags"' }))),
    forbidden: Type.Optional(Nullable(Type.Array(Text, { maxItems: 20 }))),
    action: Type.Optional(
      Nullable(
        Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 64 }), arguments: Type.Record(Type.String(), Type.Unknown()) },
          { additionalProperties: false },
        ),
      ),
    ),
    language: Type.Optional(Nullable(Type.String({ pattern: '^[a-z]{2,3}$', description: "the language the answer is in (the session's language), e.g. de" }))),
  },
  { additionalProperties: false },
)

export const CaseInput = Type.Object(
  {
    bot_id: Type.Optional(Nullable(Uuid)),
    question: Text,
    turns: Type.Optional(Nullable(Type.Array(Text, { maxItems: 10, description: 'earlier visitor turns' }))),
    visitor_claims: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
    expect: Expect,
    tags: Type.Optional(Type.Array(Tag, { maxItems: 20 })),
  },
  { additionalProperties: false },
)
export type CaseInput = Static<typeof CaseInput>

export const CasePatch = Type.Partial(CaseInput, { additionalProperties: false, minProperties: 1 })
export type CasePatch = Static<typeof CasePatch>

const ExpectOut = Type.Object({
  outcome: Outcome,
  sources_any: Nullable(Type.Array(Type.String())),
  facts: Nullable(Type.Array(Type.String())),
  forbidden: Nullable(Type.Array(Type.String())),
  action: Nullable(Type.Object({ name: Type.String(), arguments: Type.Record(Type.String(), Type.Unknown()) })),
  language: Type.Optional(Nullable(Type.String())),
})

export const CaseResponse = Type.Object({
  id: Uuid,
  bot_id: Nullable(Uuid),
  question: Type.String(),
  turns: Nullable(Type.Array(Type.String())),
  visitor_claims: Nullable(Type.Record(Type.String(), Type.Unknown())),
  expect: ExpectOut,
  tags: Type.Array(Type.String()),
  created_at: DateTime,
})
export const CaseListResponse = Type.Object({
  items: Type.Array(CaseResponse),
  /** pass as `cursor` for the next page; null on the last page */
  next_cursor: Nullable(Type.String()),
  /** every case this caller sees with this filter, across all pages */
  total: Type.Integer(),
})
export const CaseListQuery = Type.Object({
  tag: Type.Optional(Tag),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'next_cursor of the previous page' })),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
})
export type CaseListQuery = Static<typeof CaseListQuery>
export const CaseParams = Type.Object({ id: Uuid })
export const SessionParams = Type.Object({ session_id: Uuid })
export const FromSessionBody = Type.Object({ expect: Type.Optional(Expect) }, { additionalProperties: false })

export const ImportBody = Type.Object({ file: Type.String({ format: 'binary' }) })
export const ImportResponse = Type.Object({
  created: Type.Integer(),
  errors: Type.Array(Type.Object({ line: Type.Integer(), message: Type.String() })),
})

export const RunInput = Type.Object(
  {
    bot_id: Type.Optional(Uuid),
    tags: Type.Optional(Type.Array(Tag, { maxItems: 20 })),
    repeat: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, default: 1 })),
  },
  { additionalProperties: false },
)
export type RunInput = Static<typeof RunInput>

const Status = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')])
const Pins = Nullable(
  Type.Object({
    knowledge_version: Type.String(),
    settings_hash: Type.String(),
    chat_model: Type.String(),
    embedding_model: Type.String(),
    prompt_version: Type.String(),
  }),
)
const Totals = Type.Object({ cases: Type.Integer(), passed: Type.Integer(), failed: Type.Integer(), flaky: Type.Integer() })
const Check = Type.Object({ name: Type.String(), passed: Type.Boolean(), detail: Type.String() })
const Repeat = Type.Object({
  passed: Type.Boolean(),
  outcome: Outcome,
  answer: Type.String(),
  cited: Type.Array(Type.String()),
  reached: Nullable(Type.Boolean()),
  checks: Type.Array(Check),
})

export const RunAccepted = Type.Object({ id: Uuid, status: Status })
const RunSummary = {
  id: Uuid,
  status: Status,
  /** stopped at EVAL_MAX_TOKENS: the cases after it were not run */
  partial: Type.Boolean(),
  progress: Type.Number(),
  created_at: DateTime,
  finished_at: Nullable(DateTime),
  pins: Pins,
  totals: Totals,
  /** manual, or auto: started by a knowledge change (evals_auto_run) */
  trigger: Type.Union([Type.Literal('manual'), Type.Literal('auto')]),
}
export const RunListResponse = Type.Object({ items: Type.Array(Type.Object(RunSummary)) })
export const RunResponse = Type.Object({
  ...RunSummary,
  repeat: Type.Integer(),
  error: Nullable(Type.String()),
  results: Type.Array(
    Type.Object({
      case_id: Uuid,
      passed: Type.Boolean(),
      flaky: Type.Boolean(),
      outcome: Outcome,
      answer: Type.String(),
      cited: Type.Array(Type.String()),
      reached: Nullable(Type.Boolean()),
      checks: Type.Array(Check),
      runs: Type.Array(Repeat),
    }),
  ),
})
export const RunParams = Type.Object({ id: Uuid })
export const RunQuery = Type.Object({ format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('junit')])) })
export const DiffQuery = Type.Object({ against: Uuid })
const Ids = Type.Array(Uuid)
export const DiffResponse = Type.Object({ fixed: Ids, broken: Ids, still_passing: Ids, still_failing: Ids, missing: Ids })

export const Settings = Type.Object(
  { evals_auto_run: Type.Boolean({ description: 'a run after the knowledge changes, at most one an hour' }) },
  { additionalProperties: false },
)
export type Settings = Static<typeof Settings>
