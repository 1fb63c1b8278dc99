import { hostAllowed } from '../../bots/bots.fns.js'
import { isSpace, trimEndOf } from '../../../lib/trim-run.fns.js'

/**
 * Stage 9b: no invented link reaches a visitor. A link stays only when its URL appears in the sources
 * (a source page's URL or a URL written in a source's text) or its host is one of the bot's allowed
 * domains; otherwise a markdown link keeps its label and a bare URL disappears. Citation markers ([1],
 * [2, 3]) are taken out too: the answer's sources travel beside the text.
 *
 * The same cleaning runs on a stream: `createStreamCleaner` holds back a tail that could still become a
 * link or a marker (an open `[`, a URL not yet ended by a space, "htt" at the end) and emits everything
 * before it cleaned, so the pieces it emits always add up to the cleaned whole.
 */

export interface LinkPolicy {
  /** Normalised URLs present in the sources. */
  sourceUrls: ReadonlySet<string>
  allowedDomains: readonly string[]
}

export interface CleanResult {
  text: string
  removed: string[]
  cited: number[]
}

const URL_IN_TEXT = /\b(?:https?:\/\/|www\.)[^\s<>"'`]+/gi

/** Comparable form of a URL: lower-case scheme and host, no fragment, no trailing slash; null if not http(s). */
export function normalizeUrl(raw: string): string | null {
  let s = raw.trim()
  if (/^www\./i.test(s)) s = `https://${s}`
  let u: URL
  try {
    u = new URL(s)
  } catch {
    return null
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null
  u.hash = ''
  const out = `${u.host.toLowerCase()}${trimEndOf(u.pathname, '/')}${u.search}`
  return out
}

/** Every URL in the sources: the chunks' page URLs and URLs written in their text. */
export function linkPolicy(sources: { url: string | null; text: string }[], allowedDomains: readonly string[]): LinkPolicy {
  const urls = new Set<string>()
  for (const s of sources) {
    if (s.url) {
      const n = normalizeUrl(s.url)
      if (n) urls.add(n)
    }
    for (const m of s.text.matchAll(URL_IN_TEXT)) {
      const n = normalizeUrl(trimUrl(m[0]).url)
      if (n) urls.add(n)
    }
  }
  return { sourceUrls: urls, allowedDomains }
}

export function isAllowedUrl(raw: string, policy: LinkPolicy): boolean {
  const n = normalizeUrl(raw)
  if (!n) return /^(?:mailto:|tel:|#|\/(?!\/))/i.test(raw.trim()) // relative and mail links carry no foreign host
  if (policy.sourceUrls.has(n)) return true
  const host = n.split('/')[0]!.replace(/:\d+$/, '')
  return hostAllowed(host, policy.allowedDomains)
}

/** A URL found in prose ends before trailing punctuation, and before a ")" it did not open. */
function trimUrl(raw: string): { url: string; rest: string } {
  // the parentheses counted once, not again for each character taken off (a run of `)` was quadratic)
  let opens = 0
  let closes = 0
  for (const c of raw) {
    if (c === '(') opens++
    else if (c === ')') closes++
  }
  let end = raw.length
  for (;;) {
    const last = raw[end - 1]
    if (last !== undefined && '.,;:!?\'"*_'.includes(last)) end--
    else if (last === ')' && opens < closes) {
      end--
      closes--
    } else break
  }
  return { url: raw.slice(0, end), rest: raw.slice(end) }
}

/*
 * The patterns below once began with `([ \t]*)` (the blanks before a link, a URL or a marker go with it): that made
 * each quadratic on a run of blanks, since every start read the run to its end (issue 50). The blanks are now taken
 * by looking back from each match (withBlanks). MD_LINK's `\(\s*<?…>?(?:\s+"…")?\s*\)` let three blank runs share one
 * run of spaces; `\s*(?!\s)` takes the run whole, and the second branch is the one way a shorter take could match
 * (an empty URL, then a title): the same matches, each run read a bounded number of times.
 */
const CITATION = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g
const BARE_URL = /(\(?)(<?)(\b(?:https?:\/\/|www\.)[^\s<>"'`]+)(>?)/gi
/**
 * A markdown link's target after its label's `]`: `(`, the URL, an optional title, `)`. Read at one `]` at a time
 * (sticky) by mdLinks, which finds the label.
 */
const LINK_TARGET = /\((?:\s*(?!\s)<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+"[^"\n]*")?\s*\)|\s+"[^"\n]*"\s*\))/y

export interface Found {
  index: number
  /** the match, then its groups */
  parts: (string | undefined)[]
}

const matchesOf = (text: string, re: RegExp): Iterable<Found> => Array.from(text.matchAll(re), (m) => ({ index: m.index, parts: [...m] }))

/**
 * The matches of `/(!?)\[([^\]\n]{0,500})\]` + LINK_TARGET (g), found by a scan: that pattern read up to 500
 * characters of label from every `[` (74 ms on 32,000 characters of `[\t`, an answer's length, issue 50). A label
 * runs from a `[` to the first `]` (no line break, at most 500 characters), and what follows that `]` is the same for
 * every `[` before it: the target is read once per `]`, and the leftmost `[` that reaches it (an `!` before it
 * included) starts the match.
 */
export function mdLinks(s: string): Found[] {
  const out: Found[] = []
  let close = -2
  let newline = -2
  let targetAt = -1
  let target: RegExpExecArray | null = null
  let from = 0
  for (let q = s.indexOf('['); q >= 0; q = s.indexOf('[', q + 1)) {
    if (close !== -1 && close <= q) close = s.indexOf(']', q + 1)
    if (close < 0) break
    if (newline !== -1 && newline <= q) newline = s.indexOf('\n', q + 1)
    if ((newline >= 0 && newline < close) || close - q - 1 > 500) continue
    if (close !== targetAt) {
      targetAt = close
      LINK_TARGET.lastIndex = close + 1
      target = LINK_TARGET.exec(s)
    }
    if (!target) continue
    const start = q - 1 >= from && s[q - 1] === '!' ? q - 1 : q
    const end = LINK_TARGET.lastIndex
    out.push({ index: start, parts: [s.slice(start, end), start < q ? '!' : '', s.slice(q + 1, close), target[1]] })
    from = end
    q = end - 1
  }
  return out
}

/** `text.replace(/([ \t]*)CORE/g, fn)`, the blanks before each match of the core found by looking back from it. */
function withBlanks(text: string, matches: Iterable<Found>, fn: (whole: string, space: string, ...groups: (string | undefined)[]) => string): string {
  let out = ''
  let last = 0
  for (const { index, parts } of matches) {
    const whole = parts[0]!
    let p = index
    while (p > last && (text[p - 1] === ' ' || text[p - 1] === '\t')) p--
    const space = text.slice(p, index)
    out += text.slice(last, p) + fn(space + whole, space, ...parts.slice(1))
    last = index + whole.length
  }
  return out + text.slice(last)
}

/** Cleans a complete piece of text (see the module comment). */
export function cleanAnswer(text: string, policy: LinkPolicy): CleanResult {
  const removed: string[] = []
  const cited: number[] = []
  // markdown links and images first, so their URLs are not seen as bare URLs
  const links: string[] = []
  let out = withBlanks(text, mdLinks(text), (whole, space, bang, label, found) => {
    const url = found ?? ''
    if (isAllowedUrl(url, policy)) {
      links.push(whole.slice(space.length))
      return `${space}\u0000${links.length - 1}\u0000`
    }
    removed.push(url)
    return bang ? '' : space + label
  })
  out = withBlanks(out, matchesOf(out, BARE_URL), (whole, space, paren, lt, raw, gt) => {
    const { url, rest } = trimUrl(raw!)
    if (isAllowedUrl(url, policy)) return whole
    removed.push(url)
    // the URL goes with the space before it; an autolink's brackets and a "(url)" wrapper go too
    const tail = rest + (lt ? '' : gt)
    if (paren) return tail.startsWith(')') ? tail.slice(1) : space + paren + tail
    return tail
  })
  out = withBlanks(out, matchesOf(out, CITATION), (_m, _space, nums) => {
    for (const n of nums!.split(',')) cited.push(Number(n.trim()))
    return ''
  })
  out = out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => links[Number(i)]!)
  return { text: out, removed, cited }
}

/**
 * Where the still-open tail begins: nothing before it can change with more text. Three end-anchored searches, each
 * by a scan (they were patterns that read the text from every start: quadratic, issue 50); the pattern each
 * replaces is in its comment, and the unit tests compare them.
 */
export function safeEnd(s: string): number {
  let end = s.length
  // a markdown link or citation marker still open: "[", "[label", "[label]", "[label](url"
  const open = openLinkAt(s)
  if (open >= 0) end = Math.min(end, open)
  // a URL not yet ended by whitespace, or the start of a scheme
  const url = openUrlAt(s)
  if (url >= 0) end = Math.min(end, url)
  // a URL held inside a markdown link holds the whole link
  const inLink = linkBeforeUrlAt(s.slice(0, end))
  if (inLink >= 0) end = inLink
  // whitespace right before the held tail (or at the very end) goes with it: a removed marker takes it along
  while (end > 0 && /[ \t]/.test(s[end - 1]!)) end--
  return end
}

const bang = (s: string, b: number) => (b > 0 && s[b - 1] === '!' ? b - 1 : b)

/** `/!?\[[^\]\n]{0,500}(?:\](?:\([^)\n]*)?)?$/.exec(s)?.index ?? -1` */
export function openLinkAt(s: string): number {
  const n = s.length
  const lastParen = s.lastIndexOf(')')
  let close = -2
  for (let b = s.indexOf('[', s.lastIndexOf('\n') + 1); b >= 0; b = s.indexOf('[', b + 1)) {
    if (close < b + 1 && close !== -1) close = s.indexOf(']', b + 1)
    if (close < 0) {
      if (n - (b + 1) <= 500) return bang(s, b)
      continue
    }
    if (close - (b + 1) > 500) continue
    if (close + 1 === n || (s[close + 1] === '(' && lastParen < close + 2)) return bang(s, b)
  }
  return -1
}

/** `/!?\[[^\]\n]{0,500}\](?:\(\s*<?)?$/.exec(s)?.index ?? -1` */
export function linkBeforeUrlAt(s: string): number {
  let w = s.length
  if (s[w - 1] === '<') w--
  while (w > 0 && isSpace(s[w - 1]!)) w--
  let r: number
  if (w === s.length && s[w - 1] === ']') r = w - 1
  else if (s[w - 1] === '(' && s[w - 2] === ']') r = w - 2
  else return -1
  let k = r - 1
  while (k >= 0 && k >= r - 501 && s[k] !== ']' && s[k] !== '\n') k--
  for (let b = k + 1; b < r; b++) if (s[b] === '[') return bang(s, b)
  return -1
}

const SCHEME_PARTS = ['https://', 'https:/', 'https:', 'https', 'http://', 'http:/', 'http:', 'http', 'htt', 'ht', 'h', 'www', 'ww', 'w']
const isWordChar = (c: string | undefined) => c !== undefined && /\w/.test(c)
const inUrl = (c: string) => !isSpace(c) && !'<>"\'`'.includes(c)

/**
 * `/(?:\(?<?\b(?:https?:\/\/|www\.)[^\s<>"'`]*|(?:^|[\s(<])(?:h(?:t(?:t(?:p(?:s?(?::(?:\/\/?)?)?)?)?)?)?|w(?:w(?:w)?)?))$/i`'s
 * index, or -1: a URL running to the end, or the start of a scheme at the end.
 */
export function openUrlAt(s: string): number {
  const n = s.length
  let found = -1
  let t = n
  while (t > 0 && inUrl(s[t - 1]!)) t--
  for (let q = t; q < n; q++) {
    if (isWordChar(s[q - 1])) continue
    const head = s.slice(q, q + 8).toLowerCase()
    if (!head.startsWith('http://') && !head.startsWith('https://') && !head.startsWith('www.')) continue
    found = q
    if (s[q - 1] === '<') found = s[q - 2] === '(' ? q - 2 : q - 1
    else if (s[q - 1] === '(') found = q - 1
    break
  }
  const tail = s.slice(-9).toLowerCase()
  for (const part of SCHEME_PARTS) {
    if (!tail.endsWith(part)) continue
    const at = n - part.length
    const p = at === 0 ? 0 : isSpace(s[at - 1]!) || s[at - 1] === '(' || s[at - 1] === '<' ? at - 1 : -1
    if (p >= 0 && (found < 0 || p < found)) found = p
  }
  return found
}

export interface StreamCleaner {
  /** Feeds a delta; returns the cleaned text that can be shown now ('' when all of it is held back). */
  push(delta: string): string
  /** The cleaned rest at the end of the stream. */
  end(): string
  /** Everything emitted so far, links removed and markers cited. */
  readonly result: CleanResult
}

export function createStreamCleaner(policy: LinkPolicy): StreamCleaner {
  let pending = ''
  let emitted = ''
  const removed: string[] = []
  const cited: number[] = []
  const take = (piece: string) => {
    const r = cleanAnswer(piece, policy)
    removed.push(...r.removed)
    cited.push(...r.cited)
    emitted += r.text
    return r.text
  }
  return {
    push(delta) {
      pending += delta
      const cut = safeEnd(pending)
      if (cut <= 0) return ''
      const piece = pending.slice(0, cut)
      pending = pending.slice(cut)
      return take(piece)
    },
    end() {
      const piece = pending
      pending = ''
      return piece ? take(piece) : ''
    },
    get result() {
      return { text: emitted, removed: [...removed], cited: [...cited] }
    },
  }
}
