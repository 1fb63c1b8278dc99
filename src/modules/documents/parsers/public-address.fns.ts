import { parse as parseYaml } from 'yaml'

/**
 * The public address an uploaded file names for itself, which makes it URL-backed like a crawled page
 * (contract, "Later decisions": cited in the widget as {title, url}): front matter `url`, `canonical` or
 * `permalink` (YAML or TOML), else an HTML `<link rel="canonical" href="...">`. Only an absolute http(s)
 * address counts; a relative permalink names no address a visitor could open.
 */
export function publicAddress(source: string): string | null {
  const head = source.slice(0, 65536)
  const fm = /^\uFEFF?(---|\+\+\+)[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\+\+\+|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(head)
  if (fm) {
    const fields = fm[1] === '---' ? yamlFields(fm[2]!) : tomlFields(fm[2]!)
    for (const key of ['canonical', 'url', 'permalink']) {
      const url = absoluteHttp(fields[key])
      if (url) return url
    }
  }
  for (const tag of linkTags(head)) {
    if (!/\brel\s*=\s*["']?canonical["'\s>/]/i.test(tag)) continue
    const href = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag)
    const url = absoluteHttp(href?.[1] ?? href?.[2] ?? href?.[3])
    if (url) return url
  }
  return null
}

function yamlFields(text: string): Record<string, unknown> {
  try {
    const data = parseYaml(text, { maxAliasCount: 50 }) as unknown
    return data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/**
 * A line's own blanks before the key: `^\s*` read every blank line below each line start again (9 s on 64 KB of
 * blank lines, issue 50); a key after blank lines is found from its own line start, with the same captures.
 */
export function tomlFields(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const m of text.matchAll(/^[^\S\n\r\u2028\u2029]*(url|canonical|permalink)\s*=\s*["']([^"'\n]*)["']\s*$/gm)) out[m[1]!] ??= m[2]
  return out
}

function absoluteHttp(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const raw = value.trim()
  if (!raw || raw.length > 2000 || !/^https?:\/\//i.test(raw)) return null
  try {
    const u = new URL(raw)
    if (u.username || u.password || (!u.hostname.includes('.') && u.hostname !== 'localhost')) return null
    return u.toString()
  } catch {
    return null
  }
}

/**
 * `head.match(/<link\b[^>]*>/gi)`: each `<link` to the next `>`, by a scan (the pattern read the rest of the text
 * from every `<link` when no `>` followed: 1.2 s on 64 KB, issue 50).
 */
function linkTags(head: string): string[] {
  const out: string[] = []
  const start = /<link\b/gi
  for (let m = start.exec(head); m; m = start.exec(head)) {
    const end = head.indexOf('>', m.index + 5)
    if (end < 0) break
    out.push(head.slice(m.index, end + 1))
    start.lastIndex = end + 1
  }
  return out
}
