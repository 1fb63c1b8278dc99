import type { DocumentFileType } from '../../db/schema/ingestion.js'
import { atxOf, fenceOf, linkLabels, withoutTags, withoutTrailingAttributes } from '../../lib/markup-scan.fns.js'
import { regconfigFor, type Regconfig } from './language.fns.js'

/**
 * Structure-aware chunking of the markdown every parser produces (headings as `#`, code fenced, tables as
 * pipe tables). A chunk is a few hundred tokens of one section or of several small neighbouring ones; it
 * remembers the headings above it. Paragraphs, lists, tables and code blocks stay whole while they fit;
 * larger ones are split at sentence, item, row or line boundaries (a split table repeats its header, a
 * split code block keeps its fence). Consecutive chunks of one section overlap by a sentence or two.
 *
 * Pure and linear in the input, so the retrieval evaluation can call it directly on any text.
 */

export interface ChunkOptions {
  /** Aim for chunks of about this many tokens (estimated). */
  targetTokens?: number
  /** A block (code, table, list, paragraph) up to this size is kept whole even past the target. */
  maxTokens?: number
  /** A section smaller than this is merged with the next one instead of standing alone. */
  minTokens?: number
  /** Tokens of the previous chunk repeated at the start of the next one of the same section. */
  overlapTokens?: number
  /** Headings at this level or above always start a new chunk (1 = only `#`). */
  hardSplitLevel?: number
  sourceUrl?: string | null
  /** Stop once more chunks than this exist (the caller refuses the document), so a 50,000-section file costs little. */
  maxChunks?: number
  /** The document's language for chunks without a clear signal (code, tables); detected when absent. */
  lang?: Regconfig
}

export interface Chunk {
  ordinal: number
  content: string
  sectionTitle: string | null
  /** Headings above the chunk joined with " > ", e.g. "Guide > Install > Linux". */
  headingPath: string | null
  sourceUrl: string | null
  tokenCount: number
  lang: Regconfig
}

export const DEFAULT_CHUNK_OPTIONS = {
  targetTokens: 400,
  maxTokens: 600,
  minTokens: 100,
  overlapTokens: 40,
  hardSplitLevel: 1,
} as const

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]/g
const NON_LATIN = /[^\u0000-\u024f]/

/**
 * Token estimate without a tokenizer: about four characters a token for alphabetic scripts, one per
 * CJK character. Within ~20% of the usual BPE tokenizers for prose, which is all chunk sizing needs.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0
  let cjk = 0
  if (NON_LATIN.test(text)) cjk = text.match(CJK)?.length ?? 0
  return Math.max(1, Math.ceil((text.length - cjk) / 4) + cjk)
}

// ---------------------------------------------------------------------------------------------------
// Block scanning

type BlockType = 'heading' | 'paragraph' | 'list' | 'code' | 'table' | 'quote'

export interface Block {
  type: BlockType
  text: string
  /** Heading level 1..6 (headings only). */
  level?: number
  /** Heading text without markup (headings only). */
  title?: string
}

// a fence line and an ATX heading are read by scans (lib/markup-scan.fns.ts): their patterns were quadratic on a long line
const FENCE = { exec: fenceOf, test: (l: string) => fenceOf(l) !== null }
const ATX = { exec: atxOf, test: (l: string) => atxOf(l) !== null }
const SETEXT_H1 = /^ {0,3}=+[ \t]*$/
const SETEXT_H2 = /^ {0,3}-+[ \t]*$/
const THEMATIC = /^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/
const LIST_ITEM = /^( {0,3})(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)/
// the same rows as `^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$`, regrouped so no two blank runs meet (linear)
const TABLE_DELIM = /^ {0,3}\|?[ \t]*:?-+:?(?:[ \t]*\|[ \t]*:?-+:?)*(?:[ \t]*\|)?[ \t]*$/
const QUOTE = /^ {0,3}>/
const BLANK = /^[ \t]*$/

/** Heading text as a reader sees it: emphasis, code ticks, links and images reduced to their words. */
/**
 * A heading's attribute block at its end, as kramdown, Pandoc and MkDocs write anchors and classes
 * ("## Is it available outside the U.S.? {#pir-outside-us}", "{: .note}"): markup, not part of the title a
 * citation shows. It, images, links and tags go by scans (lib/markup-scan.fns.ts), linear on any line.
 */
