import type { GlossaryEntry, ProfileField } from '../../db/schema/knowledge.js'
import { oneLine, setCosine, termKey, terms } from './text.fns.js'
import { headingOf } from '../../lib/markup-scan.fns.js'
import { isSpace, trimEndOf } from '../../lib/trim-run.fns.js'

/**
 * Pure parts of the knowledge profile and FAQ candidates: bounding what a model returned, merging an
 * extraction with the operator's edits, the no-model heuristics (headings phrased as questions, support
 * e-mail and URLs found in the text), OpenAPI operations as FAQs, and de-duplication by similarity.
 */

export interface ProfileData {
  product_name: string | null
  topics: string[]
  glossary: GlossaryEntry[]
  support_email: string | null
  support_urls: string[]
}

export const PROFILE_FIELDS: readonly ProfileField[] = ['product_name', 'topics', 'glossary', 'support_email', 'support_urls']

export const PROFILE_LIMITS = { topics: 50, topicChars: 200, glossary: 100, termChars: 200, definitionChars: 2000, urls: 20, urlChars: 2048 }

export interface FaqDraft {
  question: string
  answer: string
  confidence: number
}

export const FAQ_LIMITS = { questionChars: 500, answerChars: 4000 }

const EMAIL = /^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}$/

export function cleanEmail(v: unknown): string | null {
  if (typeof v !== 'string') return null
  const s = v.trim().toLowerCase()
  return s.length <= 254 && EMAIL.test(s) ? s : null
}

/** An absolute http(s) URL without credentials, normalised by the URL parser; null for anything else. */
export function cleanUrl(v: unknown): string | null {
  if (typeof v !== 'string') return null
  const s = v.trim()
  if (!s || s.length > PROFILE_LIMITS.urlChars) return null
  try {
    const u = new URL(s)
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || !u.hostname.includes('.')) return null
    return u.toString()
  } catch {
    return null
  }
}

const str = (v: unknown, max: number): string | null => {
  if (typeof v !== 'string' && typeof v !== 'number') return null
  const s = oneLine(String(v), max)
  return s ? s : null
}

function uniqueBy<T>(items: T[], key: (t: T) => string, max: number): T[] {
  const seen = new Set<string>()
  const out: T[] = []
  for (const it of items) {
    const k = key(it)
    if (!k || seen.has(k)) continue
    seen.add(k)
    out.push(it)
    if (out.length >= max) break
  }
  return out
}

/** Whatever a model (or an operator) sent, reduced to a bounded profile. Unknown keys are ignored. */
export function sanitizeProfile(raw: Record<string, unknown> | null | undefined): ProfileData {
  const r = raw ?? {}
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v.slice(0, 500) : [])
  const topics = uniqueBy(
    list(r.topics)
      .map((t) =>
        str(typeof t === 'object' && t !== null ? ((t as Record<string, unknown>).name ?? (t as Record<string, unknown>).topic) : t, PROFILE_LIMITS.topicChars),
      )
      .filter((t): t is string => !!t),
    (t) => t.toLowerCase(),
    PROFILE_LIMITS.topics,
  )
  const glossary = uniqueBy(
    list(r.glossary)
      .map((g) => {
        if (!g || typeof g !== 'object') return null
        const o = g as Record<string, unknown>
        const term = str(o.term ?? o.name, PROFILE_LIMITS.termChars)
        const definition =
          typeof (o.definition ?? o.meaning) === 'string'
            ? String(o.definition ?? o.meaning)
                .trim()
                .slice(0, PROFILE_LIMITS.definitionChars)
            : ''
        return term ? { term, definition } : null
      })
      .filter((g): g is GlossaryEntry => !!g),
    (g) => g.term.toLowerCase(),
    PROFILE_LIMITS.glossary,
  )
  const urls = uniqueBy(
    list(r.support_urls)
      .map(cleanUrl)
      .filter((u): u is string => !!u),
    (u) => u,
    PROFILE_LIMITS.urls,
  )
  return {
    product_name: str(r.product_name, 200),
    topics,
    glossary,
    support_email: cleanEmail(r.support_email),
    support_urls: urls,
  }
}

/**
 * The fields an extraction may write: every field the operator has not set. An empty extracted value does
 * not wipe a value found earlier (a model that returns less on a later run should not erase the profile).
 */
export function mergeExtracted(extracted: ProfileData, operatorFields: readonly ProfileField[]): Partial<ProfileData> {
  const locked = new Set(operatorFields)
  const out: Partial<ProfileData> = {}
  if (!locked.has('product_name') && extracted.product_name) out.product_name = extracted.product_name
  if (!locked.has('topics') && extracted.topics.length) out.topics = extracted.topics
  if (!locked.has('glossary') && extracted.glossary.length) out.glossary = extracted.glossary
  if (!locked.has('support_email') && extracted.support_email) out.support_email = extracted.support_email
  if (!locked.has('support_urls') && extracted.support_urls.length) out.support_urls = extracted.support_urls
  return out
}

