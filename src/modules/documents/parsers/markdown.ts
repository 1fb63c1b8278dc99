import { fromMarkdown } from 'mdast-util-from-markdown'
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { mdxFromMarkdown } from 'mdast-util-mdx'
import { frontmatter } from 'micromark-extension-frontmatter'
import { gfm } from 'micromark-extension-gfm'
import { mdxjs } from 'micromark-extension-mdxjs'
import { parse as parseYaml } from 'yaml'
import { firstH1Of, tomlTitleOf, withoutJsxTags, withoutMdxComments } from '../../../lib/markup-scan.fns.js'
import { plainHeading } from '../chunking.fns.js'
import { cleanText } from './text.fns.js'

export interface ParsedMarkdown {
  text: string
  title: string | null
}

/**
 * Markdown stays markdown (the chunker reads its structure): front matter is dropped (its title kept),
 * HTML comments and lines that are only HTML tags go, code blocks stay untouched. No full parse here on
 * purpose: micromark is superlinear on large files and plain markdown needs no rewriting.
 */
export function normalizeMarkdown(source: string): ParsedMarkdown {
  const { body, title } = splitFrontMatter(cleanText(source))
  const out: string[] = []
  let fence: string | null = null
  let inComment = false
  for (const line of body.split('\n')) {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fence) {
      out.push(line)
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length && /^ {0,3}[`~]+\s*$/.test(line)) fence = null
      continue
    }
    if (f) {
      fence = f[1]!
      out.push(line)
      continue
    }
    let l = line
    if (inComment) {
      const end = l.indexOf('-->')
      if (end < 0) continue
      l = l.slice(end + 3)
      inComment = false
    }
    l = withoutComments(l)
    const open = l.indexOf('<!--')
    if (open >= 0) {
      l = l.slice(0, open)
      inComment = true
    }
    if (/^\s*(?:<\/?[A-Za-z][^>]*>\s*)+$/.test(l)) continue // tag-only lines (<div align=center>, </details>)
    out.push(l)
  }
  const text = cleanText(out.join('\n'))
  return { text, title: title ?? firstH1(text) }
}

/**
 * `l.replace(/<!--[\s\S]*?-->/g, '')` by indexOf: the pattern read the rest of the line from every `<!--` that no
 * `-->` followed (3 s on 100 KB of `<!--`, issue 50).
 */
export function withoutComments(l: string): string {
  let out = ''
  let last = 0
  for (let i = l.indexOf('<!--'); i >= 0; i = l.indexOf('<!--', last)) {
    const end = l.indexOf('-->', i + 4)
    if (end < 0) break
    out += l.slice(last, i)
    last = end + 3
  }
  return out + l.slice(last)
}

/** Front matter (`---` YAML or `+++` TOML) at the very start. Its title is the document's title. */
export function splitFrontMatter(text: string): { body: string; title: string | null } {
  const m = /^(---|\+\+\+)[ \t]*\n([\s\S]*?)\n(?:---|\+\+\+|\.\.\.)[ \t]*(?:\n|$)/.exec(text)
  if (!m || m[0].length > 65536) return { body: text, title: null }
  let title: string | null = null
  if (m[1] === '---') {
    try {
      const data = parseYaml(m[2]!, { maxAliasCount: 50 }) as Record<string, unknown> | null
      if (data && typeof data === 'object' && typeof data.title === 'string') title = data.title.trim().slice(0, 300) || null
    } catch {
      // not YAML after all; still front matter by its fences
    }
  } else {
    title = tomlTitleOf(m[2]!)?.trim() || null
  }
  return { body: text.slice(m[0].length), title }
}

function firstH1(text: string): string | null {
  const h = firstH1Of(text)
  return h !== null ? plainHeading(h) || null : null
}

// ---------------------------------------------------------------------------------------------------
// MDX

/** Above this, MDX is stripped by lines instead of parsed (the parser is superlinear). */
const MDX_PARSE_LIMIT = 512 * 1024

interface MdNode {
  type: string
  children?: MdNode[]
  position?: { start: { offset?: number; column: number }; end: { offset?: number } }
}

/**
 * MDX: the real MDX parser drops ESM (import/export), expressions and JSX tags while keeping the markdown
 * inside components. A file the MDX parser rejects (invalid JSX is common in hand-written MDX) is
 * stripped line by line instead, so the upload still succeeds.
 */
export function normalizeMdx(source: string): ParsedMarkdown {
  const cleaned = cleanText(source)
  const { title } = splitFrontMatter(cleaned)
  let body: string
  try {
    if (cleaned.length > MDX_PARSE_LIMIT) throw new Error('too large to parse')
    const tree = fromMarkdown(cleaned, {
      extensions: [mdxjs(), frontmatter(['yaml', 'toml']), gfm()],
      mdastExtensions: [mdxFromMarkdown(), frontmatterFromMarkdown(['yaml', 'toml']), gfmFromMarkdown()],
    }) as MdNode
    body = renderFlow(tree.children ?? [], cleaned)
  } catch {
    body = stripMdxByLines(splitFrontMatter(cleaned).body)
  }
  const normalized = normalizeMarkdown(body)
  return { text: normalized.text, title: title ?? normalized.title }
}

const DROP = new Set(['yaml', 'toml', 'mdxjsEsm', 'mdxFlowExpression'])

function renderFlow(children: MdNode[], src: string): string {
  const out: string[] = []
  for (const c of children) {
    if (DROP.has(c.type)) continue
    if (c.type === 'mdxJsxFlowElement') {
      const inner = renderFlow(c.children ?? [], src)
      if (inner.trim()) out.push(inner)
      continue
    }
    const s = renderNode(c, src)
    if (s.trim()) out.push(s)
  }
  return out.join('\n\n')
}

/** A node's source without inline JSX tags and expressions, its continuation lines dedented. */
function renderNode(node: MdNode, src: string): string {
  const start = node.position?.start.offset ?? 0
  const end = node.position?.end.offset ?? start
  const cuts: [number, number][] = []
  const visit = (n: MdNode) => {
    const s = n.position?.start.offset
    const e = n.position?.end.offset
    if (s === undefined || e === undefined) return
    if (n.type === 'mdxTextExpression' || n.type === 'mdxFlowExpression' || n.type === 'mdxjsEsm') {
      cuts.push([s, e])
      return
    }
    if (n.type === 'mdxJsxTextElement' || n.type === 'mdxJsxFlowElement') {
      const kids = n.children ?? []
      const first = kids[0]?.position?.start.offset
      const last = kids[kids.length - 1]?.position?.end.offset
      if (first === undefined || last === undefined) cuts.push([s, e])
      else {
        cuts.push([s, first], [last, e])
        kids.forEach(visit)
      }
      return
    }
    n.children?.forEach(visit)
  }
  node.children?.forEach(visit)
  cuts.sort((a, b) => a[0] - b[0])
  let text = ''
  let pos = start
  for (const [s, e] of cuts) {
    if (s < pos) continue
    text += src.slice(pos, s)
    pos = e
  }
  text += src.slice(pos, end)
  const indent = (node.position?.start.column ?? 1) - 1
  if (indent > 0) text = text.replace(new RegExp(`\\n[ \\t]{0,${indent}}`, 'g'), '\n')
  return text
}

/** The fallback: ESM statements, expression comments and tag-only lines removed, fences respected. */
export function stripMdxByLines(text: string): string {
  const out: string[] = []
  let fence: string | null = null
  let inEsm = false
  let inTag = false
  for (const line of text.split('\n')) {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fence) {
      out.push(line)
      if (f && f[1]![0] === fence[0] && /^ {0,3}[`~]+\s*$/.test(line)) fence = null
      continue
    }
    if (f) {
      fence = f[1]!
      out.push(line)
      continue
    }
    if (inEsm) {
      if (/^\s*$/.test(line)) inEsm = false
      continue
    }
    if (inTag) {
      if (/>\s*$/.test(line)) inTag = false
      continue
    }
    if (/^(?:import|export)\s/.test(line)) {
      inEsm = !/;\s*$/.test(line) && !/^import\s.*from\s+['"][^'"]+['"]\s*$/.test(line)
      continue
    }
    if (/^\s*\{\/\*[\s\S]*\*\/\}\s*$/.test(line)) continue
    if (/^\s*<\/?[A-Z][\w.]*(?:\s[^>]*)?\/?>\s*$/.test(line) || /^\s*<\/?[a-z][\w-]*(?:\s[^>]*)?\/?>\s*$/.test(line)) continue
    if (/^\s*<[A-Za-z][\w.]*(?:\s[^>]*)?$/.test(line)) {
      inTag = true // a tag whose attributes continue on the next lines
      continue
    }
    out.push(withoutMdxComments(withoutJsxTags(line)))
  }
  return out.join('\n')
}