export function plainHeading(raw: string): string {
  return withoutTags(linkLabels(linkLabels(withoutTrailingAttributes(raw), true), false))
    .replace(/[*_`~]+/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300)
}

const isTableRow = (line: string) => line.includes('|') && !BLANK.test(line)

/** Splits markdown into blocks in one pass over its lines. */
export function scanBlocks(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n')
  const blocks: Block[] = []
  let i = 0
  const n = lines.length
  while (i < n) {
    const line = lines[i]!
    if (BLANK.test(line)) {
      i++
      continue
    }
    const fence = FENCE.exec(line)
    if (fence && !(fence[0][0] === '`' && fence[1].includes('`'))) {
      const marker = fence[0]
      const close = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`)
      let j = i + 1
      while (j < n && !close.test(lines[j]!)) j++
      const body = lines.slice(i, Math.min(j + 1, n))
      if (j >= n) body.push(marker) // unterminated fence: close it so every chunk stays valid markdown
      blocks.push({ type: 'code', text: body.join('\n') })
      i = j + 1
      continue
    }
    const atx = ATX.exec(line)
    if (atx) {
      const title = plainHeading(atx[1] ?? '')
      if (title) blocks.push({ type: 'heading', level: atx[0].length, title, text: `${atx[0]} ${title}` })
      i++
      continue
    }
    if (THEMATIC.test(line)) {
      i++
      continue
    }
    if (QUOTE.test(line)) {
      let j = i
      while (j < n && !BLANK.test(lines[j]!) && (QUOTE.test(lines[j]!) || j > i)) j++
      blocks.push({ type: 'quote', text: lines.slice(i, j).join('\n') })
      i = j
      continue
    }
    if (isTableRow(line) && i + 1 < n && TABLE_DELIM.test(lines[i + 1]!) && lines[i + 1]!.includes('-')) {
      let j = i + 2
      while (j < n && isTableRow(lines[j]!)) j++
      blocks.push({ type: 'table', text: lines.slice(i, j).join('\n') })
      i = j
      continue
    }
    if (LIST_ITEM.test(line)) {
      let j = i + 1
      while (j < n) {
        const l = lines[j]!
        if (BLANK.test(l)) {
          // a blank line continues the list only if an item or an indented continuation follows
          let k = j + 1
          while (k < n && BLANK.test(lines[k]!)) k++
          if (k < n && (LIST_ITEM.test(lines[k]!) || /^(?: {2,}|\t)/.test(lines[k]!))) {
            j = k
            continue
          }
          break
        }
        if (ATX.test(l) || (FENCE.test(l) && !/^(?: {2,}|\t)/.test(l))) break
        j++
      }
      blocks.push({ type: 'list', text: trimBlankEnd(lines.slice(i, j)).join('\n') })
      i = j
      continue
    }
    // paragraph: up to a blank line or the start of another kind of block
    let j = i + 1
    while (j < n) {
      const l = lines[j]!
      if (BLANK.test(l) || ATX.test(l) || FENCE.test(l) || QUOTE.test(l)) break
      if (j === i + 1 && (SETEXT_H1.test(l) || SETEXT_H2.test(l))) break
      if (LIST_ITEM.test(l) && /^\s{0,3}[-*+]\s/.test(l)) break
      if (isTableRow(l) && j + 1 < n && TABLE_DELIM.test(lines[j + 1]!)) break
      j++
    }
    if (j === i + 1 && j < n && (SETEXT_H1.test(lines[j]!) || (SETEXT_H2.test(lines[j]!) && !THEMATIC.test(line)))) {
      const title = plainHeading(line)
      const level = SETEXT_H1.test(lines[j]!) ? 1 : 2
      if (title) blocks.push({ type: 'heading', level, title, text: `${'#'.repeat(level)} ${title}` })
      i = j + 1
      continue
    }
    blocks.push({ type: 'paragraph', text: lines.slice(i, j).join('\n') })
    i = j
  }
  return blocks
}

function trimBlankEnd(lines: string[]): string[] {
  let end = lines.length
  while (end > 0 && BLANK.test(lines[end - 1]!)) end--
  return lines.slice(0, end)
}