// ---------------------------------------------------------------------------------------------------
// Markdown helpers

interface Section {
  level: number
  heading: string
  body: string
}

/** Sections of a markdown text by heading (headings inside code fences do not count). */
export function sections(markdown: string): Section[] {
  const out: Section[] = []
  let cur: { level: number; heading: string; lines: string[] } | null = null
  let inCode = false
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inCode = !inCode
    // `^(#{1,6})\s+(.+?)\s*#*\s*$` by a scan (lib/markup-scan.fns.ts): the pattern was quartic on a line of spaces
    const m = inCode ? null : headingOf(line)
    if (m) {
      if (cur) out.push({ level: cur.level, heading: cur.heading, body: cur.lines.join('\n').trim() })
      cur = { level: m[0].length, heading: m[1].trim(), lines: [] }
    } else if (cur) {
      cur.lines.push(line)
    }
  }
  if (cur) out.push({ level: cur.level, heading: cur.heading, body: cur.lines.join('\n').trim() })
  return out
}

/** A section's own text plus its subsections' (up to the next heading of the same or a higher level). */
function sectionWithChildren(all: Section[], i: number): string {
  const parts = [all[i]!.body]
  for (let j = i + 1; j < all.length && all[j]!.level > all[i]!.level; j++) parts.push(`${'#'.repeat(all[j]!.level)} ${all[j]!.heading}\n\n${all[j]!.body}`)
  return parts.filter(Boolean).join('\n\n').trim()
}

const HOW_TO = /^how\s+to\s+(.+)$/i

