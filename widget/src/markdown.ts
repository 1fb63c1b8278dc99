/**
 * Safe markdown for answers: the text is parsed into a small tree and rendered with createElement and
 * textContent only. No string is ever handed to innerHTML, so raw HTML in an answer (`<img onerror>`,
 * `<script>`) shows as text, and a link whose address is not http(s), mailto or tel stays plain text.
 *
 * Supported: paragraphs (single newlines kept as line breaks), headings, bullet and numbered lists,
 * block quotes, fenced code, rules, and inline code, bold, italic, strikethrough, links and bare URLs.
 * An unfinished construct (a fence still open while streaming) renders as what it will become.
 */
export type Inline =
  | { t: 'text'; v: string }
  | { t: 'code'; v: string }
  | { t: 'br' }
  | { t: 'strong' | 'em' | 'del'; c: Inline[] }
  | { t: 'link'; href: string; c: Inline[] }

export type Block =
  | { t: 'p'; c: Inline[] }
  | { t: 'h'; level: number; c: Inline[] }
  | { t: 'ul' | 'ol'; items: Inline[][]; start?: number }
  | { t: 'quote'; c: Block[] }
  | { t: 'pre'; v: string }
  | { t: 'hr' }

const SAFE_PROTOCOLS = ['http:', 'https:', 'mailto:', 'tel:']

/** An absolute http(s)/mailto/tel address, normalised; null for anything else (javascript:, data:, relative). */
export function safeUrl(raw: string): string | null {
  // Browsers ignore tabs, newlines and leading control characters in URLs: "java\nscript:" is javascript:.
  const cleaned = raw.replace(/[\u0000-\u0020\u007f-\u009f]/g, '')
  if (!cleaned) return null
  let url: URL
  try {
    url = new URL(cleaned)
  } catch {
    return null
  }
  return SAFE_PROTOCOLS.includes(url.protocol) ? url.href : null
}

