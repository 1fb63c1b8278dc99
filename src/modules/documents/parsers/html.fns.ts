import { htmlTokens } from '../../../lib/markup-scan.fns.js'
import { trimBothOf } from '../../../lib/trim-run.fns.js'

/**
 * The small, well-formed HTML the Word reader (mammoth) writes, as markdown: headings, paragraphs, nested
 * lists, tables (a short row is padded so the table stays rectangular), line breaks. Inline formatting is
 * dropped (noise for search); a link keeps its URL when it points outside the document.
 */

interface El {
  tag: string
  attrs: string
  children: Node[]
}
type Node = El | string

const VOID = new Set(['br', 'img', 'hr'])

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' }
export const decodeEntities = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : ''
    }
    return ENTITIES[e.toLowerCase()] ?? m
  })

function parse(html: string): El {
  const root: El = { tag: 'root', attrs: '', children: [] }
  const stack: El[] = [root]
  for (const t of htmlTokens(html)) {
    const top = stack[stack.length - 1]!
    if ('text' in t) {
      top.children.push(decodeEntities(t.text))
      continue
    }
    const tag = t.tag.toLowerCase()
    if (t.close) {
      const idx = stack.map((e) => e.tag).lastIndexOf(tag)
      if (idx > 0) stack.length = idx
      continue
    }
    const el: El = { tag, attrs: t.attrs, children: [] }
    top.children.push(el)
    if (!VOID.has(tag) && !t.attrs.trim().endsWith('/')) stack.push(el)
  }
  return root
}

const attr = (el: El, name: string) => new RegExp(`${name}="([^"]*)"`, 'i').exec(el.attrs)?.[1] ?? null

function inline(nodes: Node[]): string {
  let out = ''
  for (const n of nodes) {
    if (typeof n === 'string') out += n
    else if (n.tag === 'br') out += '\n'
    else if (n.tag === 'img') out += attr(n, 'alt') ? decodeEntities(attr(n, 'alt')!) : ''
    else if (n.tag === 'a') {
      const text = inline(n.children)
      const href = attr(n, 'href')
      if (text.trim() === '↑') continue // footnote back-reference
      out += href && /^https?:\/\//i.test(href) && !text.includes(href) ? `${text} (${decodeEntities(href)})` : text
    } else if (n.tag === 'ul' || n.tag === 'ol' || n.tag === 'table') continue
    else out += inline(n.children)
  }
  return out
}

const squash = (s: string) =>
  s
    .replace(/[ \t]+/g, ' ')
    // each line's spaces trimmed by a scan: / *\n */g is quadratic on a run of spaces
    .split('\n')
    .map((line) => trimBothOf(line, ' '))
    .join('\n')
    .trim()

function renderList(el: El, depth: number): string {
  const ordered = el.tag === 'ol'
  const lines: string[] = []
  let i = 1
  for (const li of el.children) {
    if (typeof li === 'string' || li.tag !== 'li') continue
    const pad = '  '.repeat(depth)
    const marker = ordered ? `${i++}.` : '-'
    const text = squash(inline(li.children)).replace(/\n/g, ' ')
    lines.push(`${pad}${marker} ${text}`)
    for (const c of li.children) {
      if (typeof c !== 'string' && (c.tag === 'ul' || c.tag === 'ol')) lines.push(renderList(c, depth + 1))
      if (typeof c !== 'string' && c.tag === 'table') lines.push(renderTable(c))
    }
  }
  return lines.join('\n')
}

function rowsOf(el: El): El[][] {
  const rows: El[][] = []
  const walk = (n: El) => {
    for (const c of n.children) {
      if (typeof c === 'string') continue
      if (c.tag === 'tr') rows.push(c.children.filter((x): x is El => typeof x !== 'string' && (x.tag === 'td' || x.tag === 'th')))
      else if (c.tag === 'thead' || c.tag === 'tbody' || c.tag === 'tfoot') walk(c)
    }
  }
  walk(el)
  return rows
}

function cellText(cell: El): string {
  const parts: string[] = []
  for (const c of cell.children) {
    if (typeof c === 'string') parts.push(c)
    else if (c.tag === 'table')
      parts.push(
        rowsOf(c)
          .map((r) => r.map(cellText).join(' '))
          .join(' '),
      )
    else if (c.tag === 'ul' || c.tag === 'ol') parts.push(renderList(c, 0).replace(/\n/g, ' '))
    else parts.push(inline([c]))
  }
  return squash(parts.join(' ')).replace(/\n/g, ' ').replace(/\|/g, '\\|')
}

function renderTable(el: El): string {
  const rows = rowsOf(el).map((r) => r.flatMap((c) => [cellText(c), ...Array(Math.max(0, Number(attr(c, 'colspan') ?? 1) - 1)).fill('')]))
  const nonEmpty = rows.filter((r) => r.some((c) => c))
  if (nonEmpty.length === 0) return ''
  const width = Math.max(...nonEmpty.map((r) => r.length))
  const pad = (r: string[]) => [...r, ...Array(width - r.length).fill('')]
  const [head, ...body] = nonEmpty.map(pad)
  return [`| ${head!.join(' | ')} |`, `|${' --- |'.repeat(width)}`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

function renderBlocks(el: El, out: string[]): void {
  for (const n of el.children) {
    if (typeof n === 'string') {
      if (n.trim()) out.push(squash(n))
      continue
    }
    const h = /^h([1-6])$/.exec(n.tag)
    if (h) {
      const t = squash(inline(n.children)).replace(/\n/g, ' ')
      if (t) out.push(`${'#'.repeat(Number(h[1]))} ${t}`)
    } else if (n.tag === 'p') {
      const t = squash(inline(n.children))
      if (t) out.push(t)
    } else if (n.tag === 'ul' || n.tag === 'ol') out.push(renderList(n, 0))
    else if (n.tag === 'table') out.push(renderTable(n))
    else if (n.tag === 'blockquote') {
      const inner: string[] = []
      renderBlocks(n, inner)
      out.push(inner.join('\n\n').replace(/^/gm, '> '))
    } else renderBlocks(n, out)
  }
}

export function htmlToMarkdown(html: string): string {
  const out: string[] = []
  renderBlocks(parse(html), out)
  return out
    .filter((s) => s.trim())
    .join('\n\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}
