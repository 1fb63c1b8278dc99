const isTokenChar = (c: string | undefined) =>
  c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '_' || c === '-')
/** the end of the run of `[A-Za-z0-9_-]` that starts at `i` */
const tokenRunEnd = (s: string, i: number) => {
  while (isTokenChar(s[i])) i++
  return i
}

/**
 * JWTs: the matches of `/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*\/g` as [start, end), by a scan.
 * The pattern read the whole run of token characters from every `eyJ` in it (1 s on 50,000 characters of
 * `eyJ0000000-`, issue 50); what follows a run is the same for every start in it, so each run is read once.
 */
export function jwtSpans(s: string): Array<[number, number]> {
  const out: Array<[number, number]> = []
  let runEnd = -1
  for (let i = s.indexOf('eyJ'); i >= 0; i = s.indexOf('eyJ', i + 1)) {
    // `\b`: not after a letter, digit or `_` (a `-` inside a run is a boundary)
    const before = s[i - 1]
    if (before !== undefined && before !== '-' && isTokenChar(before)) continue
    if (i >= runEnd) runEnd = tokenRunEnd(s, i + 3)
    const b = runEnd
    let end = -1
    if (b - i - 3 >= 8 && s[b] === '.' && s.startsWith('eyJ', b + 1)) {
      const b2 = tokenRunEnd(s, b + 4)
      if (b2 - b - 4 >= 8 && s[b2] === '.') end = tokenRunEnd(s, b2 + 1)
    }
    if (end < 0) {
      // a later start in this run is shorter and meets the same rest: none matches
      i = b - 1
      continue
    }
    out.push([i, end])
    i = end - 1
  }
  return out
}
