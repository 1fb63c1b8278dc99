import type { HealthStatus, HealthWarning } from '../../db/schema/ingestion.js'
import { scanBlocks } from './chunking.fns.js'

/**
 * Deterministic document health: rules a person would apply when asking "will the bot answer well from
 * this?". No language model; the same text always gives the same result.
 *
 * Score: 100 minus 40 per high, 15 per medium and 5 per low warning, never below 0; an empty document
 * scores 0.
 */

const PENALTY = { high: 40, medium: 15, low: 5 } as const

export const HEALTH_LIMITS = {
  tooShortWords: 80,
  giantSectionWords: 2000,
  unstructuredWords: 1500,
  minDuplicateParagraphChars: 40,
} as const

/** Whitespace-separated tokens with a letter or digit: a cheap word count (no arrays built). */
function countWords(s: string): number {
  let n = 0
  let inWord = false
  let hasAlnum = false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 32 || c === 10 || c === 9 || c === 13) {
      if (inWord && hasAlnum) n++
      inWord = false
      hasAlnum = false
    } else {
      inWord = true
      if (!hasAlnum && ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c > 0xbf)) hasAlnum = true
    }
  }
  return inWord && hasAlnum ? n + 1 : n
}

/** Letters among non-space characters, by a char loop (ASCII fast path). */
function letterShare(s: string): { letters: number; nonSpace: number } {
  let letters = 0
  let nonSpace = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 32 || c === 10 || c === 9 || c === 13) continue
    nonSpace++
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) letters++
    else if (c > 0x7f && /\p{L}/u.test(s[i]!)) letters++
  }
  return { letters, nonSpace }
}

/** Distinct words are counted on a bounded sample: the ratio is stable long before the end of a book. */
const DISTINCT_SAMPLE_CHARS = 200_000

interface Section {
  title: string | null
  level: number
  words: number
  prose: string[]
}

export function checkHealth(text: string, now: Date): HealthStatus {
  const warnings: HealthWarning[] = []
  const add = (type: string, severity: HealthWarning['severity'], message: string) => warnings.push({ type, severity, message })
  const checked_at = now.toISOString()
  const trimmed = text.trim()

  if (!trimmed) {
    add('empty', 'high', 'The document has no text. If it is a scan, upload a version with selectable text.')
    return { score: 0, checked_at, warnings, error: null }
  }

  const blocks = scanBlocks(trimmed)
  const sections: Section[] = [{ title: null, level: 0, words: 0, prose: [] }]
  const emptyHeadings: string[] = []
  let headingCount = 0
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!
    if (b.type === 'heading') {
      headingCount++
      const next = blocks[i + 1]
      if (!next || (next.type === 'heading' && next.level! <= b.level!)) emptyHeadings.push(b.title!)
      sections.push({ title: b.title!, level: b.level!, words: 0, prose: [] })
      continue
    }
    const s = sections[sections.length - 1]!
    s.words += countWords(b.text)
    if (b.type === 'paragraph' || b.type === 'list' || b.type === 'quote') s.prose.push(b.text)
  }
  const totalWords =
    sections.reduce((n, sec) => n + sec.words, 0) +
    countWords(
      blocks
        .filter((b) => b.type === 'heading')
        .map((b) => b.title)
        .join(' '),
    )
  const prose = sections.flatMap((s) => s.prose).join('\n')

  // too short
  if (totalWords < HEALTH_LIMITS.tooShortWords) {
    add('too_short', totalWords < 20 ? 'high' : 'medium', `The document has only ${totalWords} words; the bot has little to answer from.`)
  }

  // extraction garbage
  const replacement = (trimmed.match(/\uFFFD/g) ?? []).length
  const cid = (trimmed.match(/\(cid:\d+\)/g) ?? []).length
  if (replacement > Math.max(3, trimmed.length * 0.002) || cid > 5) {
    add('extraction_garbage', 'high', 'Part of the text could not be extracted (unreadable characters). Re-export the file, or upload it in another format.')
  }
  const mojibake = (trimmed.match(/Ã[\u0080-\u00bf]|â€[\u0080-\u00bf™œ\u009d]|Ã¢|Â[\u00a0-\u00bf]/g) ?? []).length
  if (mojibake > 5)
    add(
      'encoding_errors',
      'medium',
      'The text contains garbled characters (wrong encoding), e.g. "Ã©" instead of "é". Save the file as UTF-8 and upload it again.',
    )
  const share = letterShare(prose)
  if (share.nonSpace >= 200) {
    if (share.letters / share.nonSpace < 0.5) {
      add('low_letter_ratio', 'medium', 'Much of the text is symbols or numbers rather than words; the extraction may be poor or the content mostly data.')
    }
  }

  // structure
  const giants = sections.filter((s) => s.words > HEALTH_LIMITS.giantSectionWords)
  if (headingCount === 0 && totalWords > HEALTH_LIMITS.unstructuredWords) {
    add('no_structure', 'low', `The document has ${totalWords} words and no headings; headings help the bot find and cite the right part.`)
  } else if (giants.length) {
    const names = giants
      .slice(0, 3)
      .map((s) => `"${s.title ?? 'introduction'}"`)
      .join(', ')
    add(
      'giant_section',
      'medium',
      `${giants.length} section(s) are very long (over ${HEALTH_LIMITS.giantSectionWords} words): ${names}. Split them with subheadings.`,
    )
  }
  if (emptyHeadings.length) {
    const names = emptyHeadings
      .slice(0, 3)
      .map((t) => `"${t}"`)
      .join(', ')
    add('unfinished_section', 'low', `${emptyHeadings.length} heading(s) have no text under them: ${names}.`)
  }
  const placeholders = (trimmed.match(/\b(?:TODO|TBD|FIXME|lorem ipsum|coming soon)\b/gi) ?? []).length
  if (placeholders > 0) add('placeholder_text', 'low', `The document contains ${placeholders} placeholder(s) such as TODO, TBD or lorem ipsum.`)

  // duplication and information
  const paragraphs = trimmed
    .split(/\n\s*\n/)
    .map((p) => p.toLowerCase().replace(/\s+/g, ' ').trim())
    .filter((p) => p.length >= HEALTH_LIMITS.minDuplicateParagraphChars)
  const seen = new Set<string>()
  let dupChars = 0
  let paraChars = 0
  for (const p of paragraphs) {
    paraChars += p.length
    if (seen.has(p)) dupChars += p.length
    else seen.add(p)
  }
  const dupShare = paraChars ? dupChars / paraChars : 0
  if (dupShare > 0.2) add('duplicate_content', 'medium', `${Math.round(dupShare * 100)}% of the text is repeated paragraphs.`)
  else if (dupShare > 0.05) add('duplicate_content', 'low', `${Math.round(dupShare * 100)}% of the text is repeated paragraphs.`)
  if (totalWords >= 300) {
    const sample = trimmed
      .slice(0, DISTINCT_SAMPLE_CHARS)
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean)
    const distinct = new Set(sample).size
    if (sample.length >= 300 && distinct / sample.length < 0.12)
      add('low_information', 'medium', 'The text repeats the same few words; it carries little information.')
  }

  const order = { high: 0, medium: 1, low: 2 }
  warnings.sort((a, b) => order[a.severity] - order[b.severity])
  const score = Math.max(0, 100 - warnings.reduce((sum, w) => sum + PENALTY[w.severity], 0))
  return { score, checked_at, warnings, error: null }
}
