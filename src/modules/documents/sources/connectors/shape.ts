import type { Static, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ConnectorError } from './connector.types.js'

/** A vendor's reply checked against the documented shape before anything reads it (fields beyond it are ignored). */
export function checked<T extends TSchema>(schema: T, body: unknown, what: string): Static<T> {
  if (Value.Check(schema, body)) return body
  const first = Value.Errors(schema, body).First()
  throw new ConnectorError('malformed', `${what} is not in the documented shape${first ? ` (${first.path || '/'}: ${first.message})` : ''}`)
}
