import WordExtractor from 'word-extractor'
import { ParseFailure } from './errors.js'
import { cleanText } from './text.fns.js'

/**
 * Legacy Word 97-2003 (.doc, OLE compound file). The binary format keeps no reliable heading markup, so
 * the body comes back as paragraphs (one per Word paragraph), followed by footnotes and endnotes.
 */
export async function parseDoc(bytes: Uint8Array): Promise<{ text: string; title: string | null }> {
  let doc: WordExtractor.Document
  try {
    doc = await new WordExtractor().extract(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  } catch {
    throw new ParseFailure('The Word 97-2003 document could not be read (damaged, encrypted or not a Word file)')
  }
  const paragraphs = (s: string) =>
    cleanText(s)
      .split(/\n+/)
      .map((p) => p.replace(/[ \t]+/g, ' ').trim())
      .filter(Boolean)
      .join('\n\n')
  const body = paragraphs(doc.getBody())
  const notes = [doc.getFootnotes(), doc.getEndnotes()].map(paragraphs).filter(Boolean)
  const text = [body, ...(notes.length ? ['## Notes', ...notes] : [])].filter(Boolean).join('\n\n')
  const firstLine = body.split('\n')[0]?.trim() ?? ''
  return { text, title: firstLine && firstLine.length <= 120 ? firstLine : null }
}