// ---------------------------------------------------------------------------------------------------
// Splitting blocks that are too large

interface Piece {
  text: string
  tokens: number
  /** Prose can lend its tail as overlap; code and tables cannot. */
  prose: boolean
}

const piece = (text: string, prose: boolean): Piece => ({ text, tokens: estimateTokens(text), prose })

/** Packs units (already each <= limit where possible) into groups of at most `limit` tokens. */
function pack(units: string[], limit: number, joiner: string, wrap: (s: string) => string = (s) => s, prose = true): Piece[] {
  const out: Piece[] = []
  let cur: string[] = []
  let curTokens = 0
  for (const u of units) {
    const t = estimateTokens(u)
    if (cur.length > 0 && curTokens + t > limit) {
      out.push(piece(wrap(cur.join(joiner)), prose))
      cur = []
      curTokens = 0
    }
    cur.push(u)
    curTokens += t
  }
  if (cur.length) out.push(piece(wrap(cur.join(joiner)), prose))
  return out
}

const SENTENCE_END = /(?<=[.!?。！？…])[)"'»”’]*\s+(?=\S)/u

export function splitSentences(text: string): string[] {
  return text.split(SENTENCE_END).filter((s) => s.trim().length > 0)
}

/** Last resort: words, then characters (a base64 blob has no words). */
function hardSplit(text: string, limit: number): string[] {
  const maxChars = Math.max(16, limit * 4)
  const words = text.split(/(?<=\s)/)
  const out: string[] = []
  let cur = ''
  for (const w of words) {
    if (w.length > maxChars) {
      if (cur) out.push(cur)
      cur = ''
      for (let k = 0; k < w.length; k += maxChars) out.push(w.slice(k, k + maxChars))
      continue
    }
    if (cur.length + w.length > maxChars) {
      out.push(cur)
      cur = ''
    }
    cur += w
  }
  if (cur.trim()) out.push(cur)
  return out.map((s) => s.trim()).filter(Boolean)
}

function splitProse(text: string, limit: number): string[] {
  const units: string[] = []
  for (const s of splitSentences(text)) {
    if (estimateTokens(s) <= limit) units.push(s)
    else units.push(...hardSplit(s, limit))
  }
  return units
}

function splitBlock(block: Block, limit: number): Piece[] {
  switch (block.type) {
    case 'code': {
      const lines = block.text.split('\n')
      const open = lines[0]!
      const close = lines[lines.length - 1]!
      const body: string[] = []
      for (const l of lines.slice(1, -1)) {
        if (estimateTokens(l) <= limit) body.push(l)
        else body.push(...hardSplit(l, limit))
      }
      return pack(body, limit, '\n', (s) => `${open}\n${s}\n${close}`, false)
    }
    case 'table': {
      const lines = block.text.split('\n')
      const head = `${lines[0]}\n${lines[1]}`
      const rows: string[] = []
      for (const r of lines.slice(2)) {
        if (estimateTokens(r) <= limit) rows.push(r)
        else rows.push(...hardSplit(r, limit))
      }
      const budget = Math.max(20, limit - estimateTokens(head))
      return pack(rows, budget, '\n', (s) => `${head}\n${s}`, false)
    }
    case 'list': {
      const lines = block.text.split('\n')
      const indent = LIST_ITEM.exec(lines[0]!)?.[1]?.length ?? 0
      const items: string[] = []
      for (const l of lines) {
        const m = LIST_ITEM.exec(l)
        if (m && m[1]!.length <= indent) items.push(l)
        else if (items.length) items[items.length - 1] += `\n${l}`
        else items.push(l)
      }
      const units: string[] = []
      for (const it of items) {
        if (estimateTokens(it) <= limit) units.push(it)
        else units.push(...splitProse(it, limit))
      }
      return pack(units, limit, '\n')
    }
    default:
      return pack(splitProse(block.text, limit), limit, ' ')
  }
}

/** The tail of a prose piece, whole sentences, at most `tokens` tokens; empty when nothing fits. */
function overlapTail(text: string, tokens: number): string {
  if (tokens <= 0) return ''
  const sentences = splitSentences(text)
  const out: string[] = []
  let total = 0
  for (let k = sentences.length - 1; k >= 0; k--) {
    const t = estimateTokens(sentences[k]!)
    if (total + t > tokens) break
    out.unshift(sentences[k]!)
    total += t
  }
  // Never repeat a whole piece: that is duplication, not overlap.
  return out.length > 0 && out.length < sentences.length ? out.join(' ') : ''
}

