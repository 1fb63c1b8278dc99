/**
 * A member's display name as visitors see it: no control, format (bidi overrides such as U+202E, zero-width
 * characters, soft hyphens) or line-separator characters, which could reverse or hide what the name says, and
 * whitespace runs as one space. Issue 50, finding 13.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu

export function cleanDisplayName(raw: string): string {
  return raw.replace(/\s+/g, ' ').replace(INVISIBLE, '').replace(/ {2,}/g, ' ').trim()
}

/** Two names a visitor would take for one: case, width and compatibility forms aside. */
export const sameName = (a: string, b: string) => cleanDisplayName(a).normalize('NFKC').toLowerCase() === cleanDisplayName(b).normalize('NFKC').toLowerCase()