/** Without a model: headings phrased as questions ("How do I ...?", "How to ...") with their section text. */
export function headingQuestions(markdown: string, max = 20): FaqDraft[] {
  const all = sections(markdown)
  const out: FaqDraft[] = []
  for (let i = 0; i < all.length && out.length < max; i++) {
    const h = all[i]!.heading.replace(/[*_`]/g, '').trim()
    let question: string | null = null
    if (/\?\s*$/.test(h) && h.split(/\s+/).length >= 2) question = h
    else if (HOW_TO.test(h)) question = `How do I ${trimEndOf(HOW_TO.exec(h)![1]!, '.:!')}?`
    if (!question) continue
    const answer = sectionWithChildren(all, i)
    if (answer.length < 20) continue
    out.push({ question: oneLine(question, FAQ_LIMITS.questionChars), answer: answer.slice(0, 1500).trim(), confidence: 0.6 })
  }
  return out
}

const isLetter = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'
/** `[A-Za-z0-9-]`: a character of a domain's label */
const isLabelChar = (c: string | undefined) => isLetter(c) || isDigit(c) || c === '-'
/** `[A-Za-z0-9._%+-]`: a character of a local part */
const isLocalChar = (c: string | undefined) => isLabelChar(c) || c === '.' || c === '_' || c === '%' || c === '+'

/**
 * What `/[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}/g` finds in `s`, by a scan: for
 * each `@`, the local characters before it (at most 64, none taken by the last find), then its labels, ending in the
 * letters (2 to 24) that begin the last label that has two. The pattern tried every start before an `@` and every
 * way to split the labels: 74.5 ms at the 40,000 characters of a document (issue 50), a factor of 64 over a scan.
 */
export function emailsInText(s: string): string[] {
  const out: string[] = []
  let from = 0
  for (let a = s.indexOf('@'); a >= 0; a = s.indexOf('@', a + 1)) {
    let b = a
    while (b > from && a - b < 64 && isLocalChar(s[b - 1])) b--
    if (b === a) continue
    // the first label, then each `.label` after it; the end: the letters that begin the last label with two
    let k = a + 1
    while (isLabelChar(s[k])) k++
    if (k === a + 1) continue
    let end = -1
    while (s[k] === '.' && isLabelChar(s[k + 1])) {
      const start = k + 1
      let l = start
      while (l < start + 24 && isLetter(s[l])) l++
      if (l - start >= 2) end = l
      k = start
      while (isLabelChar(s[k])) k++
    }
    if (end < 0) continue
    out.push(s.slice(b, end))
    from = end
  }
  return out
}
const URL_IN_TEXT = /https?:\/\/[^\s<>()"'`\]]+/g
const SUPPORTISH = /support|help|contact|faq|service|kundendienst|hilfe|aide|ayuda|soporte/i

/** Without a model: topics from headings that recur, the support e-mail and support pages named in the text. */
export function heuristicProfile(docs: { title: string | null; text: string }[]): ProfileData {
  const headingCount = new Map<string, { label: string; n: number; first: number }>()
  const emails = new Map<string, number>()
  const urls: string[] = []
  let order = 0
  for (const d of docs) {
    const seen = new Set<string>()
    for (const s of sections(d.text)) {
      const label = oneLine(s.heading.replace(/[*_`#]/g, ''), 80)
      const key = termKey(label)
      if (!key || label.length < 3 || /\?$/.test(label) || /^(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s/.test(label)) continue
      if (seen.has(key)) continue
      seen.add(key)
      const e = headingCount.get(key) ?? { label, n: 0, first: order++ }
      e.n++
      headingCount.set(key, e)
    }
    for (const found of emailsInText(d.text)) {
      const e = cleanEmail(found.replace(/\.$/, ''))
      if (e) emails.set(e, (emails.get(e) ?? 0) + (SUPPORTISH.test(e) ? 10 : 1))
    }
    for (const m of d.text.matchAll(URL_IN_TEXT)) {
      const u = cleanUrl(trimEndOf(m[0], '.,;:!?'))
      if (u && SUPPORTISH.test(u)) urls.push(u)
    }
  }
  const topics = [...headingCount.values()]
    .sort((a, b) => b.n - a.n || a.first - b.first)
    .slice(0, 20)
    .map((e) => e.label)
  const email = [...emails.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null
  return { product_name: null, topics, glossary: [], support_email: email, support_urls: uniqueBy(urls, (u) => u, 10) }
}

// ---------------------------------------------------------------------------------------------------
// FAQ candidates

/** Question/answer pairs from a model reply `{faqs: [{question, answer, confidence?}]}`, bounded. */
export function sanitizeFaqPairs(raw: Record<string, unknown> | null | undefined, max = 10): FaqDraft[] {
  const list = Array.isArray(raw?.faqs) ? raw.faqs : Array.isArray(raw?.items) ? raw.items : []
  const out: FaqDraft[] = []
  for (const item of list.slice(0, 100)) {
    if (!item || typeof item !== 'object') continue
    const o = item as Record<string, unknown>
    let q = typeof o.question === 'string' ? oneLine(o.question, FAQ_LIMITS.questionChars) : ''
    const a = typeof o.answer === 'string' ? o.answer.trim().slice(0, FAQ_LIMITS.answerChars) : ''
    if (q.length < 8 || a.length < 2) continue
    if (!/[?？]$/.test(q)) q = `${trimEndOf(q, '.!:')}?`
    const c = typeof o.confidence === 'number' && Number.isFinite(o.confidence) ? Math.min(1, Math.max(0, o.confidence)) : 0.7
    out.push({ question: q, answer: a, confidence: c })
    if (out.length >= max) break
  }
  return out
}

const isLineEnd = (c: string) => c === '\n' || c === '\r' || c === '\u2028' || c === '\u2029'

/** `/(^|·)\s*Deprecated\s*$/m.test(text)` by a scan (the pattern is quadratic on a run of line breaks). */
export function deprecatedMarked(text: string): boolean {
  const n = text.length
  for (let i = text.indexOf('Deprecated'); i >= 0; i = text.indexOf('Deprecated', i + 1)) {
    let y = i + 10
    while (y < n && isSpace(text[y]!) && !isLineEnd(text[y]!)) y++
    if (y < n && !isLineEnd(text[y]!)) continue
    let w = i
    while (w > 0 && isSpace(text[w - 1]!) && !isLineEnd(text[w - 1]!)) w--
    if (w === 0 || isLineEnd(text[w - 1]!) || text[w - 1] === '·') return true
  }
  return false
}

const OP_HEADING = /^##\s+(GET|POST|PUT|PATCH|DELETE)\s+(\/\S*)\s*$/

/** Lower-cases the first letter unless the first word is an acronym ("Create a user" -> "create a user"). */
function lowerFirst(s: string): string {
  return /^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s
}

function humanizeId(id: string): string {
  return id
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim()
}

/** The list lines of a `**Name:**` block in an operation section. */
function block(lines: string[], name: string): string[] {
  const start = lines.findIndex((l) => l.trim() === `**${name}:**`)
  if (start < 0) return []
  const out: string[] = []
  for (const l of lines.slice(start + 1)) {
    if (/^\*\*[^*]+:\*\*/.test(l.trim())) break
    if (l.trim()) out.push(l)
  }
  return out
}

/**
 * One candidate per important operation of an OpenAPI document as the indexer rendered it (one `## METHOD
 * /path` section per operation): "How do I <summary>?" answered with the method, path, parameters, body
 * fields and authentication. No model involved; deprecated operations are left out.
 */
export function swaggerFaqs(markdown: string, max = 50): FaqDraft[] {
  const lines = markdown.split('\n')
  const ops: { method: string; path: string; body: string[] }[] = []
  for (const line of lines) {
    const m = OP_HEADING.exec(line)
    if (m) {
      ops.push({ method: m[1]!, path: m[2]!, body: [] })
      continue
    }
    if (/^#{1,2}\s/.test(line)) {
      ops.push({ method: '', path: '', body: [] }) // a section that is not an operation ends the previous one
      continue
    }
    ops[ops.length - 1]?.body.push(line)
  }
  const out: FaqDraft[] = []
  for (const op of ops) {
    if (!op.method) continue
    const text = op.body.join('\n')
    if (deprecatedMarked(text)) continue
    const found = /^\*\*Summary:\*\*\s*(.+)$/m.exec(text)?.[1]?.trim()
    const summary = found === undefined ? undefined : trimEndOf(found, '.!')
    const opId = /Operation ID: `([^`]+)`/.exec(text)?.[1]
    const description = op.body.map((l) => l.trim()).find((l) => l && !l.startsWith('**') && !l.startsWith('- ') && !/^(Operation ID|Tags):/.test(l))
    let question: string
    let confidence: number
    if (summary) {
      question = /\?$/.test(summary) ? summary : /^(how|what|why|can|where|which)\b/i.test(summary) ? `${summary}?` : `How do I ${lowerFirst(summary)}?`
      confidence = 0.9
    } else if (opId) {
      question = `How do I ${humanizeId(opId)}?`
      confidence = 0.75
    } else {
      question = `How do I call ${op.method} ${op.path}?`
      confidence = 0.6
    }
    const parts = [`Send \`${op.method} ${op.path}\`.`]
    if (description) parts[0] += ` ${oneLine(description, 300)}`
    const params = block(op.body, 'Parameters')
      .filter((l) => /^- `/.test(l.trim()))
      .slice(0, 15)
    if (params.length) parts.push(`Parameters:\n${params.map((l) => l.trim()).join('\n')}`)
    const body = block(op.body, 'Request body')
    const contentType = body.map((l) => /^Content type `([^`]+)`/.exec(l.trim())?.[1]).find(Boolean)
    const fields = body.filter((l) => /^- `/.test(l)).slice(0, 15)
    if (fields.length) parts.push(`Request body${contentType ? ` (\`${contentType}\`)` : ''}:\n${fields.join('\n')}`)
    const auth = /^\*\*Authentication:\*\*\s*(.+)$/m.exec(text)?.[1]?.trim()
    if (auth) parts.push(`Authentication: ${auth}`)
    out.push({ question: oneLine(question, FAQ_LIMITS.questionChars), answer: parts.join('\n\n').slice(0, FAQ_LIMITS.answerChars), confidence })
  }
  // the best-described operations first when a large API has to be cut
  return out
    .map((f, i) => ({ f, i }))
    .sort((a, b) => b.f.confidence - a.f.confidence || a.i - b.i)
    .slice(0, max)
    .sort((a, b) => a.i - b.i)
    .map((x) => x.f)
}

/** Question key for de-duplication: the sorted distinct content terms. */
export const questionKey = (question: string) => termKey(question) || oneLine(question.toLowerCase(), 300)

/** Similarity of two question keys (cosine of their term sets). */
export function keySimilarity(a: string, b: string): number {
  return setCosine(new Set(a.split(' ').filter(Boolean)), new Set(b.split(' ').filter(Boolean)))
}

/**
 * New drafts that are not near-duplicates of an existing candidate (including rejected ones) nor of an
 * earlier draft in the same list; of two near-duplicates the first (usually the better source) stays.
 */
export function dedupeFaqs<T extends { question: string }>(drafts: T[], existingKeys: string[], threshold = 0.85): (T & { key: string })[] {
  const index = new Map<string, string[]>() // term -> keys containing it
  const add = (key: string) => {
    for (const t of new Set(key.split(' '))) {
      const l = index.get(t)
      if (l) l.push(key)
      else index.set(t, [key])
    }
  }
  const isDuplicate = (key: string) => {
    if (index.get('\u0000' + key)) return true
    const seen = new Set<string>()
    for (const t of new Set(key.split(' '))) {
      for (const other of index.get(t) ?? []) {
        if (seen.has(other)) continue
        seen.add(other)
        if (keySimilarity(key, other) >= threshold) return true
      }
    }
    return false
  }
  const remember = (key: string) => {
    index.set('\u0000' + key, [key])
    add(key)
  }
  for (const k of existingKeys) remember(k)
  const out: (T & { key: string })[] = []
  for (const d of drafts) {
    const key = questionKey(d.question)
    if (!key || isDuplicate(key)) continue
    remember(key)
    out.push({ ...d, key })
  }
  return out
}

/** Score of an approved FAQ question against a visitor's query, 0..1 (cosine of content term sets). */
export function faqScore(queryTerms: Set<string>, faqQuestion: string): number {
  return setCosine(queryTerms, new Set(terms(faqQuestion)))
}
