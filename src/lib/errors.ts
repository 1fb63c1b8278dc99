/**
 * The one error vocabulary of the service. Services throw these; the HTTP error handler maps them to the
 * contract's envelopes. `code` is stable and machine-readable; when `coded` is set the body carries
 * `{detail: {code, message, ...extra}}` instead of `{detail: message}`.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly options: { coded?: boolean; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message)
    this.name = 'AppError'
  }
}

export const badRequest = (message: string, code = 'bad_request') => new AppError(400, code, message)
export const unauthorized = (message = 'Not authenticated') => new AppError(401, 'unauthorized', message)
export const forbidden = (message: string, code = 'forbidden') => new AppError(403, code, message)
export const notFound = (message = 'Not found') => new AppError(404, 'not_found', message)
export const conflict = (message: string, code = 'conflict') => new AppError(409, code, message)
export const unavailable = (message: string, code = 'unavailable') => new AppError(503, code, message)

/**
 * A 422 in FastAPI's HTTPValidationError shape, for rules that a JSON schema cannot express
 * (password strength, host names...).
 */
export class ValidationError extends AppError {
  constructor(
    readonly loc: (string | number)[],
    msg: string,
    readonly type = 'value_error',
  ) {
    super(422, 'validation_error', msg)
  }
}
