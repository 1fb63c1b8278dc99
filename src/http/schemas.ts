import { Type, type TSchema } from '@sinclair/typebox'

/** Shared schema pieces, so every route spells ids, times and errors the same way. */
export const Uuid = Type.String({ format: 'uuid' })
export const DateTime = Type.String({ format: 'date-time' })
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
export const Email = Type.String({ format: 'email', maxLength: 254 })

export const ErrorBody = Type.Object({
  detail: Type.Union([Type.String(), Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: true })]),
})
export const ValidationErrorBody = Type.Object({
  detail: Type.Array(Type.Object({ loc: Type.Array(Type.Union([Type.String(), Type.Integer()])), msg: Type.String(), type: Type.String() })),
})
export const RateLimitBody = Type.Object({ error: Type.String() })

/** The error responses most routes can give, for the OpenAPI document. */
export const commonErrors = {
  401: ErrorBody,
  422: ValidationErrorBody,
} as const

export const iso = (d: Date | string | null | undefined): string | null => (d == null ? null : (d instanceof Date ? d : new Date(d)).toISOString())
export const isoReq = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString()

export const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('editor'), Type.Literal('agent'), Type.Literal('analyst')], {
  description:
    'owner: everything; admin: members, bots, settings, knowledge, tickets, analytics; editor: knowledge; agent: tickets and conversations; analyst: analytics',
})
/** The bots a member is limited to (ids of `GET /bots`); null: every bot of the workspace. */
export const BotIds = Nullable(Type.Array(Uuid, { maxItems: 200, uniqueItems: true, description: 'the bots (ids) this member is limited to; null: all bots' }))
