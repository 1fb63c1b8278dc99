import type { Diagnostics } from 'recheck'

/** recheck's verdict on a pattern, as stored: the complexity's summary when it is vulnerable. */
export interface Verdict {
  status: 'safe' | 'vulnerable' | 'unknown'
  summary?: string
}
export type Verdicts = Record<string, Verdict>

/** Fixed seed (the fuzz checker is random) and a timeout per pattern: an undecided pattern is `unknown`. */
export const RECHECK_PARAMS = { timeout: 3000, randomSeed: 50 } as const

export function verdictOf(d: Diagnostics): Verdict {
  if (d.status === 'vulnerable') return { status: 'vulnerable', summary: d.complexity.summary }
  return { status: d.status }
}
