/**
 * Refreshes test/redos/verdicts.json: recheck's verdict, with 60 s per pattern (REFRESH_PARAMS), on every regular
 * expression in src/ that it lacks or holds as `unknown` (`npm test` runs test/redos.test.ts, which checks only what
 * is missing here, with 3 s each; this writes them down so the suite stays fast and its verdicts do not depend on the
 * machine's load). A pattern still `unknown` after this needs an entry in test/redos/unknowns.json.
 * Run: `npx tsx scripts/redos-verdicts.ts` (about 8 minutes from nothing on 2 cores, most of it the patterns
 * recheck takes 3 to 18 s to decide).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkSync } from 'recheck'
import { keyOf, patternsInSrc } from '../test/redos/patterns.js'
import { REFRESH_PARAMS, recheckFlags, type Verdicts, verdictOf } from '../test/redos/verdicts.js'

const file = join(import.meta.dirname, '..', 'test', 'redos', 'verdicts.json')
let stored: Verdicts = {}
try {
  stored = JSON.parse(readFileSync(file, 'utf8')) as Verdicts
} catch {
  stored = {}
}
const next: Verdicts = {}
for (const p of patternsInSrc()) {
  const key = keyOf(p)
  if (next[key]) continue
  const known = stored[key]
  next[key] = known && known.status !== 'unknown' ? known : verdictOf(checkSync(p.source, recheckFlags(p.flags), REFRESH_PARAMS))
  if (!known || known.status === 'unknown') console.log(`${p.file}:${p.line} ${next[key].status} ${next[key].summary ?? ''}`)
}
writeFileSync(file, `${JSON.stringify(Object.fromEntries(Object.entries(next).sort(([a], [b]) => a.localeCompare(b))), null, 1)}\n`)
const count = (s: string) => Object.values(next).filter((v) => v.status === s).length
console.log(`${Object.keys(next).length} patterns: ${count('vulnerable')} vulnerable, ${count('unknown')} unknown`)
