import type { ExtractedPage } from '../../parsers/html-extract.js'
import type { CrawlerDeps } from './crawl.types.js'
import { decodeBody, type FetchOutcome } from './fetcher.js'

export type PageContent =
  | { kind: 'content'; title: string | null; markdown: string; links: string[] }
  | { kind: 'noindex'; title: null; markdown: ''; links: string[] }
  | { kind: 'failed'; reason: string }

/**
 * A fetched page's text as Markdown, by its content type: HTML through the documents module's extraction
 * (in its parser threads when the wiring gives them), plain text and Markdown as they are, PDF through the
 * file parser. Anything else is not a page the crawl can index. The extraction module (linkedom, Readability,
 * Turndown: about 0.3 s to load) is imported at the first page, not when the service starts.
 */
export async function pageContent(deps: Pick<CrawlerDeps, 'extractHtml' | 'parseFile'>, res: Extract<FetchOutcome, { kind: 'ok' }>): Promise<PageContent> {
  const type = res.contentType
  if (type === 'text/html' || type === 'application/xhtml+xml' || (type === '' && /^\s*</.test(res.body.subarray(0, 512).toString('latin1')))) {
    let extracted: ExtractedPage
    try {
      const html = decodeBody(res.body, res.charset)
      extracted = deps.extractHtml ? await deps.extractHtml(html, res.url) : (await import('../../parsers/html-extract.js')).extractHtml(html, res.url)
    } catch {
      return { kind: 'failed', reason: 'unreadable HTML (too large or complex to extract)' }
    }
    if (extracted.noindex) return { kind: 'noindex', title: null, markdown: '', links: extracted.links }
    return { kind: 'content', title: extracted.title, markdown: extracted.markdown, links: extracted.links }
  }
  if (type === 'text/plain' || type === 'text/markdown' || type === 'text/x-markdown') {
    const { extractText } = await import('../../parsers/html-extract.js')
    const extracted = extractText(decodeBody(res.body, res.charset), type === 'text/plain' ? 'text/plain' : 'text/markdown')
    return { kind: 'content', title: extracted.title, markdown: extracted.markdown, links: [] }
  }
  if (type === 'application/pdf' && deps.parseFile) {
    try {
      const parsed = await deps.parseFile('page.pdf', res.body)
      return { kind: 'content', title: parsed.title, markdown: parsed.text.trim(), links: [] }
    } catch {
      return { kind: 'failed', reason: 'unreadable PDF' }
    }
  }
  return { kind: 'failed', reason: `not HTML (${type || 'no content type'})` }
}
