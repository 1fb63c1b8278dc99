import { RE2JS } from 're2js'

/**
 * A workspace's exclusion globs, compiled for the linear-time engine (RE2, `lib/linear-regex.ts`). Picomatch turned
 * each `*` into a lazy `[^/]*?` for a backtracking engine: `/*a*a*a*a*a*a*a*a*a*a*a*a*b` against a link of 34 `a`s
 * held the process 4.4 s, doubling with each two characters more (issue 50). Here a glob is translated to a regular
 * expression once and every link is tested in time linear in its length.
 *
 * Syntax: `*` any run of characters but `/`; `**` as a whole segment any number of segments (none included); `?`
 * one character but `/`; `[abc]`, `[a-z]`, `[!a]` / `[^a]` a class; `{a,b}` alternatives (nested); `\x` the
 * character x itself. Everything else is itself. A glob matches the whole path.
 */

/** The longest glob accepted (the schema's bound too). */
export const GLOB_MAX_CHARS = 500

export class GlobError extends Error {}

const escapeRe = (c: string) => (/[\\^$.*+?()[\]{}|-]/.test(c) ? `\\${c}` : c)

/** The regular expression source of a glob (anchored). Throws GlobError on an unbalanced brace. */
export function globSource(glob: string): string {
  if (glob.length > GLOB_MAX_CHARS) throw new GlobError(`a pattern is longer than ${GLOB_MAX_CHARS} characters`)
  let out = ''
  let depth = 0
  let i = 0
  const atSegmentStart = (k: number) => k === 0 || glob[k - 1] === '/'
  while (i < glob.length) {
    const c = glob[i]!
    if (c === '\\' && i + 1 < glob.length) {
      out += escapeRe(glob[i + 1]!)
      i += 2
    } else if (c === '*') {
      let j = i
      while (glob[j] === '*') j++
      const segmentEnd = j === glob.length || glob[j] === '/'
      if (j - i >= 2 && atSegmentStart(i) && segmentEnd) {
        // a whole segment of `**`: any number of segments
        if (j === glob.length) {
          // "/x/**": x itself, "x/" and everything under it; "**" alone: anything
          if (out.endsWith('/')) out = `${out.slice(0, -1)}(?:/.*)?`
          else out += '.*'
          i = j
        } else {
          out += '(?:.*/)?'
          i = j + 1
        }
      } else {
        out += '[^/]*'
        i = j
      }
    } else if (c === '?') {
      out += '[^/]'
      i++
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 2)
      if (end < 0) {
        out += '\\['
        i++
        continue
      }
      let body = glob.slice(i + 1, end)
      const negate = body[0] === '!' || body[0] === '^'
      if (negate) body = body.slice(1)
      const cls = [...body].map((ch) => (ch === '-' ? '-' : /[\\\]^[]/.test(ch) ? `\\${ch}` : ch)).join('')
      // a negated class does not match the separator either, as `*` and `?` do not
      out += negate ? `[^/${cls}]` : `[${cls}]`
      i = end + 1
    } else if (c === '{') {
      depth++
      out += '(?:'
      i++
    } else if (c === '}' && depth > 0) {
      depth--
      out += ')'
      i++
    } else if (c === ',' && depth > 0) {
      out += '|'
      i++
    } else {
      out += escapeRe(c)
      i++
    }
  }
  if (depth > 0) throw new GlobError('a pattern has a "{" without its "}"')
  return `^${out}$`
}

/** A glob compiled for the linear-time engine (RE2JS directly: a 500-character glob may translate to more than lib/linear-regex's 1,000). */
export function compileGlob(glob: string): { test(path: string): boolean } {
  const source = globSource(glob)
  let re: RE2JS
  try {
    re = RE2JS.compile(source)
  } catch (err) {
    throw new GlobError(`a pattern cannot be used: ${((err as Error).message ?? '').replace(/^error parsing regexp:\s*/, '').slice(0, 120)}`)
  }
  return { test: (path) => re.matches(path) }
}

/** Why a glob cannot be used, or null. */
export function globProblem(glob: string): string | null {
  try {
    compileGlob(glob)
    return null
  } catch (err) {
    return err instanceof GlobError ? err.message : 'not a usable pattern'
  }
}
