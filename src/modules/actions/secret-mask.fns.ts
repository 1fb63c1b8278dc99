import { maskSecret } from './actions.fns.js'

/**
 * Masks of an action's secret values in every form they take on the way out and back: raw, percent-encoded
 * (upper or lower case hex, `+` or `%20` for a space, any mix of encoded and plain characters, as servers
 * re-encode URLs in their own way), JSON-escaped (`\/`, `\uXXXX`), escaped twice (an API echoing a JSON request
 * inside a JSON error), and percent-encoded inside JSON.
 *
 * No regular expression: a pattern of every form of every character lets one character (`\`) be read both as
 * itself and as half of an escape, and backtracking over that is exponential (issue 50: 27 backslashes froze the
 * process for 17 s). Instead the text is decoded a few fixed ways, each decoding keeping where each of its
 * characters came from, and the raw secret is searched in each with KMP: linear in the text for each secret and
 * decoding (at most 7 decodings).
 */

/** A decoding of the text: `at[i]` is where its i-th character starts in the original text (`at[length]`: the end). */
interface View {
  text: string
  at: Int32Array
}

const hex = (c: number) => {
  if (c >= 48 && c <= 57) return c - 48
  const l = c | 32
  return l >= 97 && l <= 102 ? l - 87 : -1
}

/** A decoding under way: never longer than its input, so its arrays are allocated once. */
class Builder {
  private codes: Uint16Array
  private at: Int32Array
  private n = 0
  constructor(max: number) {
    this.codes = new Uint16Array(max)
    this.at = new Int32Array(max + 1)
  }
  push(code: number, from: number) {
    this.codes[this.n] = code
    this.at[this.n++] = from
  }
  view(end: number): View {
    let text = ''
    for (let i = 0; i < this.n; i += 8192) text += String.fromCharCode(...this.codes.subarray(i, Math.min(i + 8192, this.n)))
    this.at[this.n] = end
    return { text, at: this.at.subarray(0, this.n + 1) }
  }
}

/** `%XX` runs decoded as UTF-8 (a byte that is not valid UTF-8 stays as written); `+` a space when `plus`. */
function percentDecoded(v: View, plus: boolean): View {
  const s = v.text
  const out = new Builder(s.length)
  let i = 0
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c === 37 /* % */ && i + 2 < s.length && hex(s.charCodeAt(i + 1)) >= 0 && hex(s.charCodeAt(i + 2)) >= 0) {
      const b = hex(s.charCodeAt(i + 1)) * 16 + hex(s.charCodeAt(i + 2))
      const n = b < 0x80 ? 1 : (b & 0xe0) === 0xc0 ? 2 : (b & 0xf0) === 0xe0 ? 3 : (b & 0xf8) === 0xf0 ? 4 : 0
      let cp = n === 1 ? b : n === 2 ? b & 0x1f : n === 3 ? b & 0x0f : b & 0x07
      let ok = n > 0
      for (let k = 1; ok && k < n; k++) {
        const j = i + 3 * k
        const h1 = s.charCodeAt(j) === 37 ? hex(s.charCodeAt(j + 1)) : -1
        const h2 = h1 >= 0 ? hex(s.charCodeAt(j + 2)) : -1
        const cb = h1 * 16 + h2
        if (h2 < 0 || (cb & 0xc0) !== 0x80) ok = false
        else cp = (cp << 6) | (cb & 0x3f)
      }
      if (ok) {
        const from = v.at[i]!
        if (cp > 0xffff) {
          out.push(0xd800 + ((cp - 0x10000) >> 10), from)
          out.push(0xdc00 + ((cp - 0x10000) & 0x3ff), from)
        } else out.push(cp, from)
        i += 3 * n
        continue
      }
    }
    out.push(plus && c === 43 /* + */ ? 32 : c, v.at[i]!)
    i++
  }
  return out.view(v.at[s.length]!)
}

const JSON_ESCAPES: Record<string, number> = { '"': 34, '\\': 92, '/': 47, b: 8, f: 12, n: 10, r: 13, t: 9 }