const LIST_RE = /^\s{0,3}(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/
const HEADING_RE = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/
const FENCE_RE = /^\s{0,3}(```+|~~~+)/
const HR_RE = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/
const QUOTE_RE = /^\s{0,3}>\s?(.*)$/

export function parseMarkdown(src: string, depth = 0): Block[] {
  const lines = src.replace(/\r\n?/g, '\n').split('\n')
  const blocks: Block[] = []
  let para: string[] = []
  const flush = () => {
    if (para.length) blocks.push({ t: 'p', c: parseInline(para.join('\n')) })
    para = []
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const fence = FENCE_RE.exec(line)
    if (fence) {
      flush()
      const code: string[] = []
      const marker = fence[1]!
      while (++i < lines.length && !lines[i]!.trim().startsWith(marker)) code.push(lines[i]!)
      blocks.push({ t: 'pre', v: code.join('\n') })
      continue
    }
    if (!line.trim()) {
      flush()
      continue
    }
    const heading = HEADING_RE.exec(line)
    if (heading) {
      flush()
      blocks.push({ t: 'h', level: heading[1]!.length, c: parseInline(heading[2]!) })
      continue
    }
    if (HR_RE.test(line)) {
      flush()
      blocks.push({ t: 'hr' })
      continue
    }
    if (QUOTE_RE.test(line) && depth < 3) {
      flush()
      const inner: string[] = []
      while (i < lines.length && QUOTE_RE.test(lines[i]!)) inner.push(QUOTE_RE.exec(lines[i++]!)![1]!)
      i--
      blocks.push({ t: 'quote', c: parseMarkdown(inner.join('\n'), depth + 1) })
      continue
    }
    const item = LIST_RE.exec(line)
    if (item) {
      flush()
      const ordered = item[2] !== undefined
      const list: Block = ordered ? { t: 'ol', items: [], start: Number(item[2]) } : { t: 'ul', items: [] }
      let current: string[] = []
      for (; i < lines.length; i++) {
        const l = lines[i]!
        const m = LIST_RE.exec(l)
        if (m && (m[2] !== undefined) === ordered) {
          if (current.length) list.items.push(parseInline(current.join('\n')))
          current = [m[3]!]
        } else if (l.trim() && /^\s+/.test(l) && current.length) {
          current.push(l.trim()) // continuation of the item
        } else break
      }
      if (current.length) list.items.push(parseInline(current.join('\n')))
      i--
      blocks.push(list)
      continue
    }
    para.push(line)
  }
  flush()
  return blocks
}

const BARE_URL_RE = /^(?:https?:\/\/|mailto:)[^\s<>"'`]+/i

/** Inline spans. Delimiters that never close are kept as text. */
export function parseInline(src: string): Inline[] {
  const out: Inline[] = []
  let text = ''
  const pushText = () => {
    if (text) out.push({ t: 'text', v: text })
    text = ''
  }
  let i = 0
  while (i < src.length) {
    const ch = src[i]!
    const rest = src.slice(i)
    if (ch === '\\' && i + 1 < src.length && /[\\`*_~[\]()#>!-]/.test(src[i + 1]!)) {
      text += src[i + 1]
      i += 2
      continue
    }
    if (ch === '\n') {
      pushText()
      out.push({ t: 'br' })
      i++
      continue
    }
    if (ch === '`') {
      const ticks = /^`+/.exec(rest)![0]
      const close = src.indexOf(ticks, i + ticks.length)
      if (close !== -1) {
        pushText()
        out.push({ t: 'code', v: src.slice(i + ticks.length, close).trim() || src.slice(i + ticks.length, close) })
        i = close + ticks.length
        continue
      }
    }
    if (ch === '[') {
      const link = /^\[((?:[^[\]\\]|\\.){1,500})\]\(\s*<?([^\s()<>]{1,2048})>?(?:\s+"[^"]*")?\s*\)/.exec(rest)
      if (link) {
        const href = safeUrl(link[2]!)
        pushText()
        const children = parseInline(link[1]!)
        if (href) out.push({ t: 'link', href, c: children })
        else out.push(...children)
        i += link[0].length
        continue
      }
    }
    if (ch === '<') {
      const auto = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(rest)
      const href = auto && safeUrl(auto[1]!)
      if (auto && href) {
        pushText()
        out.push({ t: 'link', href, c: [{ t: 'text', v: auto[1]! }] })
        i += auto[0].length
        continue
      }
    }
    if ((ch === 'h' || ch === 'H' || ch === 'm' || ch === 'M') && !/[A-Za-z0-9]$/.test(text)) {
      const bare = BARE_URL_RE.exec(rest)
      if (bare) {
        // Trailing punctuation ends a sentence, not the address.
        let raw = bare[0].replace(/[.,;:!?]+$/, '')
        if (raw.endsWith(')') && !raw.includes('(')) raw = raw.slice(0, -1)
        const href = safeUrl(raw)
        if (href) {
          pushText()
          out.push({ t: 'link', href, c: [{ t: 'text', v: raw }] })
          i += raw.length
          continue
        }
      }
    }
    const delim = /^(\*\*|__|~~|\*|_)/.exec(rest)
    if (delim) {
      const d = delim[1]!
      const prev = i > 0 ? src[i - 1]! : ' '
      // Underscores inside words (snake_case) are not emphasis.
      const opens = !/\s/.test(src[i + d.length] ?? ' ') && !(d[0] === '_' && /[A-Za-z0-9]/.test(prev))
      if (opens) {
        let close = src.indexOf(d, i + d.length + 1)
        while (close !== -1 && (/\s/.test(src[close - 1]!) || (d === '*' && src[close + 1] === '*' && src[close - 1] !== '*'))) {
          close = src.indexOf(d, close + 1)
        }
        if (close !== -1) {
          pushText()
          const kind = d === '~~' ? 'del' : d.length === 2 ? 'strong' : 'em'
          out.push({ t: kind, c: parseInline(src.slice(i + d.length, close)) })
          i = close + d.length
          continue
        }
      }
      text += d
      i += d.length
      continue
    }
    text += ch
    i++
  }
  pushText()
  return out
}

function renderInline(doc: Document, nodes: Inline[], parent: Node): void {
  for (const n of nodes) {
    if (n.t === 'text') parent.appendChild(doc.createTextNode(n.v))
    else if (n.t === 'br') parent.appendChild(doc.createElement('br'))
    else if (n.t === 'code') {
      const el = doc.createElement('code')
      el.textContent = n.v
      parent.appendChild(el)
    } else if (n.t === 'link') {
      const a = doc.createElement('a')
      a.setAttribute('href', n.href)
      a.setAttribute('target', '_blank')
      a.setAttribute('rel', 'noopener noreferrer nofollow')
      renderInline(doc, n.c, a)
      parent.appendChild(a)
    } else {
      const el = doc.createElement(n.t)
      renderInline(doc, n.c, el)
      parent.appendChild(el)
    }
  }
}

function renderBlocks(doc: Document, blocks: Block[], parent: Node): void {
  for (const b of blocks) {
    let el: HTMLElement
    switch (b.t) {
      case 'p':
        el = doc.createElement('p')
        renderInline(doc, b.c, el)
        break
      case 'h':
        // Headings inside a chat bubble stay small: h1/h2 -> h3, the rest -> h4.
        el = doc.createElement(b.level <= 2 ? 'h3' : 'h4')
        renderInline(doc, b.c, el)
        break
      case 'ul':
      case 'ol':
        el = doc.createElement(b.t)
        if (b.t === 'ol' && b.start !== undefined && b.start !== 1) el.setAttribute('start', String(b.start))
        for (const item of b.items) {
          const li = doc.createElement('li')
          renderInline(doc, item, li)
          el.appendChild(li)
        }
        break
      case 'quote':
        el = doc.createElement('blockquote')
        renderBlocks(doc, b.c, el)
        break
      case 'pre': {
        el = doc.createElement('pre')
        const code = doc.createElement('code')
        code.textContent = b.v
        el.appendChild(code)
        break
      }
      case 'hr':
        el = doc.createElement('hr')
        break
    }
    parent.appendChild(el)
  }
}

/** Renders markdown into a fragment of the given document (the widget's, or a test's DOM). */
export function renderMarkdown(src: string, doc: Document = document): DocumentFragment {
  const frag = doc.createDocumentFragment()
  renderBlocks(doc, parseMarkdown(src), frag)
  return frag
}
