import type { Diagnostics } from 'recheck'

/** recheck's verdict on a pattern, as stored: the complexity's summary when it is vulnerable. */
export interface Verdict {
  status: 'safe' | 'vulnerable' | 'unknown'
  summary?: string
}
export type Verdicts = Record<string, Verdict>

/**
 * Fixed seed (the fuzz checker is random) and a timeout per pattern: an undecided pattern is `unknown`. The suite
 * gives a new or changed pattern 3 s; scripts/redos-verdicts.ts gives each pattern it stores 60 s. The budget is wall
 * time, so under load a pattern recheck decides in 1 to 18 s on a quiet machine comes out `unknown` at 3 s: 48 of
 * them did when the stored verdicts were first written at a load of about 28 (issue 50), and 13 of those were
 * super-linear. At 60 s all of today's patterns are decided.
 */
export const RECHECK_PARAMS = { timeout: 3000, randomSeed: 50 } as const
export const REFRESH_PARAMS = { timeout: 60_000, randomSeed: 50 } as const

/**
 * The flags recheck is asked about: `d` (match indices) changes no match, and recheck 4.5 refuses it as an unknown
 * flag (`unknown`, `invalid`), which hid five patterns from the check.
 */
export const recheckFlags = (flags: string) => flags.replace('d', '')

export function verdictOf(d: Diagnostics): Verdict {
  if (d.status === 'vulnerable') return { status: 'vulnerable', summary: d.complexity.summary }
  return { status: d.status }
}