/** JSON string escapes (`\"`, `\\`, `\/`, `\n`, `\uXXXX` ...) read once, left to right; anything else as written. */
function jsonUnescaped(v: View): View {
  const s = v.text
  const out = new Builder(s.length)
  let i = 0
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c === 92 && i + 1 < s.length) {
      const e = s[i + 1]!
      const simple = JSON_ESCAPES[e]
      if (simple !== undefined) {
        out.push(simple, v.at[i]!)
        i += 2
        continue
      }
      if (e === 'u' && i + 5 < s.length) {
        const d = [2, 3, 4, 5].map((k) => hex(s.charCodeAt(i + k)))
        if (d.every((x) => x >= 0)) {
          out.push(((d[0]! * 16 + d[1]!) * 16 + d[2]!) * 16 + d[3]!, v.at[i]!)
          i += 6
          continue
        }
      }
    }
    out.push(c, v.at[i]!)
    i++
  }
  return out.view(v.at[s.length]!)
}

/** The text as written and each decoding that changes something in it. */
function viewsOf(text: string): View[] {
  const at = new Int32Array(text.length + 1)
  for (let i = 0; i <= text.length; i++) at[i] = i
  const raw: View = { text, at }
  const views = [raw]
  const percent = (v: View) => {
    if (!v.text.includes('%') && !v.text.includes('+')) return
    views.push(percentDecoded(v, false))
    if (v.text.includes('+')) views.push(percentDecoded(v, true))
  }
  percent(raw)
  if (text.includes('\\')) {
    const once = jsonUnescaped(raw)
    views.push(once)
    if (once.text.includes('\\')) views.push(jsonUnescaped(once))
    percent(once)
  }
  return views
}

/** KMP failure function: for each prefix, the length of its longest proper border. */
function borders(p: string): Int32Array {
  const f = new Int32Array(p.length)
  let k = 0
  for (let i = 1; i < p.length; i++) {
    while (k > 0 && p.charCodeAt(i) !== p.charCodeAt(k)) k = f[k - 1]!
    if (p.charCodeAt(i) === p.charCodeAt(k)) k++
    f[i] = k
  }
  return f
}

interface Hit {
  start: number
  end: number
  secret: string
}

/**
 * Every occurrence of `secret` in a view, and with `minPrefix` every maximal run of at least that many of its first
 * characters, as original positions. Returns the start of a match still open at the end (for a stream), or -1.
 */
function scan(v: View, secret: string, f: Int32Array, minPrefix: number, hits: Hit[], closeAtEnd: boolean): number {
  const s = v.text
  const m = secret.length
  // hits come in order of their ends: one overlapping the last is merged into it (a run of backslashes against a
  // secret of backslashes would otherwise give a hit at every position)
  let last: Hit | null = null
  const add = (endIdx: number, len: number) => {
    const start = v.at[endIdx - len]!
    const end = v.at[endIdx]!
    if (last && start <= last.end) last.end = Math.max(last.end, end)
    else hits.push((last = { start, end, secret }))
  }
  let q = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (q > 0 && c !== secret.charCodeAt(q)) {
      if (q >= minPrefix) add(i, q)
      while (q > 0 && c !== secret.charCodeAt(q)) q = f[q - 1]!
    }
    if (c === secret.charCodeAt(q)) q++
    if (q === m) {
      // occurrences do not overlap (as String.replace): an overlap would be masked anyway by the merge
      add(i + 1, m)
      q = 0
    }
  }
  if (q > 0 && q >= minPrefix && closeAtEnd) add(s.length, q)
  return q > 0 ? v.at[s.length - q]! : -1
}

export interface MaskOptions {
  /** also mask a run of at least this many of a secret's first characters (answers: 8); whole secrets only without */
  minPrefix?: number
}

/** Secret values longest first, without empties and repeats, with their KMP tables. */
function prepare(secrets: Record<string, string> | readonly string[]): { secret: string; f: Int32Array }[] {
  const list = Array.isArray(secrets) ? secrets : Object.values(secrets)
  return [...new Set(list)]
    .filter((v) => v.length > 0)
    .sort((a, b) => b.length - a.length)
    .map((secret) => ({ secret, f: borders(secret) }))
}

