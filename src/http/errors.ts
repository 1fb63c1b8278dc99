import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, ValidationError } from '../lib/errors.js'

/** One item of FastAPI's HTTPValidationError, the 422 body every client of the interface expects. */
export interface ValidationItem {
  loc: (string | number)[]
  msg: string
  type: string
}

const CONTEXT_LOC: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' }

interface AjvError {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
}

export function ajvToValidationItems(errors: AjvError[], context: string | undefined): ValidationItem[] {
  const root = CONTEXT_LOC[context ?? 'body'] ?? context ?? 'body'
  return errors.map((e) => {
    const path = e.instancePath
      .split('/')
      .filter(Boolean)
      .map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')))
    const loc: (string | number)[] = [root, ...path]
    const p = e.params
    switch (e.keyword) {
      case 'required':
        return { loc: [...loc, String(p.missingProperty)], msg: 'Field required', type: 'missing' }
      case 'maxLength':
        return { loc, msg: `String should have at most ${p.limit} characters`, type: 'string_too_long' }
      case 'minLength':
        return { loc, msg: `String should have at least ${p.limit} characters`, type: 'string_too_short' }
      case 'maxItems':
        return { loc, msg: `List should have at most ${p.limit} items`, type: 'too_long' }
      case 'minItems':
        return { loc, msg: `List should have at least ${p.limit} items`, type: 'too_short' }
      case 'maximum':
        return { loc, msg: `Input should be less than or equal to ${p.limit}`, type: 'less_than_equal' }
      case 'minimum':
        return { loc, msg: `Input should be greater than or equal to ${p.limit}`, type: 'greater_than_equal' }
      case 'format':
        return p.format === 'uuid'
          ? { loc, msg: 'Input should be a valid UUID', type: 'uuid_parsing' }
          : { loc, msg: `Input should be a valid ${p.format}`, type: `${p.format}_format` }
      case 'type':
        return { loc, msg: `Input should be a valid ${p.type}`, type: `${p.type}_type` }
      case 'enum':
      case 'const':
      case 'anyOf':
        return { loc, msg: e.message ? `Input ${e.message}` : 'Input is not one of the allowed values', type: 'enum' }
      case 'additionalProperties':
        return { loc: [...loc, String(p.additionalProperty)], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }
      case 'pattern':
        return { loc, msg: `String should match pattern '${p.pattern}'`, type: 'string_pattern_mismatch' }
      default:
        return { loc, msg: e.message ?? 'Invalid input', type: e.keyword }
    }
  })
}

export const validationBody = (items: ValidationItem[]) => ({ detail: items })

/**
 * Maps every error to the contract's envelopes. Only AppError messages and framework 4xx messages reach a
 * client; anything else is a 500 with a fixed text, logged without stack, SQL or values.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError & { validationContext?: string }, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ValidationError) {
      return reply.code(422).send(validationBody([{ loc: err.loc, msg: err.message, type: err.type }]))
    }
    if (err instanceof AppError) {
      if (err.options.headers) reply.headers(err.options.headers)
      const detail = err.options.coded ? { code: err.code, message: err.message, ...err.options.extra } : err.message
      return reply.code(err.status).send({ detail })
    }
    if (err.validation) {
      return reply.code(422).send(validationBody(ajvToValidationItems(err.validation as AjvError[], err.validationContext)))
    }
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err instanceof SyntaxError) {
      return reply.code(422).send(validationBody([{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }]))
    }
    if (err.statusCode === 429) {
      // @fastify/rate-limit throws what errorResponseBuilder returned; Retry-After is already on the reply.
      return reply.code(429).send({ error: err.message })
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send({ detail: err.message })
    }
    // Not under `err`: pino's error serializer would add a stack.
    req.log.error({ error: describeError(err) }, 'unhandled error')
    return reply.code(500).send({ detail: 'Internal server error' })
  })

  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ detail: 'Not Found' }))
}

/** What may be logged of an unexpected error: its kind, code and a message cut short; never a stack. */
export function describeError(err: unknown): Record<string, unknown> {
  const e = err as { name?: string; code?: string; message?: string; constraint?: string; table?: string }
  const isDbError = typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)
  return {
    type: e.name,
    code: e.code,
    // Database messages can quote row values (an e-mail in a unique violation), so only name the constraint.
    message: isDbError ? `database error ${e.code}` : e.message?.slice(0, 300),
    constraint: e.constraint,
    table: e.table,
  }
}
