import { hostAllowed } from '../../bots/bots.fns.js'
import { trimEndOf } from '../../../lib/trim-run.fns.js'

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
  let url = raw
  for (;;) {
    const last = url.slice(-1)
    if (/[.,;:!?'"*_]/.test(last)) url = url.slice(0, -1)
    else if (last === ')' && (url.match(/\(/g)?.length ?? 0) < (url.match(/\)/g)?.length ?? 0)) url = url.slice(0, -1)
    else break
  }
  return { url, rest: raw.slice(url.length) }
}

const MD_LINK = /([ \t]*)(!?)\[([^\]\n]{0,500})\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+"[^"\n]*")?\s*\)/g
const CITATION = /[ \t]*\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g

/** Cleans a complete piece of text (see the module comment). */
export function cleanAnswer(text: string, policy: LinkPolicy): CleanResult {
  const removed: string[] = []
  const cited: number[] = []
  // markdown links and images first, so their URLs are not seen as bare URLs
  const links: string[] = []
  let out = text.replace(MD_LINK, (whole, space: string, bang: string, label: string, url: string) => {
    if (isAllowedUrl(url, policy)) {
      links.push(whole.slice(space.length))
      return `${space}\u0000${links.length - 1}\u0000`
    }
    removed.push(url)
    return bang ? '' : space + label
  })
  out = out.replace(
    /([ \t]*)(\(?)(<?)(\b(?:https?:\/\/|www\.)[^\s<>"'`]+)(>?)/gi,
    (whole, space: string, paren: string, lt: string, raw: string, gt: string) => {
      const { url, rest } = trimUrl(raw)
      if (isAllowedUrl(url, policy)) return whole
      removed.push(url)
      // the URL goes with the space before it; an autolink's brackets and a "(url)" wrapper go too
      const tail = rest + (lt ? '' : gt)
      if (paren) return tail.startsWith(')') ? tail.slice(1) : space + paren + tail
      return tail
    },
  )
  out = out.replace(CITATION, (_m, nums: string) => {
    for (const n of nums.split(',')) cited.push(Number(n.trim()))
    return ''
  })
  out = out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => links[Number(i)]!)
  return { text: out, removed, cited }
}

/** Where the still-open tail begins: nothing before it can change with more text. */
export function safeEnd(s: string): number {
  let end = s.length
  // a markdown link or citation marker still open: "[", "[label", "[label]", "[label](url"
  const open = /!?\[[^\]\n]{0,500}(?:\](?:\([^)\n]*)?)?$/.exec(s)
  if (open) end = Math.min(end, open.index)
  // a URL not yet ended by whitespace, or the start of a scheme
  const url = /(?:\(?<?\b(?:https?:\/\/|www\.)[^\s<>"'`]*|(?:^|[\s(<])(?:h(?:t(?:t(?:p(?:s?(?::(?:\/\/?)?)?)?)?)?)?|w(?:w(?:w)?)?))$/i.exec(s)
  if (url) end = Math.min(end, url.index)
  // a URL held inside a markdown link holds the whole link
  const inLink = /!?\[[^\]\n]{0,500}\](?:\(\s*<?)?$/.exec(s.slice(0, end))
  if (inLink) end = inLink.index
  // whitespace right before the held tail (or at the very end) goes with it: a removed marker takes it along
  while (end > 0 && /[ \t]/.test(s[end - 1]!)) end--
  return end
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
