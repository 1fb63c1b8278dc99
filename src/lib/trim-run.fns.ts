/**
 * Trims of a run of characters at an end of a string, by a scan. `s.replace(/[.!]+$/, '')` looks linear but
 * is quadratic: the engine tries the run from every start position and fails at each `$` until the last
 * (issue 50, the ReDoS class), so a reply, a crawled page or a visitor's text with a long run stalls the process.
 */

/** `s` without the characters of `set` at its end. */
export function trimEndOf(s: string, set: string): string {
  let end = s.length
  while (end > 0 && set.includes(s[end - 1]!)) end--
  return s.slice(0, end)
}

/** `s` without the characters of `set` at its start and its end. */
export function trimBothOf(s: string, set: string): string {
  let end = s.length
  while (end > 0 && set.includes(s[end - 1]!)) end--
  let start = 0
  while (start < end && set.includes(s[start]!)) start++
  return s.slice(start, end)
}

/** `s` without the characters matched by `test` (one character each) at its end. */
export function trimEndWhere(s: string, test: (ch: string) => boolean): string {
  let end = s.length
  while (end > 0 && test(s[end - 1]!)) end--
  return s.slice(0, end)
}

/**
 * `\s` of JavaScript regular expressions, for one character (UTF-16 unit): tab to carriage return, space, and the
 * Unicode space separators, line and paragraph separators and U+FEFF (the unit test compares all 65,536 with `\s`).
 * By code, not `ch.trim()`: the scans that replaced patterns call it on every character.
 */
export function isSpace(ch: string): boolean {
  const c = ch.charCodeAt(0)
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13)
  if (c < 0xa0) return false
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  )
}

/** `s` without spaces and tabs at the end of each line: `/[ \t]+$/gm` by a scan (that one is quadratic on a run of spaces). */
export function trimLineEnds(s: string): string {
  let out = ''
  let from = 0
  let run = -1
  for (let i = 0; i <= s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 32 || c === 9) {
      if (run < 0) run = i
      continue
    }
    // the line terminators of `$` under the m flag, and the end of the string
    if (run >= 0 && (i === s.length || c === 10 || c === 13 || c === 0x2028 || c === 0x2029)) {
      out += s.slice(from, run)
      from = i
    }
    run = -1
  }
  return out + s.slice(from)
}
