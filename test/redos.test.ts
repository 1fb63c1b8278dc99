import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkSync } from 'recheck'
import { describe, expect, it } from 'vitest'
import { type FoundPattern, keyOf, patternsInSrc } from './redos/patterns.js'
import { RECHECK_PARAMS, recheckFlags, type Verdicts, verdictOf } from './redos/verdicts.js'

/**
 * Issue 50, the class: every regular expression in src/ (a literal, or `new RegExp` of a literal string) goes
 * through recheck, and one it calls super-linear fails the suite unless test/redos/allowlist.json lists it with
 * the bound of its input at the call site and why that keeps it under 50 ms. One recheck could not decide fails too,
 * unless test/redos/unknowns.json lists it with why it is safe: an undecided pattern is unchecked, and 13 of the 48
 * that were `unknown` at 3 s turned out super-linear (issue 50). recheck's verdicts are kept in
 * test/redos/verdicts.json (refreshed by `npx tsx scripts/redos-verdicts.ts`, 60 s a pattern) so this runs in
 * seconds: only a pattern missing there is checked here, at most 3 s each. Patterns built at run time (a tenant's,
 * a secret's) are not here: they run on RE2 (lib/linear-regex.ts) or are not patterns at all (secret-mask.fns.ts).
 */

interface Allowed {
  file: string
  pattern: string
  complexity: string
  bound: string
  why: string
  /** false: listed as found, its call site's bound not yet established (reported below, not hidden) */
  reviewed: boolean
}

/** A pattern recheck could not decide even with the refresh script's 60 s, and why it is linear or bounded anyway. */
interface Undecided {
  file: string
  pattern: string
  why: string
}

const here = (name: string) => join(import.meta.dirname, 'redos', name)
const verdicts = JSON.parse(readFileSync(here('verdicts.json'), 'utf8')) as Verdicts
const allowlist = JSON.parse(readFileSync(here('allowlist.json'), 'utf8')) as Allowed[]
const undecided = JSON.parse(readFileSync(here('unknowns.json'), 'utf8')) as Undecided[]

describe('ReDoS check over every regular expression in src/', () => {
  const found = patternsInSrc()

  it('finds the patterns (a parse that found none would pass anything)', () => {
    expect(found.length).toBeGreaterThan(300)
    expect(found.some((p) => p.file === 'src/modules/chat/stages/links.ts')).toBe(true)
  })

  it('passes no super-linear pattern without a documented bound', () => {
    const vulnerable: (FoundPattern & { summary?: string })[] = []
    const unknown: FoundPattern[] = []
    for (const p of found) {
      const key = keyOf(p)
      // a new or changed pattern: recheck decides here (stored by the script for the next run)
      const v = verdicts[key] ?? (verdicts[key] = verdictOf(checkSync(p.source, recheckFlags(p.flags), RECHECK_PARAMS)))
      if (v.status === 'vulnerable') vulnerable.push({ ...p, summary: v.summary })
      if (v.status === 'unknown') unknown.push(p)
    }
    const reviewed = (p: FoundPattern) => undecided.some((u) => u.file === p.file && u.pattern === keyOf(p))
    expect(
      unknown.filter((p) => !reviewed(p)).map((p) => `${p.file}:${p.line} ${keyOf(p)}`),
      'recheck could not decide (3 s here): run `npx tsx scripts/redos-verdicts.ts` (60 s each) to store its verdict; if still unknown, say why it is safe in test/redos/unknowns.json',
    ).toEqual([])
    const staleUndecided = undecided.filter((u) => !unknown.some((p) => p.file === u.file && keyOf(p) === u.pattern)).map((u) => `${u.file} ${u.pattern}`)
    expect(staleUndecided, 'decided or gone: remove from test/redos/unknowns.json').toEqual([])
    for (const u of undecided) expect(u.why, `${u.file} ${u.pattern}`).toBeTruthy()
    const listed = (p: FoundPattern) => allowlist.some((a) => a.file === p.file && a.pattern === keyOf(p))
    const unlisted = vulnerable.filter((p) => !listed(p)).map((p) => `${p.file}:${p.line} ${keyOf(p)} (${p.summary})`)
    expect(unlisted, 'super-linear: rewrite it, or bound its input and list it in test/redos/allowlist.json').toEqual([])
    // an entry whose pattern is gone (rewritten or removed) goes too, so the list says what is still there
    const stale = allowlist.filter((a) => !found.some((p) => p.file === a.file && keyOf(p) === a.pattern)).map((a) => `${a.file} ${a.pattern}`)
    expect(stale, 'no longer in src/: remove from test/redos/allowlist.json').toEqual([])
    for (const a of allowlist) expect(a.bound && a.why, `${a.file} ${a.pattern}`).toBeTruthy()
    const open = allowlist.filter((a) => !a.reviewed)
    if (open.length) console.info(`redos: ${open.length} of ${allowlist.length} listed patterns await a reviewed bound (test/redos/allowlist.json)`)
  }, 120_000)
})
