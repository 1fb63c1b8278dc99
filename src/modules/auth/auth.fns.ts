/** The contract's password rule: 8..128 characters with an upper-case letter, a digit and a special character. */
export function passwordProblem(password: string): string | null {
  if (password.length < 8) return 'Password must be at least 8 characters long'
  if (password.length > 128) return 'Password must be at most 128 characters long'
  if (!/[A-Z]/.test(password)) return 'Password must contain an upper-case letter'
  if (!/[0-9]/.test(password)) return 'Password must contain a digit'
  if (!/[^A-Za-z0-9]/.test(password)) return 'Password must contain a special character'
  return null
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase()
