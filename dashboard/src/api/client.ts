import createClient from 'openapi-fetch'
import type { paths } from './schema'

/**
 * The one way the dashboard reaches the service: openapi-fetch typed by `schema.d.ts`, which
 * `npm run gen:api` generates from the service's own OpenAPI document. The session is the httpOnly cookie
 * the service sets at login (same origin), so no token is ever kept in script-readable storage.
 */
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' })

/** A failed call, in words an operator can act on, with field messages from a 422 keyed by field name. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly fields: Record<string, string> = {},
  ) {
    super(message)
  }
}

type Detail = string | { code?: string; message?: string } | { loc?: (string | number)[]; msg?: string; type?: string }[]

const STATUS_WORDS: Record<number, string> = {
  400: 'The request was refused.',
  401: 'Your session has ended. Please log in again.',
  403: 'You are not allowed to do this.',
  404: 'Not found. It may have been deleted.',
  409: 'This conflicts with something that already exists.',
  413: 'The file is too large.',
  429: 'Too many requests. Please wait a moment and try again.',
  500: 'The service failed. Please try again.',
  502: 'The service is unreachable. Please try again.',
  503: 'The service is temporarily unavailable.',
}

/** Turns an error body in any of the service's envelopes into an ApiError. */
export function toApiError(status: number, body: unknown): ApiError {
  const b = (body ?? {}) as { detail?: Detail; error?: string; message?: string }
  const d = b.detail
  if (Array.isArray(d)) {
    const fields: Record<string, string> = {}
    for (const e of d) {
      const loc = (e.loc ?? []).filter((p) => p !== 'body' && p !== 'query' && p !== 'path')
      const key = loc.join('.') || '_'
      if (!fields[key]) fields[key] = e.msg ?? 'Invalid value'
    }
    const first = Object.entries(fields)[0]
    const summary = first ? (first[0] === '_' ? first[1] : `${first[0].replace(/_/g, ' ')}: ${first[1]}`) : 'Invalid input'
    return new ApiError(status, summary, 'validation_error', fields)
  }
  if (typeof d === 'string') return new ApiError(status, d)
  if (d && typeof d === 'object' && 'message' in d && d.message) return new ApiError(status, d.message, d.code ?? null)
  if (typeof b.error === 'string') return new ApiError(status, b.error)
  return new ApiError(status, STATUS_WORDS[status] ?? `The service answered ${status}.`)
}

/**
 * Unwraps an openapi-fetch result: the data, or an ApiError thrown. Network failures become a readable
 * error too.
 */
export async function call<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response }
  try {
    r = await p
  } catch {
    throw new ApiError(0, 'Cannot reach the service. Check your connection and try again.')
  }
  if (!r.response.ok) throw toApiError(r.response.status, r.error)
  return r.data as T
}

/** The message to show for any thrown value. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message
  if (err instanceof Error) return err.message
  return 'Something went wrong.'
}
