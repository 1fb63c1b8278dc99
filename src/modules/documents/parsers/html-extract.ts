import { Readability } from '@mozilla/readability'
import { parseHTML } from 'linkedom'
import TurndownService from 'turndown'
import { trimEndOf, trimLineEnds } from '../../../lib/trim-run.fns.js'

/*
 * HTML extraction has one owner, the documents module: its parser threads (parse-worker.ts) run it for
 * crawled pages, and the crawler (sources/crawler) imports it from here.
 */

export interface ExtractedPage {
  title: string | null
  /** Main content as Markdown, starting with the page title as a "# " heading. */
  markdown: string
  /** Absolute link targets as written in the page (not yet normalised or filtered). */
  links: string[]
  /** <meta name="robots"> asks not to index this page. */
  noindex: boolean
  /** <meta name="robots"> asks not to follow this page's links. */
  nofollow: boolean
}

const DROP = ['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas', 'form', 'button', 'select', 'input', 'textarea']

function createTurndown(): TurndownService {
  const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_', hr: '---' })
  td.remove(DROP as TurndownService.Filter)
  td.addRule('fencedCodeWithLanguage', {
    filter: (node) => node.nodeName === 'PRE',
    replacement: (_content, node) => {
      const el = node as HTMLElement
      const code = el.querySelector('code') ?? el
      const lang = el.getAttribute('data-lang') ?? /(?:^|\s)lang(?:uage)?-([\w+#-]+)/.exec(code.getAttribute('class') ?? '')?.[1] ?? ''
      const text = trimEndOf(code.textContent ?? '', '\n')
      const fence = text.includes('```') ? '~~~~' : '```'
      return `\n\n${fence}${lang}\n${text}\n${fence}\n\n`
    },
  })
  td.addRule('listItem', {
    filter: 'li',
    replacement: (content, node) => {
      const parent = node.parentNode as HTMLElement | null
      let prefix = '- '
      if (parent?.nodeName === 'OL') {
        const start = Number(parent.getAttribute('start') ?? 1) || 1
        const index = Array.prototype.indexOf.call(parent.children, node)
        prefix = `${start + index}. `
      }
      const inner = content.replace(/^\n+/, '')
      const trimmed = trimEndOf(inner, '\n')
      const body = (trimmed.length < inner.length ? `${trimmed}\n` : trimmed).replace(/\n/gm, `\n${' '.repeat(prefix.length)}`)
      return prefix + body.trimEnd() + (node.nextSibling ? '\n' : '')
    },
  })
  td.addRule('table', {
    filter: 'table',
    replacement: (_content, node) => `\n\n${tableToMarkdown(node as HTMLElement, td)}\n\n`,
  })
  return td
}

const cellText = (cell: Element, td: TurndownService): string =>
  td
    .turndown((cell as HTMLElement).innerHTML ?? '')
    .replace(/\s+/g, (run) => (run.includes('\n') ? ' ' : run))
    .trim()
    // Block-level escapes ("\-", "1\.") mean nothing inside a table cell.
    .replace(/^\\([-+#>=])/, '$1')
    .replace(/^(\d+)\\\./, '$1.')
    .replace(/\|/g, '\\|')

function tableToMarkdown(table: HTMLElement, td: TurndownService): string {
  const rows = Array.from(table.querySelectorAll('tr')).map((tr) => Array.from(tr.children).filter((c) => c.nodeName === 'TD' || c.nodeName === 'TH'))
  const grid = rows.filter((r) => r.length > 0).map((r) => r.map((c) => cellText(c, td)))
  if (grid.length === 0) return ''
  const width = Math.max(...grid.map((r) => r.length))
  const pad = (r: string[]) => [...r, ...Array(width - r.length).fill('')]
  const [head, ...body] = grid
  const line = (r: string[]) => `| ${pad(r).join(' | ')} |`
  return [line(head!), `|${' --- |'.repeat(width)}`, ...body.map(line)].join('\n')
}

const turndown = createTurndown()

const clean = (s: string | null | undefined): string | null => {
  const t = (s ?? '').replace(/\s+/g, ' ').trim()
  return t ? t.slice(0, 500) : null
}

/** Collapses runs of blank lines and trailing spaces that HTML whitespace leaves behind. */
export const tidyMarkdown = (md: string): string =>
  trimLineEnds(md)
    .replace(/\n{3,}/g, '\n\n')
    .trim()

/**
 * Turns an HTML page into its title, its main content as Markdown and its links. Links are read before
 * Readability runs, because Readability keeps only the article and navigation is where links live.
 */
export function extractHtml(html: string, pageUrl: string): ExtractedPage {
  const { document } = parseHTML(html)
  const robots = (document.querySelector('meta[name="robots" i]')?.getAttribute('content') ?? '').toLowerCase()
  const noindex = /\b(noindex|none)\b/.test(robots)
  const nofollow = /\b(nofollow|none)\b/.test(robots)

  let base = pageUrl
  const baseHref = document.querySelector('base[href]')?.getAttribute('href')
  if (baseHref) {
    try {
      base = new URL(baseHref, pageUrl).toString()
    } catch {
      /* ignore a broken <base> */
    }
  }
  const links: string[] = []
  if (!nofollow) {
    for (const a of Array.from(document.querySelectorAll('a[href], area[href]'))) {
      const href = a.getAttribute('href')
      if (!href || /^(javascript|mailto|tel|data):/i.test(href.trim())) continue
      try {
        links.push(new URL(href, base).toString())
      } catch {
        /* not a URL */
      }
    }
  }

  const docTitle =
    clean(document.querySelector('meta[property="og:title"]')?.getAttribute('content')) ??
    clean(document.querySelector('title')?.textContent) ??
    clean(document.querySelector('h1')?.textContent)

  // Readability mutates the document; absolute links and images make the Markdown useful on its own.
  for (const a of Array.from(document.querySelectorAll('a[href]'))) {
    try {
      a.setAttribute('href', new URL(a.getAttribute('href')!, base).toString())
    } catch {
      a.removeAttribute('href')
    }
  }
  for (const img of Array.from(document.querySelectorAll('img'))) img.remove()
  // Site chrome is never the answer to a question; Readability keeps it on short pages.
  for (const el of Array.from(document.querySelectorAll('nav, [role="navigation"], body > header, body > footer'))) el.remove()
  // Readability strips class names; keep the code language where the Markdown rule can read it.
  for (const el of Array.from(document.querySelectorAll('pre, pre > code'))) {
    const lang = /(?:^|\s)lang(?:uage)?-([\w+#-]+)/.exec(el.getAttribute('class') ?? '')?.[1]
    if (lang) (el.nodeName === 'PRE' ? el : el.parentElement!).setAttribute('data-lang', lang)
  }

  let content: HTMLElement | null = null
  let title = docTitle
  try {
    const article = new Readability(document as unknown as Document, { serializer: (el) => el }).parse()
    if (article?.content && (article.textContent ?? '').trim().length > 0) {
      content = article.content as unknown as HTMLElement
      title = docTitle ?? clean(article.title)
    }
  } catch {
    content = null
  }
  if (!content) {
    // Too little text for Readability to judge: fall back to the body without its chrome.
    content = (document.body ?? document.documentElement) as unknown as HTMLElement
  }
  let markdown = content ? tidyMarkdown(turndown.turndown(content)) : ''
  if (title) {
    // Readability demotes the page's own <h1> to "##"; drop it when it only repeats the title.
    const first = /^#{1,2} (.+)\n?/.exec(markdown)
    if (first && first[1]!.trim().toLowerCase() === title.toLowerCase()) markdown = markdown.slice(first[0].length).trimStart()
    markdown = markdown ? `# ${title}\n\n${markdown}` : ''
  }
  return { title, markdown, links, noindex, nofollow }
}

/** Plain text and Markdown pages are kept as they are; the title is the first heading when there is one. */
export function extractText(text: string, contentType: 'text/plain' | 'text/markdown'): { title: string | null; markdown: string } {
  const body = text.replace(/\r\n?/g, '\n').trim()
  const heading = contentType === 'text/markdown' ? /^#{1,3}\s+(.+)$/m.exec(body)?.[1] : null
  return { title: clean(heading ?? null), markdown: body }
}
