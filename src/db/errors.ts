/** PostgreSQL error codes we translate; matched by code, never by message text. */
export const PG_UNIQUE_VIOLATION = '23505'
export const PG_FOREIGN_KEY_VIOLATION = '23503'

export const pgCode = (err: unknown): string | undefined => (err as { code?: string } | null)?.code

export const isUniqueViolation = (err: unknown, constraint?: string): boolean =>
  pgCode(err) === PG_UNIQUE_VIOLATION && (!constraint || (err as { constraint?: string }).constraint === constraint)
