import { RE2JS } from 're2js'

/**
 * Regular expressions written by a tenant (evaluation facts, action parameter `pattern`s) run here, on RE2JS:
 * matching is linear in the text, so no pattern can stall the process that serves every workspace. What RE2
 * cannot run in linear time (backreferences, lookaround) does not compile: the tenant hears it when saving.
 */

/** The longest pattern accepted. */
export const PATTERN_MAX_CHARS = 1000
/** The longest text a pattern is run over; a longer one fails the check rather than running long. */
export const TEXT_MAX_CHARS = 256 * 1024

export class PatternError extends Error {}

export interface LinearRegex {
  test(text: string): boolean
}

const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL }

/** Why RE2 refused a pattern, without echoing the pattern back at length. */
function reason(err: unknown): string {
  const m = (err as Error).message ?? ''
  if (/\\[1-9]|backreference|invalid escape sequence: `\\[1-9k]/i.test(m)) return 'backreferences are not supported'
  if (/\(\?<?[=!]/.test(m)) return 'lookahead and lookbehind are not supported'
  if (/repeat count|repetition/i.test(m)) return 'a repetition is too large (at most 1000)'
  if (/too large|too big|memory/i.test(m)) return 'the pattern is too complex'
  return (
    m
      .replace(/^error parsing regexp:\s*/, '')
      .replace(/`[^`]*`/g, '')
      .replace(/[:\s]+$/, '')
      .slice(0, 120) || 'it does not compile'
  )
}

/**
 * Compiles `source` with JavaScript flags (`i`, `m`, `s`; `g`, `u`, `y` change nothing for a test) on the
 * linear-time engine. Throws PatternError with a short reason when it cannot be run so.
 */
export function compileLinear(source: string, flags = ''): LinearRegex {
  if (source.length > PATTERN_MAX_CHARS) throw new PatternError(`the pattern is longer than ${PATTERN_MAX_CHARS} characters`)
  let bits = 0
  for (const f of flags) {
    if (FLAG_BITS[f] !== undefined) bits |= FLAG_BITS[f]
    else if (!'guyd'.includes(f)) throw new PatternError(`unknown flag ${f}`)
  }
  let re: RE2JS
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(source), bits)
  } catch (err) {
    throw new PatternError(`not usable as a linear-time regular expression: ${reason(err)}`)
  }
  return {
    test(text: string) {
      if (text.length > TEXT_MAX_CHARS) throw new PatternError(`the text is longer than ${TEXT_MAX_CHARS} characters`)
      return re.test(text)
    },
  }
}

/** Why a pattern cannot be used, or null. */
export function patternProblem(source: string, flags = ''): string | null {
  try {
    compileLinear(source, flags)
    return null
  } catch (err) {
    return err instanceof PatternError ? err.message : 'not a usable regular expression'
  }
}

/**
 * ajv's `code.regExp`: JSON Schema `pattern` and `patternProperties` on the same engine. A pattern RE2 refuses
 * makes the schema fail to compile (the save is a 422 naming it); a text too long for it does not match.
 */
export const ajvRegExp = Object.assign(
  (pattern: string, u: string) => {
    const re = compileLinear(pattern)
    return {
      // ajv keys its compiled patterns by this: each pattern its own
      toString: () => `/${pattern}/${u}`,
      test: (s: string) => {
        try {
          return re.test(s)
        } catch {
          return false
        }
      },
    }
  },
  { code: 'linearRegExp' },
)
