import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'

export const MAX_ACTIONS = 100
export const MAX_PARAMETERS = 30
export const MAX_TIMEOUT_MS = 30_000
export const NAME_PATTERN = '^[a-z][a-z0-9_]{0,63}$'

const Name = Type.String({ pattern: NAME_PATTERN, description: 'the tool name the model sees: a-z, 0-9, _ ; starts with a letter' })
const Method = Type.Union([Type.Literal('GET'), Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('PATCH'), Type.Literal('DELETE')])
const Kind = Type.Union([Type.Literal('read'), Type.Literal('write')], { description: 'write: the visitor approves each call first' })
const Source = Type.Union([Type.Literal('model'), Type.Literal('visitor'), Type.Literal('secret'), Type.Literal('constant')], {
  description:
    'model: the model fills it (the only kind in the tool schema); visitor: the named claim of the verified identity token; secret: the value stored under its name in secrets; constant: value',
})
const JsonSchema = Type.Object({}, { additionalProperties: true, description: 'a JSON Schema of the value' })
const Template = Type.String({ maxLength: 4096, description: 'text with {parameter} placeholders' })
const Scalar = Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean()])

export const Parameter = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,63}$' }),
  source: Source,
  schema: JsonSchema,
  claim: Nullable(Type.String({ maxLength: 64 })),
  value: Nullable(Scalar),
  required: Type.Boolean(),
})
const ParameterIn = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,63}$' }),
  source: Source,
  schema: Type.Optional(JsonSchema),
  claim: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  value: Type.Optional(Nullable(Scalar)),
  required: Type.Optional(Type.Boolean()),
})

const Headers = Type.Record(Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$" }), Template, { maxProperties: 30 })
const ResponseFields = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 30 })
const BotIdList = Nullable(Type.Array(Uuid, { minItems: 1, maxItems: 50, uniqueItems: true }))

export const Action = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  method: Method,
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  body_template: Nullable(Type.String()),
  parameters: Type.Array(Parameter),
  kind: Kind,
  bot_ids: Nullable(Type.Array(Uuid)),
  enabled: Type.Boolean(),
  response_fields: Type.Array(Type.String()),
  timeout_ms: Type.Integer(),
  secrets: Type.Record(Type.String(), Type.String(), { description: 'name -> "••••" and the last four characters; values are never shown' }),
  created_at: DateTime,
})
export const ActionList = Type.Object({ items: Type.Array(Action) })

const Fields = {
  description: Type.String({ maxLength: 2000 }),
  method: Method,
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  headers: Headers,
  body_template: Nullable(Type.String({ maxLength: 16384 })),
  parameters: Type.Array(ParameterIn, { maxItems: MAX_PARAMETERS }),
  kind: Kind,
  bot_ids: BotIdList,
  enabled: Type.Boolean(),
  response_fields: ResponseFields,
  timeout_ms: Type.Integer({ minimum: 100, maximum: MAX_TIMEOUT_MS }),
  secrets: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,63}$' }), Type.String({ minLength: 1, maxLength: 4096 }), {
    maxProperties: 20,
    description: 'plain values, write-only; on PATCH only the names given change (an empty string is refused; omit to keep)',
  }),
}

export const ActionCreate = Type.Object({
  name: Name,
  description: Fields.description,
  method: Fields.method,
  url: Fields.url,
  headers: Type.Optional(Fields.headers),
  body_template: Type.Optional(Fields.body_template),
  parameters: Type.Optional(Fields.parameters),
  kind: Type.Optional(Fields.kind),
  bot_ids: Type.Optional(Fields.bot_ids),
  enabled: Type.Optional(Fields.enabled),
  response_fields: Type.Optional(Fields.response_fields),
  timeout_ms: Type.Optional(Fields.timeout_ms),
  secrets: Type.Optional(Fields.secrets),
})
export const ActionUpdate = Type.Partial(ActionCreate, { minProperties: 1 })
export const ActionParams = Type.Object({ id: Uuid })

export const ImportRequest = Type.Object({
  spec: Type.String({ minLength: 2, maxLength: 2_000_000, description: 'an OpenAPI 3.0 or 3.1 document, JSON or YAML' }),
  operations: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: MAX_ACTIONS })),
  base_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
})

export const TestRequest = Type.Object({
  arguments: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  visitor_claims: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
  live: Type.Optional(Type.Boolean({ description: 'send the request (owner and admin); false (default): only build it' })),
})
export const TestResponse = Type.Object({
  request: Type.Object({
    method: Type.String(),
    url: Type.String(),
    headers: Type.Record(Type.String(), Type.String()),
    body: Nullable(Type.String()),
  }),
  response: Nullable(Type.Object({ status: Nullable(Type.Integer()), body: Nullable(Type.String()), latency_ms: Type.Integer() })),
  status: Type.String({ description: 'ok | http_error | timeout | refused | blocked, or dry_run when nothing was sent' }),
  model_view: Nullable(Type.String({ description: 'what the model would be given: the response_fields of the JSON answer, at most 8 KB' })),
})

export const CallStatusSchema = Type.Union(
  [
    Type.Literal('pending'),
    Type.Literal('running'),
    Type.Literal('ok'),
    Type.Literal('http_error'),
    Type.Literal('timeout'),
    Type.Literal('refused'),
    Type.Literal('blocked'),
    Type.Literal('cancelled'),
  ],
  { description: 'pending: a write waiting for the visitor; running: being sent' },
)
export const CallListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,19}$', description: 'next_cursor of the previous page' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
})
export const CallList = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Uuid,
      session_id: Nullable(Uuid),
      status: CallStatusSchema,
      http_status: Nullable(Type.Integer()),
      latency_ms: Nullable(Type.Integer()),
      arguments: Type.Record(Type.String(), Type.Unknown()),
      created_at: DateTime,
    }),
  ),
  next_cursor: Nullable(Type.String()),
})

export const SigningSecret = Type.Object({
  secret: Type.String({ description: 'whsec_...: verifies webhook-signature and X-Visitor-Token (HS256 over the decoded key); shown only here' }),
})
export const SigningSecretStatus = Type.Object({ has_secret: Type.Boolean(), secret_hint: Nullable(Type.String()) })

export const ConfirmRequest = Type.Object({ approve: Type.Boolean() })
export const ConfirmResponse = Type.Object({
  status: CallStatusSchema,
  text: Type.Optional(Type.String({ description: 'what the bot said about the outcome (also in the conversation)' })),
})
