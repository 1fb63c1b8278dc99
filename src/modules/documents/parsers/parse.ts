import { publicAddress } from './public-address.fns.js'
import type { DocumentFileType } from '../../../db/schema/ingestion.js'
import { parseDoc } from './doc.js'
import { parseDocx } from './docx.js'
import { extractHtml } from './html-extract.js'
import { ParseFailure, UnsupportedFile } from './errors.js'
import { normalizeMarkdown, normalizeMdx } from './markdown.js'
import { parsePdf } from './pdf.js'
import { sniffUpload } from './sniff.fns.js'
import { isOpenApi, parseJsonText, parseYamlText, renderStructured, StructuredParseError } from './structured.fns.js'
import { cleanText, decodeText } from './text.fns.js'

// in a module of their own, so the service's wiring reads them without loading every parser (a faster start)
export { DEFAULT_PARSE_LIMITS, type ParseLimits } from './limits.js'
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from './limits.js'

export interface ParsedUpload {
  fileType: Exclude<DocumentFileType, 'url'>
  /** Markdown: headings as `#`, code fenced, tables as pipe tables. */
  text: string
  title: string | null
  /** The public address the file names for itself (front matter or canonical link), for citations; null for none. */
  url?: string | null
}

const stem = (filename: string) => filename.replace(/\.[^.]+$/, '').trim() || null

/**
 * Any accepted upload to markdown. Throws UnsupportedFile (400) or ParseFailure (422) with a message for
 * the user; anything else escaping from a parser library is also reported as a ParseFailure by the caller.
 */
export async function parseUpload(filename: string, bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): Promise<ParsedUpload> {
  const sniff = sniffUpload(filename, bytes)
  if (!sniff.ok) throw sniff.status === 400 ? new UnsupportedFile(sniff.message) : new ParseFailure(sniff.message)
  let result: ParsedUpload
  switch (sniff.kind) {
    case 'pdf': {
      const r = await parsePdf(bytes, { maxPages: limits.pdfMaxPages, maxInflatedBytes: limits.pdfMaxInflatedBytes })
      result = { fileType: 'pdf', text: r.text, title: r.title }
      break
    }
    case 'docx': {
      const r = await parseDocx(bytes, { maxEntries: limits.zipMaxEntries, maxXmlBytes: limits.zipMaxXmlBytes })
      result = { fileType: 'docx', ...r }
      break
    }
    case 'doc':
      result = { fileType: 'doc', ...(await parseDoc(bytes)) }
      break
    case 'markdown': {
      const raw = decodeText(bytes)
      result = { fileType: 'markdown', ...normalizeMarkdown(raw), url: publicAddress(raw) }
      break
    }
    case 'mdx': {
      const raw = decodeText(bytes)
      result = { fileType: 'markdown', ...normalizeMdx(raw), url: publicAddress(raw) }
      break
    }
    case 'html': {
      // the crawler's extraction (main content, title); its canonical link, when absolute, is its public address
      const raw = decodeText(bytes)
      const page = extractHtml(raw, 'https://upload.invalid/')
      result = { fileType: 'markdown', text: page.markdown, title: page.title, url: publicAddress(raw) }
      break
    }
    case 'plaintext': {
      const raw = decodeText(bytes)
      result = { fileType: 'plaintext', text: raw, title: null, url: publicAddress(raw) }
      break
    }
    case 'json':
    case 'yaml': {
      const raw = decodeText(bytes)
      try {
        const docs = sniff.kind === 'json' ? [parseJsonText(raw)] : parseYamlText(raw)
        const r = renderStructured(docs, stem(filename))
        const swagger = docs.length === 1 && isOpenApi(docs[0]!)
        result = { fileType: swagger ? 'swagger' : sniff.kind, text: cleanText(r.text), title: r.title }
      } catch (err) {
        if (err instanceof StructuredParseError) throw new ParseFailure(err.message)
        throw err
      }
      break
    }
  }
  if (!result.text.trim()) throw new ParseFailure('The file contains no readable text (a scanned or image-only document?)')
  return { ...result, title: result.title?.trim() || stem(filename) }
}
