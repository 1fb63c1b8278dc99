import { isSpace } from './trim-run.fns.js'
import { isTerminator, nextFinder } from './markup-scan.fns.js'

/**
 * Markup of uploaded documents read by scans in the parse worker (issue 50, the ReDoS class): the patterns each
 * function replaces are in its comment, unit tests compare them on generated text. The worker's deadline ends a
 * worker, not the process, but these were seconds to minutes on a few KB: a deadline is a second line, not the bound.
 */

/**
 * `/^title\s*=\s*["']?(.*?)["']?\s*$/m.exec(s)?.[1] ?? null`: a TOML front matter's title as the pattern captured
 * it (its quotes and trailing blanks left out). The pattern was quadratic on a long line (`title=` and blanks before
 * no end): the lazy capture tried every length, and each try read the blanks to their end (24.5 s on 64 KB).
 */
export function tomlTitleOf(s: string): string | null {
  const n = s.length
  // each line start (`^` under the m flag: after any line terminator)
  for (let start = 0; start <= n; ) {
    if (s.startsWith('title', start)) {
      let k = start + 5
      // `\s` takes line breaks too: `title` and `=` may be lines apart, and so may `=` and the value
      while (k < n && isSpace(s[k]!)) k++
      if (s[k] === '=') {
        k++
        while (k < n && isSpace(s[k]!)) k++
        if (s[k] === '"' || s[k] === "'") k++
        let e = k
        while (e < n && !isTerminator(s[e])) e++
        while (e > k && isSpace(s[e - 1]!)) e--
        if (e > k && (s[e - 1] === '"' || s[e - 1] === "'")) e--
        return s.slice(k, e)
      }
    }
    let j = start
    while (j < n && !isTerminator(s[j])) j++
    start = j + 1
  }
  return null
}

// by character code (NaN past the end is none of them)
const isUpperAscii = (c: number) => c >= 65 && c <= 90
const isLetterAscii = (c: number) => isUpperAscii(c) || (c >= 97 && c <= 122)
const isAlnumAscii = (c: number) => isLetterAscii(c) || (c >= 48 && c <= 57)
/** `[\w.]` */
const isNameChar = (c: number) => isAlnumAscii(c) || c === 95 || c === 46

/**
 * `s.replace(/<\/?[A-Z][\w.]*(?:\s[^>]*)?\/?>/g, '')`: JSX tags (`<Note>`, `</Tabs.Item>`, `<Card title="x" />`) out
 * of a line of MDX. The pattern read the rest of the line from every `<A` and a blank that no `>` followed (9.4 s
 * on 100 KB of `<A\t`).
 */
export function withoutJsxTags(s: string): string {
  const n = s.length
  const gt = nextFinder(s, '>')
  let out = ''
  let last = 0
  for (let i = s.indexOf('<'); i >= 0; i = s.indexOf('<', i + 1)) {
    let k = i + 1
    if (s[k] === '/') k++
    if (!isUpperAscii(s.charCodeAt(k))) continue
    k++
    while (isNameChar(s.charCodeAt(k))) k++
    let end = -1
    if (s[k] === '>') end = k + 1
    else if (s[k] === '/' && s[k + 1] === '>') end = k + 2
    else if (k < n && isSpace(s[k]!)) {
      const g = gt(k)
      // no `>` after this tag's blank: no later tag can end either
      if (g < 0) break
      end = g + 1
    }
    if (end < 0) continue
    out += s.slice(last, i)
    last = end
    i = end - 1
  }
  return out + s.slice(last)
}

/**
 * `s.replace(/\{\/\*.*?\*\/\}/g, '')`: MDX comments (`{/* note *\/}`) that open and close on one line (`.` stops at
 * a line terminator). The pattern read to the end from every `{/*` that no `*\/}` followed (1.8 s on 100 KB).
 */
export function withoutMdxComments(s: string): string {
  const close = nextFinder(s, '*/}')
  let lineEnd = -2
  const terminator = (from: number) => {
    if (lineEnd === -1 || lineEnd >= from) return lineEnd
    lineEnd = -1
    for (let j = from; j < s.length; j++)
      if (isTerminator(s[j])) {
        lineEnd = j
        break
      }
    return lineEnd
  }
  let out = ''
  let last = 0
  for (let i = s.indexOf('{/*'); i >= 0; ) {
    const e = close(i + 3)
    // no `*/}` after this start: none after any later one either
    if (e < 0) break
    const t = terminator(i + 3)
    if (t >= 0 && t < e) {
      // every start before the line break meets the same `*/}` past it
      i = s.indexOf('{/*', t + 1)
      continue
    }
    out += s.slice(last, i)
    last = e + 3
    i = s.indexOf('{/*', last)
  }
  return out + s.slice(last)
}

/** A token of the small HTML the Word reader writes: a start or end tag (its attributes as written), or text. */
export type HtmlToken = { tag: string; close: boolean; attrs: string } | { text: string }

/**
 * The tokens of `/<(\/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>|([^<]+)|(<)/g` over `s`: a tag runs to the first `>` after
 * its name; a `<` that starts no tag (or that no `>` follows) is text of its own. The pattern read the rest of the
 * text from every `<a` that no `>` followed (22.8 s on 100 KB of `<A` and digits).
 */
export function htmlTokens(s: string): HtmlToken[] {
  const n = s.length
  const gt = nextFinder(s, '>')
  const out: HtmlToken[] = []
  let i = 0
  while (i < n) {
    if (s[i] !== '<') {
      const j = s.indexOf('<', i)
      const e = j < 0 ? n : j
      out.push({ text: s.slice(i, e) })
      i = e
      continue
    }
    let k = i + 1
    const close = s[k] === '/'
    if (close) k++
    if (isLetterAscii(s.charCodeAt(k))) {
      let e = k + 1
      while (isAlnumAscii(s.charCodeAt(e))) e++
      const g = gt(e)
      if (g >= 0) {
        out.push({ tag: s.slice(k, e), close, attrs: s.slice(e, g) })
        i = g + 1
        continue
      }
    }
    out.push({ text: '<' })
    i++
  }
  return out
}

/**
 * `/^ {0,3}# +(.+?)\s*#*\s*$/m.exec(text)?.[1] ?? null`: the text of the first `# ` heading of a document (the
 * closing `#`s and blanks left out). By lines: the blanks after the text may not cross into the next line's text,
 * so what ends a heading is its own line's tail. The pattern was cubic on a heading line of spaces (over 60 s on 4 KB).
 */
export function firstH1Of(text: string): string | null {
  const n = text.length
  for (let st = 0; st <= n; ) {
    let en = st
    while (en < n && !isTerminator(text[en])) en++
    let k = st
    while (text[k] === ' ' && k < en) k++
    if (k - st <= 3 && text[k] === '#' && k < en) {
      const a = k + 1
      let b = a
      while (b < en && text[b] === ' ') b++
      if (b > a && b < en) {
        let tail = en
        while (tail > st && isSpace(text[tail - 1]!)) tail--
        while (tail > st && text[tail - 1] === '#') tail--
        while (tail > st && isSpace(text[tail - 1]!)) tail--
        return text.slice(b, Math.max(b + 1, tail))
      }
      // only spaces after the `#`: the pattern's text is the last of them, if `# +` can spare it
      if (b === en && b - a >= 2) return ' '
    }
    st = en + 1
  }
  return null
}
