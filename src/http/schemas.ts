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
