import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'

export const GapSourceSchema = Type.Union([Type.Literal('mode_a'), Type.Literal('mode_b')])
export const GapRunModeSchema = Type.Union([Type.Literal('mode_a'), Type.Literal('mode_b'), Type.Literal('both')])

export const GapItem = Type.Object({
  id: Uuid,
  source: GapSourceSchema,
  label: Type.String(),
  coverage_score: Nullable(Type.Number()),
  classification: Type.Union([Type.Literal('uncovered'), Type.Literal('partial'), Type.Literal('covered')]),
  status: Type.Union([Type.Literal('active'), Type.Literal('dismissed'), Type.Literal('archived'), Type.Literal('closed'), Type.Literal('inactive')]),
  is_new: Type.Boolean(),
  question_count: Type.Integer(),
  signal_weight: Nullable(Type.Number()),
  example_questions: Type.Array(Type.String()),
  linked_gap_id: Nullable(Uuid),
  last_updated: DateTime,
  // additions beyond the contract's fields
  dismiss_reason: Nullable(Type.String()),
  first_seen_at: DateTime,
})

/**
 * Addition: the tenant's newest run and its counts for a progress bar (null while queued; while running, steps
 * done of those known so far, the total growing as the run finds its topics and clusters; complete once done).
 */
export const GapRunStatus = Type.Object({
  id: Uuid,
  mode: GapRunModeSchema,
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
  accepted_at: DateTime,
  started_at: Nullable(DateTime),
  finished_at: Nullable(DateTime),
  progress: Nullable(Type.Object({ done: Type.Integer(), total: Type.Integer() })),
})

export const GapSummary = Type.Object({
  total_active: Type.Integer(),
  uncovered_count: Type.Integer(),
  partial_count: Type.Integer(),
  new_count: Type.Integer(),
  by_source: Type.Object({ mode_a: Type.Integer(), mode_b: Type.Integer() }),
  last_updated: Nullable(DateTime),
  run: Nullable(GapRunStatus),
})

export const GapAnalyzerResponse = Type.Object({
  summary: GapSummary,
  mode_a_items: Type.Array(GapItem),
  mode_b_items: Type.Array(GapItem),
})

/** `{summary}`; the summary's fields are repeated at the top level for clients that read them there. */
export const GapSummaryOnlyResponse = Type.Object({ summary: GapSummary, ...GapSummary.properties })

export const GapListQuery = Type.Object({
  mode_a_status: Type.Optional(
    Type.Union([Type.Literal('active'), Type.Literal('dismissed'), Type.Literal('archived'), Type.Literal('all')], { default: 'active' }),
  ),
  mode_b_status: Type.Optional(
    Type.Union(
      [Type.Literal('active'), Type.Literal('closed'), Type.Literal('dismissed'), Type.Literal('inactive'), Type.Literal('archived'), Type.Literal('all')],
      { default: 'active' },
    ),
  ),
  mode_a_sort: Type.Optional(Type.Union([Type.Literal('coverage_asc'), Type.Literal('newest')], { default: 'coverage_asc' })),
  mode_b_sort: Type.Optional(Type.Union([Type.Literal('signal_desc'), Type.Literal('coverage_asc'), Type.Literal('newest')], { default: 'signal_desc' })),
})

export const RecalculateQuery = Type.Object({ mode: GapRunModeSchema })

export const RecalculateCommandResult = Type.Object({
  mode: GapRunModeSchema,
  status: Type.Union([Type.Literal('accepted'), Type.Literal('in_progress')]),
  accepted_at: DateTime,
  retry_after_seconds: Nullable(Type.Integer()),
  // addition: the run this request started or is waiting for
  run_id: Uuid,
})

export const GapParams = Type.Object({ source: GapSourceSchema, gap_id: Uuid })

export const GapDismissRequest = Type.Object({
  reason: Type.Union([Type.Literal('feature_request'), Type.Literal('not_relevant'), Type.Literal('already_covered'), Type.Literal('other')]),
})

export const GapActionResponse = Type.Object({
  success: Type.Boolean(),
  source: GapSourceSchema,
  gap_id: Uuid,
  status: Type.String(),
})

export const GapDraftResponse = Type.Object({
  source: GapSourceSchema,
  gap_id: Uuid,
  title: Type.String(),
  markdown: Type.String(),
})
