import { Type, type TLiteral } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'
import { EVENT_TYPES } from '../shared/events.port.js'

export const MAX_ENDPOINTS = 20
export const MAX_BOT_IDS = 50

type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> }
export const EventName = Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)) as unknown as Literals<typeof EVENT_TYPES>)
const Events = Type.Array(EventName, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true })
const Url = Type.String({ minLength: 1, maxLength: 2048 })
const Description = Type.String({ maxLength: 500 })
const BotIds = Type.Array(Uuid, { minItems: 1, maxItems: MAX_BOT_IDS, uniqueItems: true })
export const EndpointKind = Type.Union([Type.Literal('standard'), Type.Literal('slack')])
export const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')])

export const Endpoint = Type.Object({
  id: Uuid,
  url: Type.String(),
  description: Type.String(),
  events: Type.Array(EventName),
  bot_ids: Nullable(Type.Array(Uuid)),
  enabled: Type.Boolean(),
  kind: EndpointKind,
  disabled_reason: Nullable(Type.String()),
  created_at: DateTime,
})
export const EndpointList = Type.Object({ items: Type.Array(Endpoint) })
export const EndpointCreated = Type.Composite([Endpoint, Type.Object({ secret: Type.String({ description: 'whsec_...; shown only now' }) })])

export const EndpointCreate = Type.Object({
  url: Url,
  events: Events,
  description: Type.Optional(Description),
  bot_ids: Type.Optional(Nullable(BotIds)),
  kind: Type.Optional(EndpointKind),
})
export const EndpointUpdate = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    bot_ids: Type.Optional(Nullable(BotIds)),
    enabled: Type.Optional(Type.Boolean()),
  },
  { minProperties: 1 },
)
export const EndpointParams = Type.Object({ id: Uuid })
export const DeliveryParams = Type.Object({ id: Uuid })

export const SecretResponse = Type.Object({ secret: Type.String() })
export const TestResponse = Type.Object({ delivery_id: Uuid })

export const DeliveryListQuery = Type.Object({
  status: Type.Optional(DeliveryStatus),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,19}$', description: 'next_cursor of the previous page' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
})
export const Delivery = Type.Object({
  id: Uuid,
  event_id: Uuid,
  type: EventName,
  status: DeliveryStatus,
  attempts: Type.Integer(),
  last_status_code: Nullable(Type.Integer()),
  last_latency_ms: Nullable(Type.Integer()),
  next_attempt_at: Nullable(DateTime),
  created_at: DateTime,
})
export const DeliveryList = Type.Object({ items: Type.Array(Delivery), next_cursor: Nullable(Type.String()) })

export const AttemptList = Type.Object({
  items: Type.Array(
    Type.Object({
      attempted_at: DateTime,
      status_code: Nullable(Type.Integer()),
      latency_ms: Type.Integer(),
      response_excerpt: Nullable(Type.String()),
      error: Nullable(Type.String()),
      next_attempt_at: Nullable(DateTime),
    }),
  ),
})

export const ResendAccepted = Type.Object({ delivery_id: Uuid })
export const ResendFailedRequest = Type.Object({ since: DateTime })
export const ResendFailedResponse = Type.Object({ resent: Type.Integer() })
