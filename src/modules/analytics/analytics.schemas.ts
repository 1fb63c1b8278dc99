import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'

/** A calendar date; the service checks it is a real one and the range's bounds (422 naming the field). */
const DateParam = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10, description: 'YYYY-MM-DD, a local day in `tz`' })
const TzParam = Type.String({ minLength: 1, maxLength: 64, default: 'UTC', description: 'IANA time zone of the days (default UTC)' })
const Channel = Type.Union([Type.Literal('api'), Type.Literal('widget'), Type.Literal('email')])

export const RangeQuery = Type.Object({
  from: DateParam,
  to: DateParam,
  tz: TzParam,
  bot_id: Type.Optional(Uuid),
  // addition beyond the contract: one channel only
  channel: Type.Optional(Channel),
})

export const METRICS = [
  'conversations',
  'questions',
  'tokens',
  'share_handed_off',
  'share_resolved_confirmed',
  'share_resolved_assumed',
  'share_unresolved',
  'share_pending',
  'first_response_s_p50',
  'first_response_s_p90',
  'resolve_s_p50',
  'resolve_s_p90',
  'feedback_bot_up',
  'feedback_bot_down',
  'feedback_operator_up',
  'feedback_operator_down',
  'feedback_bot_positive_share',
  'feedback_operator_positive_share',
  'model_latency_ms_p50',
  'model_latency_ms_p95',
] as const
export type Metric = (typeof METRICS)[number]

export const TimeseriesQuery = Type.Object({
  metric: Type.Union(METRICS.map((m) => Type.Literal(m))),
  from: DateParam,
  to: DateParam,
  tz: TzParam,
  bot_id: Type.Optional(Uuid),
  channel: Type.Optional(Channel),
})

const Count = Type.Object({ count: Type.Integer(), share: Type.Number() })
const P5090 = Type.Object({ p50: Nullable(Type.Number()), p90: Nullable(Type.Number()) })
const UpDown = Type.Object({ up: Type.Integer(), down: Type.Integer() })

export const SummaryResponse = Type.Object({
  conversations: Type.Integer(),
  questions: Type.Integer(),
  outcomes: Type.Object({
    handed_off: Count,
    resolved_confirmed: Count,
    resolved_assumed: Count,
    unresolved: Count,
    pending: Count,
  }),
  first_response_s: P5090,
  resolve_s: P5090,
  feedback: Type.Object({ bot: UpDown, operator: UpDown }),
  tokens: Type.Number(),
  model_latency_ms: Type.Object({ p50: Nullable(Type.Number()), p95: Nullable(Type.Number()) }),
  /** hand-off to the first time a person had the conversation, seconds (live conversation) */
  queue_wait_s: P5090,
  /** hand-offs the visitor left (quiet 30 min, or closed) before any human reply */
  abandoned_in_queue: Type.Integer(),
  /** operator assist: suggested replies offered, used (edited or not), used unedited; summaries written */
  assist: Type.Object({ suggestions: Type.Integer(), used: Type.Integer(), used_unedited: Type.Integer(), summaries: Type.Integer() }),
})

/** GET /analytics/agents (#39, an addition beyond the contract): the team's hand-offs per member. */
export const AgentsResponse = Type.Object({
  items: Type.Array(
    Type.Object({
      user_id: Uuid,
      /** the member's display name, else their e-mail; null when the account is gone */
      name: Nullable(Type.String()),
      /** hand-offs of the range assigned to the member */
      conversations: Type.Integer(),
      resolved: Type.Integer(),
      /** from the hand-off to the first person's reply, seconds */
      first_reply_s: P5090,
      /** from the hand-off to the resolution, seconds */
      resolve_s: P5090,
    }),
  ),
})

export const TimeseriesResponse = Type.Object({
  metric: Type.String(),
  points: Type.Array(Type.Object({ date: Type.String(), value: Nullable(Type.Number()) })),
})

export const UnansweredQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }),
  bot_id: Type.Optional(Uuid),
})

export const UnansweredResponse = Type.Object({
  items: Type.Array(
    Type.Object({
      gap_id: Uuid,
      source: Type.String(),
      label: Type.String(),
      classification: Type.String(),
      question_count: Type.Integer(),
      last_question_at: Nullable(DateTime),
      examples: Type.Array(Type.Object({ question: Type.String(), session_id: Nullable(Uuid) })),
    }),
  ),
})

// --- exports ----------------------------------------------------------------------------------------------

export const ExportKindSchema = Type.Union([Type.Literal('conversations'), Type.Literal('messages'), Type.Literal('tickets'), Type.Literal('questions')])
export const ExportFormatSchema = Type.Union([Type.Literal('csv'), Type.Literal('jsonl')])

export const ExportRequest = Type.Object(
  {
    kind: ExportKindSchema,
    format: ExportFormatSchema,
    from: DateParam,
    to: DateParam,
    bot_ids: Type.Optional(Type.Array(Uuid, { maxItems: 100, uniqueItems: true })),
    // addition beyond the contract: the zone of the days (default UTC)
    tz: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
)

export const ExportParams = Type.Object({ id: Uuid })

export const ExportAccepted = Type.Object({ id: Uuid, status: Type.String() })

export const ExportStatusResponse = Type.Object({
  id: Uuid,
  kind: ExportKindSchema,
  format: ExportFormatSchema,
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
  /** 0..1 */
  progress: Type.Number(),
  rows: Type.Integer(),
  download_url: Nullable(Type.String()),
  expires_at: Nullable(DateTime),
  // additions beyond the contract
  from: Type.String(),
  to: Type.String(),
  created_at: DateTime,
  expired: Type.Boolean(),
})

export const ExportListResponse = Type.Object({ items: Type.Array(ExportStatusResponse) })
