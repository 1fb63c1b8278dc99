/** Saved replies in the composer (#39): the `/` query under the caret, the matches, the variables filled in. */

export interface SavedReplyLike {
  id: string
  title: string
  shortcut: string
  content: string
}

/** The values a saved reply's variables are filled with; null or empty: not known here. */
export interface ReplyVars {
  'visitor.name'?: string | null
  'agent.name'?: string | null
  'ticket.number'?: string | null
}

/** At most this many characters after the `/` are read as a query (a shortcut is at most 32). */
const QUERY_MAX = 60

/**
 * The `/query` the caret is at the end of, when the `/` starts the text or follows whitespace and nothing after
 * it is whitespace: where it starts and what follows the `/`. Null otherwise (a URL, a date, "and/or").
 */
export function slashQuery(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret)
  const slash = before.lastIndexOf('/')
  if (slash < 0) return null
  if (slash > 0 && !/\s/.test(before[slash - 1]!)) return null
  const query = before.slice(slash + 1)
  if (query.length > QUERY_MAX || /\s/.test(query)) return null
  return { start: slash, query }
}

/** The saved replies a query names: shortcuts starting with it first, then shortcuts and titles containing it. */
export function matchReplies<T extends SavedReplyLike>(items: readonly T[], query: string, limit = 8): T[] {
  const q = query.trim().toLowerCase()
  if (!q) return items.slice(0, limit)
  const rank = (r: T) => {
    const s = r.shortcut.toLowerCase()
    const t = r.title.toLowerCase()
    if (s.startsWith(q)) return 0
    if (t.startsWith(q)) return 1
    if (s.includes(q)) return 2
    if (t.includes(q)) return 3
    return 4
  }
  return items
    .map((r) => ({ r, k: rank(r) }))
    .filter((x) => x.k < 4)
    .sort((a, b) => a.k - b.k || a.r.shortcut.localeCompare(b.r.shortcut))
    .slice(0, limit)
    .map((x) => x.r)
}

/**
 * `{{visitor.name}}`, `{{agent.name}}`, `{{ticket.number}}` filled in (spaces inside the braces allowed). A value not
 * known is left out with the spaces before it (or, at the start of a line, after it): "Hi {{visitor.name}}, this is
 * Kim" for an anonymous visitor reads "Hi, this is Kim", not "Hi , this is Kim".
 */
export function fillReply(content: string, vars: ReplyVars): string {
  const re = /\{\{\s*(visitor\.name|agent\.name|ticket\.number)\s*\}\}/g
  let out = ''
  let last = 0
  let skipSpaces = false
  for (let m = re.exec(content); m; m = re.exec(content)) {
    let piece = content.slice(last, m.index)
    if (skipSpaces) piece = trimStartSpaces(piece)
    skipSpaces = false
    const value = vars[m[1] as keyof ReplyVars]?.trim() ?? ''
    if (value) out += piece + value
    else {
      const kept = trimEndSpaces(piece)
      out += kept
      // at the start of a line (or of the text) the spaces after it go instead
      const lineStart = kept.length === 0 ? out.length === 0 || out.endsWith('\n') : kept.endsWith('\n')
      skipSpaces = lineStart
    }
    last = m.index + m[0].length
  }
  const rest = content.slice(last)
  return out + (skipSpaces ? trimStartSpaces(rest) : rest)
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t'
function trimEndSpaces(s: string): string {
  let e = s.length
  while (e > 0 && isSpace(s[e - 1])) e--
  return s.slice(0, e)
}
function trimStartSpaces(s: string): string {
  let b = 0
  while (b < s.length && isSpace(s[b])) b++
  return s.slice(b)
}

/**
 * A shortcut as the service takes it (`^[a-z0-9-]{1,32}$`): "Refund Time" becomes "refund-time" (lower-cased,
 * spaces and other characters made one hyphen, at most 32 characters).
 */
export function slugShortcut(text: string): string {
  let out = ''
  for (const ch of text.normalize('NFKD').toLowerCase()) {
    if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) out += ch
    else if (/\p{M}/u.test(ch)) continue
    else if (out && !out.endsWith('-')) out += '-'
  }
  while (out.endsWith('-')) out = out.slice(0, -1)
  out = out.slice(0, 32)
  while (out.endsWith('-')) out = out.slice(0, -1)
  return out
}

/** The composer's text with `/query` (from `start` to the caret) replaced by the reply, and where the caret goes. */
export function insertReply(text: string, start: number, caret: number, reply: string): { text: string; caret: number } {
  const next = text.slice(0, start) + reply + text.slice(caret)
  return { text: next, caret: start + reply.length }
}

/** How visitors see a member (the service's rule): the display name, else the bot's name + " team". */
export function agentName(displayName: string | null | undefined, botName: string | null | undefined): string | null {
  if (displayName?.trim()) return displayName.trim()
  return botName?.trim() ? `${botName.trim()} team` : null
}