type Prepared = ReturnType<typeof prepare>

/** The hits over every view, and the earliest start of a match still open at the end (text length when none). */
function findAll(text: string, prepared: Prepared, opts: MaskOptions, closeAtEnd: boolean): { hits: Hit[]; open: number } {
  const hits: Hit[] = []
  let open = text.length
  if (prepared.length === 0 || text.length === 0) return { hits, open }
  const views = viewsOf(text)
  for (const { secret, f } of prepared) {
    const minPrefix = opts.minPrefix && secret.length > opts.minPrefix ? opts.minPrefix : secret.length
    for (const v of views) {
      const o = scan(v, secret, f, minPrefix, hits, closeAtEnd)
      if (o >= 0 && o < open) open = o
    }
  }
  return { hits, open }
}

/** The text with each hit (overlapping hits merged, shown as the longest secret's mask) replaced, up to `until`. */
function replaceHits(text: string, hits: Hit[], until: number): string {
  hits.sort((a, b) => a.start - b.start || b.end - a.end)
  let out = ''
  let pos = 0
  let i = 0
  while (i < hits.length && hits[i]!.start < until) {
    let { start, end, secret } = hits[i]!
    for (i++; i < hits.length && hits[i]!.start < end; i++) {
      end = Math.max(end, hits[i]!.end)
      if (hits[i]!.secret.length > secret.length) secret = hits[i]!.secret
    }
    if (start < pos) start = pos
    out += text.slice(pos, start) + maskSecret(secret)
    pos = end
  }
  return out + text.slice(pos, Math.max(pos, until))
}

/** Secret values, in any of their forms, replaced by their masks wherever they appear. */
export function maskAll(text: string, secrets: Record<string, string> | readonly string[], opts: MaskOptions = {}): string {
  const prepared = prepare(secrets)
  const { hits } = findAll(text, prepared, opts, true)
  return hits.length ? replaceHits(text, hits, text.length) : text
}

/** Characters kept back at a stream's end at least: the longest escape of one character (`%F0%9F%98%80`). */
const STREAM_TAIL = 12

export interface StreamMasker {
  /** the next piece of the text in; what may be shown of it so far out, masked */
  push(piece: string): string
  /** the rest, masked */
  end(): string
}

/**
 * The same masking over a text that arrives in pieces: what could still become a secret (a match still open at the
 * end, an escape not yet complete) is held until the next piece decides it, so the pieces shown add up to a text
 * in which no secret or prefix of one appears.
 */
export function createStreamMasker(secrets: Record<string, string> | readonly string[], opts: MaskOptions = {}): StreamMasker {
  const prepared = prepare(secrets)
  let pending = ''
  return {
    push(piece) {
      pending += piece
      if (prepared.length === 0) {
        const out = pending
        pending = ''
        return out
      }
      const { hits, open } = findAll(pending, prepared, opts, false)
      let cut = Math.min(open, pending.length - STREAM_TAIL)
      // never inside an escape: before a `%` of the last two characters, before a run of backslashes just behind
      const pct = pending.lastIndexOf('%', cut - 1)
      if (pct >= 0 && pct >= cut - 2) cut = pct
      const bs = pending.lastIndexOf('\\', cut - 1)
      if (bs >= 0 && bs >= cut - 6) {
        cut = bs
        while (cut > 0 && pending[cut - 1] === '\\') cut--
      }
      // nor inside a hit
      for (let moved = true; moved; ) {
        moved = false
        for (const h of hits)
          if (h.start < cut && h.end > cut) {
            cut = h.start
            moved = true
          }
      }
      if (cut <= 0) return ''
      const out = replaceHits(pending, hits, cut)
      pending = pending.slice(cut)
      return out
    },
    end() {
      const out = maskAll(pending, secrets, opts)
      pending = ''
      return out
    },
  }
}
