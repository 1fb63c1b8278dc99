/**
 * Deterministic generated corpora for bench/ingest.ts: markdown, PDF (written by hand, one content stream
 * per page, so thousands of pages cost nothing to make) and docx (the `docx` package).
 */
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx'

const WORDS = (
  'account access agent alert api backup billing browser cache cancel certificate channel cluster config ' +
  'connect contract customer dashboard database deploy device domain download email endpoint error export ' +
  'feature firewall folder gateway guide host import install integration invoice key license limit login ' +
  'metric migration monitor network notification order password payment permission plan policy port ' +
  'privacy profile proxy quota refund region release report request restore role router schedule secret ' +
  'server session setting storage subscription support sync team template tenant token upgrade upload user ' +
  'version webhook window workflow workspace'
).split(' ')

/** A tiny deterministic PRNG, so every run benches the same bytes. */
export function rng(seed: number) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 4294967296
  }
}

export function sentence(r: () => number, words = 14): string {
  const out: string[] = []
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]!)
  const s = out.join(' ')
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`
}

const paragraph = (r: () => number, sentences = 5) => Array.from({ length: sentences }, () => sentence(r, 10 + Math.floor(r() * 10))).join(' ')

/** Markdown of about `bytes` bytes: sections, subsections, paragraphs, lists, code and tables. */
export function markdownDoc(bytes: number, seed: number, marker = ''): string {
  const r = rng(seed)
  const parts: string[] = [`# Product manual ${seed}${marker ? ` ${marker}` : ''}`, paragraph(r)]
  let size = parts.join('\n\n').length
  let s = 0
  while (size < bytes) {
    s++
    const block = [`## Section ${s}: ${sentence(r, 3).slice(0, -1)}`, paragraph(r), `### Details ${s}`, paragraph(r, 7)]
    if (s % 3 === 0) block.push(Array.from({ length: 5 }, () => `- ${sentence(r, 6)}`).join('\n'))
    if (s % 4 === 0)
      block.push('```bash\n' + Array.from({ length: 6 }, (_, i) => `scb ${WORDS[(s + i) % WORDS.length]} --id ${s * 10 + i}`).join('\n') + '\n```')
    if (s % 5 === 0)
      block.push(
        '| Setting | Default | Meaning |\n|---|---|---|\n' + Array.from({ length: 6 }, (_, i) => `| opt_${s}_${i} | ${i * 5} | ${sentence(r, 5)} |`).join('\n'),
      )
    const text = block.join('\n\n')
    parts.push(text)
    size += text.length + 2
  }
  return parts.join('\n\n')
}

const pdfEscape = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`)

/** A PDF with `pages` pages of distinct text: a 16 pt heading and 40 lines of 10 pt body per page. */
export function pdfDoc(pages: number, seed: number): Buffer {
  const r = rng(seed)
  const objects: string[] = ['<< /Type /Catalog /Pages 2 0 R >>', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>']
  const kids: string[] = []
  for (let p = 0; p < pages; p++) {
    const lines = [`BT /F1 16 Tf 50 800 Td (${pdfEscape(`Chapter ${p + 1}: ${sentence(r, 3)}`)}) Tj ET`]
    for (let i = 0; i < 40; i++) lines.push(`BT /F1 10 Tf 50 ${770 - i * 18} Td (${pdfEscape(sentence(r, 12))}) Tj ET`)
    const stream = lines.join('\n')
    const contentId = objects.length + 1
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`)
    const pageId = objects.length + 1
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentId} 0 R >>`)
    kids.push(`${pageId} 0 R`)
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`
  let out = '%PDF-1.4\n'
  const offsets: number[] = []
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'))
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = Buffer.byteLength(out, 'latin1')
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}

/** A Word document with `sections` headed sections of paragraphs, a list and a table each. */
export async function docxDoc(sections: number, seed: number): Promise<Buffer> {
  const r = rng(seed)
  const children: (Paragraph | Table)[] = [new Paragraph({ text: `Handbook ${seed}`, heading: HeadingLevel.TITLE })]
  for (let s = 1; s <= sections; s++) {
    children.push(new Paragraph({ text: `Section ${s}: ${sentence(r, 3)}`, heading: HeadingLevel.HEADING_1 }))
    for (let p = 0; p < 4; p++) children.push(new Paragraph(paragraph(r)))
    children.push(new Paragraph({ text: `Details ${s}`, heading: HeadingLevel.HEADING_2 }))
    for (let i = 0; i < 3; i++) children.push(new Paragraph({ text: sentence(r, 8), bullet: { level: 0 } }))
    children.push(
      new Table({
        rows: Array.from(
          { length: 4 },
          (_, i) =>
            new TableRow({
              children: [new TableCell({ children: [new Paragraph(`key ${s}.${i}`)] }), new TableCell({ children: [new Paragraph(sentence(r, 5))] })],
            }),
        ),
      }),
    )
  }
  return Packer.toBuffer(new Document({ sections: [{ children }] }))
}