// ---------------------------------------------------------------------------------------------------
// Assembly

/** Chunks markdown (or plain text, which is markdown without markup). */
export function chunkMarkdown(text: string, options: ChunkOptions = {}): Chunk[] {
  const o = { ...DEFAULT_CHUNK_OPTIONS, ...stripUndefined(options) }
  const target = Math.max(50, o.targetTokens)
  const max = Math.max(target, o.maxTokens)
  const docLang = options.lang ?? documentLanguage(text)
  const sourceUrl = options.sourceUrl ?? null

  const chunks: Chunk[] = []
  const stack: { level: number; title: string }[] = []
  let parts: string[] = []
  let bodyTokens = 0
  let chunkPath: string | null = null
  let chunkTitle: string | null = null
  let lastProse: Piece | null = null

  const currentPath = () => (stack.length ? stack.map((h) => h.title).join(' > ') : null)
  const currentTitle = () => (stack.length ? stack[stack.length - 1]!.title : null)

  const flush = () => {
    if (bodyTokens > 0) {
      const content = parts.join('\n\n').trim()
      chunks.push({
        ordinal: chunks.length,
        content,
        sectionTitle: chunkTitle,
        headingPath: chunkPath,
        sourceUrl,
        tokenCount: estimateTokens(content),
        lang: regconfigFor(content, docLang),
      })
    }
    parts = []
    bodyTokens = 0
    chunkPath = null
    chunkTitle = null
    lastProse = null
  }

  const begin = () => {
    if (parts.length === 0) {
      chunkPath = currentPath()
      chunkTitle = currentTitle()
    }
  }

  const maxChunks = options.maxChunks ?? Number.POSITIVE_INFINITY
  for (const block of scanBlocks(text)) {
    if (chunks.length > maxChunks) return chunks
    if (block.type === 'heading') {
      const level = block.level!
      if (bodyTokens > 0 && (bodyTokens >= o.minTokens || level <= o.hardSplitLevel)) flush()
      // a heading directly under another with no text between: the path below carries both
      else if (bodyTokens === 0) parts = []
      while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop()
      stack.push({ level, title: block.title! })
      if (parts.length === 0) {
        chunkPath = currentPath()
        chunkTitle = currentTitle()
      }
      parts.push(block.text)
      lastProse = null
      continue
    }
    const tokens = estimateTokens(block.text)
    const pieces =
      tokens <= max ? [piece(block.text, block.type === 'paragraph' || block.type === 'list' || block.type === 'quote')] : splitBlock(block, target)
    for (const p of pieces) {
      if (bodyTokens > 0 && bodyTokens + p.tokens > target) {
        const carry: string = lastProse ? overlapTail(lastProse.text, o.overlapTokens) : ''
        flush()
        begin()
        if (carry) {
          parts.push(carry)
          bodyTokens += estimateTokens(carry)
        }
      }
      begin()
      parts.push(p.text)
      bodyTokens += p.tokens
      lastProse = p.prose ? p : null
    }
  }
  flush()
  return chunks
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}

/** The document's language from a few samples spread over it (the first page is often a title or a table of contents). */
export function documentLanguage(text: string): Regconfig {
  const first = regconfigFor(text.slice(0, 3000))
  if (first !== 'simple' || text.length < 6000) return first
  const mid = Math.floor(text.length / 2)
  return regconfigFor(text.slice(mid, mid + 3000))
}

/** Chunking tuned per kind of document: an API description gets one chunk per operation. */
export function chunkDocument(doc: { text: string; fileType: DocumentFileType; sourceUrl?: string | null }, options: ChunkOptions = {}): Chunk[] {
  const perType: ChunkOptions = doc.fileType === 'swagger' ? { hardSplitLevel: 3, minTokens: 0 } : {}
  return chunkMarkdown(doc.text, { ...perType, ...stripUndefined(options), sourceUrl: doc.sourceUrl ?? options.sourceUrl ?? null })
}
