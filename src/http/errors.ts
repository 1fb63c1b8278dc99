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

/** "'a', 'b' or 'c'": the allowed values as a 422 names them (pydantic's wording). */
export function allowedList(values: unknown[]): string {
  const q = values.map((v) => (v === null ? 'null' : typeof v === 'string' ? `'${v}'` : String(v)))
  return q.length <= 1 ? (q[0] ?? '') : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`
}

/** What a format error says a valid value looks like; the value itself is never repeated. */
const FORMAT_HINT: Record<string, string> = {
  uuid: 'a valid UUID',
  email: 'a valid e-mail address (name@example.com)',
  'date-time': 'a valid date-time in ISO 8601 (2026-01-31T12:00:00Z)',
  date: 'a valid date (2026-01-31)',
  uri: 'a valid URL (https://example.com/page)',
  url: 'a valid URL (https://example.com/page)',
}

/**
 * A union of literals fails in Ajv as one `const` error per branch plus an `anyOf` error ("must be equal
 * to constant" three times). A client needs one error naming the allowed values, so the branch errors at
 * the anyOf's own path are folded into it.
 */
function foldUnions(errors: AjvError[]): AjvError[] {
  const unions = new Map<string, unknown[]>()
  for (const e of errors) if (e.keyword === 'anyOf') unions.set(e.instancePath, [])
  if (unions.size === 0) return errors
  const out: AjvError[] = []
  for (const e of errors) {
    const allowed = unions.get(e.instancePath)
    if (allowed && e.keyword !== 'anyOf') {
      if (e.keyword === 'const') allowed.push(e.params.allowedValue)
      else if (e.keyword === 'enum') allowed.push(...((e.params.allowedValues as unknown[]) ?? []))
      else if (e.keyword === 'type' && e.params.type === 'null') allowed.push(null)
      else out.push(e)
      continue
    }
    out.push(e)
  }
  const folded = new Set<string>()
  return out.flatMap((e) => {
    if (e.keyword !== 'anyOf') return [e]
    // a nullable union nests one anyOf in another at the same path: one error for both
    if (folded.has(e.instancePath)) return []
    folded.add(e.instancePath)
    const allowed = unions.get(e.instancePath)!
    // a union of shapes rather than of values: its branch errors (kept above) say more than "anyOf"
    if (allowed.length === 0 || allowed.every((v) => v === null)) return out.some((o) => o !== e && o.instancePath.startsWith(e.instancePath)) ? [] : [e]
    return [{ ...e, keyword: 'enum', params: { allowedValues: allowed } }]
  })
}

/** Patterns said in words (a person reads the 422, not a regular expression); others are named as they are. */
const PATTERN_WORDS: Record<string, string> = {
  '^[a-z0-9-]{1,32}$': 'Use only lower-case letters, digits and hyphens, at most 32 characters, e.g. "refund-time" (no spaces or capitals)',
}

export function ajvToValidationItems(errors: AjvError[], context: string | undefined): ValidationItem[] {
  const root = CONTEXT_LOC[context ?? 'body'] ?? context ?? 'body'
  return foldUnions(errors).map((e) => {
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
        return {
          loc,
          msg: `Input should be ${FORMAT_HINT[String(p.format)] ?? `a valid ${p.format}`}`,
          type: p.format === 'uuid' ? 'uuid_parsing' : `${p.format}_format`,
        }
      case 'type':
        return { loc, msg: `Input should be a valid ${p.type}`, type: `${p.type}_type` }
      case 'enum':
        return { loc, msg: `Input should be ${allowedList((p.allowedValues as unknown[]) ?? [])}`, type: 'enum' }
      case 'const':
        return { loc, msg: `Input should be ${allowedList([p.allowedValue])}`, type: 'literal_error' }
      case 'anyOf':
        return { loc, msg: 'Input does not match any of the allowed forms', type: 'union' }
      case 'additionalProperties':
        return { loc: [...loc, String(p.additionalProperty)], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }
      case 'pattern':
        return {
          loc,
          msg: PATTERN_WORDS[String(p.pattern)] ?? `String should match pattern '${p.pattern}'`,
          type: 'string_pattern_mismatch',
        }
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
      // Framework and plugin messages quote the request (the content type, the path...): a fixed text instead.
      return reply.code(err.statusCode).send({ detail: transportMessage(err.code, err.statusCode) })
    }
    // Not under `err`: pino's error serializer would add a stack.
    req.log.error({ error: describeError(err) }, 'unhandled error')
    return reply.code(500).send({ detail: 'Internal server error' })
  })

  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ detail: 'Not Found' }))
}

/**
 * Fixed texts for the 4xx errors that Fastify, Node's HTTP parser and plugins raise. Their own messages
 * quote the request (path, content type, header), so none of them is ever passed on.
 */
const TRANSPORT_MESSAGES: Record<string, string> = {
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter is too long (at most 100 characters)',
  FST_ERR_BAD_URL: 'The URL is not validly encoded',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large (at most 1 MiB; files go to POST /documents as multipart/form-data)',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported media type: send the body as application/json (file uploads as multipart/form-data)',
  FST_ERR_CTP_INVALID_TYPE: 'The Content-Type header is not valid',
  FST_ERR_CTP_EMPTY_TYPE: 'The Content-Type header is empty',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the length of the body',
  FST_ERR_CTP_INVALID_CHARSET: 'Unsupported charset: send the body as UTF-8',
  FST_ERR_ASYNC_CONSTRAINT: 'The request could not be routed',
  HPE_HEADER_OVERFLOW: 'Request headers are too large (at most 16 KiB in all)',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request took too long to arrive',
}

const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  404: 'Not Found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  408: 'The request took too long to arrive',
  413: 'Request body is too large',
  414: 'The request URL is too long',
  415: 'Unsupported media type',
  431: 'Request headers are too large',
}

export function transportMessage(code: string | undefined, status: number): string {
  return (code && TRANSPORT_MESSAGES[code]) || STATUS_MESSAGES[status] || 'The request could not be processed'
}

/**
 * Errors Fastify raises before any route runs (a path parameter over maxParamLength, a malformed
 * percent-encoding): the contract's `{detail}` instead of Fastify's `{error, code, message: <the path>}`.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 400
  reply.header('X-Request-Id', req.id)
  req.log.info({ method: req.method, status, code: err.code, ip: req.ip }, 'request refused before routing')
  void reply.code(status).send({ detail: status >= 500 ? 'Internal server error' : transportMessage(err.code, status) })
}

/**
 * Errors of Node's HTTP parser (headers over the size limit, a malformed request line, a timeout) never
 * reach Fastify's handlers; this writes the contract's envelope on the raw socket and closes it.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: import('node:stream').Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_URI_TOO_LONG' ? 414 : 400
  const body = JSON.stringify({ detail: transportMessage(err.code, status) })
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 414: 'URI Too Long', 431: 'Request Header Fields Too Large' }

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
