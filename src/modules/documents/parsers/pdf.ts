import { getDocumentProxy } from 'unpdf'
import { ParseFailure } from './errors.js'
import { checkPdfInflation } from './pdf-inflate.js'
import { cleanText } from './text.fns.js'

/** What PDF.js gives per text run; only the fields we read. */
interface TextItem {
  str: string
  transform: number[]
  height: number
  hasEOL?: boolean
}

interface Line {
  text: string
  size: number
  y: number
}

export interface PdfLimits {
  maxPages: number
  /** Total size the file's Flate streams may inflate to (see checkPdfInflation). */
  maxInflatedBytes: number
}

/**
 * PDF text with its structure guessed from the layout: lines of a larger font than the body become
 * headings, a vertical gap starts a paragraph, hyphenated line ends are joined, and lines repeated at the
 * top or bottom of most pages (running headers, page numbers) are dropped.
 */
export async function parsePdf(bytes: Uint8Array, limits: PdfLimits): Promise<{ text: string; title: string | null; pages: number }> {
  // before PDF.js, which would inflate a decompression bomb whole and hold the parser for a minute
  await checkPdfInflation(bytes, limits.maxInflatedBytes)
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), {
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      verbosity: 0,
      stopAtErrors: false,
    })
  } catch (err) {
    throw pdfFailure(err)
  }
  try {
    if (pdf.numPages > limits.maxPages) throw new ParseFailure(`The PDF has ${pdf.numPages} pages; at most ${limits.maxPages} are accepted`)
    const pages: Line[][] = []
    for (let p = 1; p <= pdf.numPages; p++) {
      const page = await pdf.getPage(p)
      const content = await page.getTextContent({ includeMarkedContent: false })
      pages.push(toLines(content.items as TextItem[]))
      page.cleanup()
    }
    let title: string | null = null
    try {
      const meta = await pdf.getMetadata()
      const t = (meta.info as { Title?: unknown } | undefined)?.Title
      if (typeof t === 'string' && t.trim() && !/^(untitled|microsoft word)/i.test(t.trim())) title = t.trim().slice(0, 300)
    } catch {
      // metadata is optional
    }
    return { text: renderPages(pages), title, pages: pdf.numPages }
  } catch (err) {
    throw pdfFailure(err)
  } finally {
    await pdf.destroy().catch(() => {})
  }
}

function pdfFailure(err: unknown): ParseFailure {
  if (err instanceof ParseFailure) return err
  const name = (err as { name?: string })?.name
  if (name === 'PasswordException') return new ParseFailure('The PDF is encrypted (password-protected); upload an unprotected copy')
  if (name === 'InvalidPDFException') return new ParseFailure('The file is not a valid PDF')
  return new ParseFailure('The PDF could not be read (damaged or unsupported)')
}

function toLines(items: TextItem[]): Line[] {
  const lines: Line[] = []
  let text = ''
  let size = 0
  let y: number | null = null
  const push = () => {
    const t = text.replace(/\s+/g, ' ').trim()
    if (t) lines.push({ text: t, size, y: y ?? 0 })
    text = ''
    size = 0
    y = null
  }
  for (const it of items) {
    if (typeof it.str !== 'string') continue
    const itemY = it.transform?.[5] ?? 0
    const itemSize = Math.abs(it.height || Math.hypot(it.transform?.[2] ?? 0, it.transform?.[3] ?? 0))
    if (y !== null && Math.abs(itemY - y) > Math.max(2, itemSize * 0.5) && text.trim()) push()
    if (y === null) y = itemY
    text += it.str
    if (it.str.trim()) size = Math.max(size, itemSize)
    if (it.hasEOL) push()
  }
  push()
  return lines
}

const normalizeForRepeat = (s: string) => s.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim()

function renderPages(pages: Line[][]): string {
  // the body font size: the size most characters are set in
  const bySize = new Map<number, number>()
  for (const lines of pages) for (const l of lines) bySize.set(Math.round(l.size), (bySize.get(Math.round(l.size)) ?? 0) + l.text.length)
  let body = 0
  let most = -1
  for (const [s, n] of bySize) if (n > most) [body, most] = [s, n]

  // running headers and footers: the same short first/last lines on most pages (headings excepted)
  const repeated = new Set<string>()
  if (pages.length >= 3) {
    const counts = new Map<string, number>()
    for (const lines of pages) {
      const edge = new Set(
        [...lines.slice(0, 2), ...lines.slice(-2)].filter((l) => l.text.length < 60 && !headingLevel(l, body)).map((l) => normalizeForRepeat(l.text)),
      )
      for (const k of edge) counts.set(k, (counts.get(k) ?? 0) + 1)
    }
    for (const [k, c] of counts) if (c >= Math.max(3, pages.length * 0.5) && k.length < 200) repeated.add(k)
  }

  const out: string[] = []
  let para = ''
  const flush = () => {
    if (para.trim()) out.push(para.trim())
    para = ''
  }
  let lastHeading: { level: number; index: number } | null = null
  for (const lines of pages) {
    let prev: Line | null = null
    for (let edgeIndex = 0; edgeIndex < lines.length; edgeIndex++) {
      const l = lines[edgeIndex]!
      if ((edgeIndex < 2 || edgeIndex >= lines.length - 2) && !headingLevel(l, body) && repeated.has(normalizeForRepeat(l.text))) continue
      const level = headingLevel(l, body)
      if (level) {
        flush()
        // a heading set over several lines is one heading
        if (lastHeading && lastHeading.level === level && out.length - 1 === lastHeading.index && out[lastHeading.index]!.length + l.text.length < 200) {
          out[lastHeading.index] += ` ${l.text}`
        } else {
          out.push(`${'#'.repeat(level)} ${l.text}`)
          lastHeading = { level, index: out.length - 1 }
        }
        prev = null
        continue
      }
      lastHeading = null
      const gap = prev ? Math.abs(prev.y - l.y) : 0
      if (prev && gap > Math.max(l.size, prev.size) * 1.8) flush()
      if (para && /[A-Za-z\u00c0-\u024f]-$/.test(para) && /^[a-z\u00df-\u00ff]/.test(l.text)) para = para.slice(0, -1) + l.text
      else para = para ? `${para}\n${l.text}` : l.text
      prev = l
    }
    flush() // a page break ends a paragraph
  }
  return cleanText(out.join('\n\n'))
}

function headingLevel(l: Line, body: number): number {
  if (body <= 0 || l.text.length > 150 || !/\p{L}/u.test(l.text) || /[.,;:]$/.test(l.text)) return 0
  const ratio = l.size / body
  if (ratio >= 1.6) return 1
  if (ratio >= 1.3) return 2
  if (ratio >= 1.15) return 3
  return 0
}
