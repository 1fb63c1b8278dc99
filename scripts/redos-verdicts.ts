/**
 * Refreshes test/redos/verdicts.json: recheck's verdict on every regular expression in src/ that it lacks
 * (`npm test` runs test/redos.test.ts, which checks only what is missing here; this writes them down so the suite
 * stays fast). Run: `npx tsx scripts/redos-verdicts.ts` (about 3 minutes from nothing).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkSync } from 'recheck'
import { keyOf, patternsInSrc } from '../test/redos/patterns.js'
import { RECHECK_PARAMS, type Verdicts, verdictOf } from '../test/redos/verdicts.js'

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
  next[key] = stored[key] ?? next[key] ?? verdictOf(checkSync(p.source, p.flags, RECHECK_PARAMS))
}
writeFileSync(file, `${JSON.stringify(Object.fromEntries(Object.entries(next).sort(([a], [b]) => a.localeCompare(b))), null, 1)}\n`)
console.log(`${Object.keys(next).length} patterns, ${Object.values(next).filter((v) => v.status === 'vulnerable').length} vulnerable`)
