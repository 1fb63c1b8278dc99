/**
 * "Did the answer reach the model?": each covered question's answering passage, labelled by hand as offsets into
 * its help page (bench/grounding-passages.json holds offsets and hashes only, never the corpus's text; the page
 * is read from BENCH_DOCS at run time), looked for in the prompt of the turn's last generation call.
 *
 * A passage is in the prompt when at least 80 % of its word trigrams are (both sides lowercased, markdown and
 * punctuation dropped): the prompt fences headings, cleans links and may cut a source's end, so an exact
 * substring test would call a passage missing for a changed bracket.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

interface Span {
  start: number
  end: number
  sha1: string
}
type Label = { page: string; spans: Span[] } | { none: true; reason: string }

export const PASSAGES_FILE = process.env.BENCH_PASSAGES ?? 'bench/grounding-passages.json'

/** question id -> the passage texts it needs (all of them), or null when the labeller found no answer on the page. */
export function loadPassages(docsRoot: string): Map<string, string[] | null> | null {
  if (!existsSync(PASSAGES_FILE)) return null
  const labels = JSON.parse(readFileSync(PASSAGES_FILE, 'utf8')) as Record<string, Label>
  const out = new Map<string, string[] | null>()
  for (const [id, l] of Object.entries(labels)) {
    if ('none' in l) {
      out.set(id, null)
      continue
    }
    const page = readFileSync(join(docsRoot, '_docs', l.page), 'utf8')
    const texts = l.spans.map((s) => {
      const text = page.slice(s.start, s.end)
      const sha = createHash('sha1').update(text).digest('hex').slice(0, 12)
      if (sha !== s.sha1) throw new Error(`passage of ${id} does not match ${l.page} (the corpus changed?)`)
      return text
    })
    out.set(id, texts)
  }
  return out
}

export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/\]\([^)]*\)/g, ' ') // a link's target
    .replace(/<[^>]+>/g, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter(Boolean)
}

const trigrams = (ws: string[]) => {
  if (ws.length < 3) return [ws.join(' ')]
  const out: string[] = []
  for (let i = 0; i + 2 < ws.length; i++) out.push(`${ws[i]} ${ws[i + 1]} ${ws[i + 2]}`)
  return out
}

/** Share of the passage's word trigrams found in the prompt (0..1). */
export function coverage(passage: string, prompt: string): number {
  const ps = trigrams(words(passage))
  const hay = ` ${words(prompt).join(' ')} `
  const inPrompt = new Set(trigrams(words(prompt)))
  let found = 0
  for (const t of ps) if (inPrompt.has(t) || (t.split(' ').length < 3 && hay.includes(` ${t} `))) found++
  return ps.length ? found / ps.length : 0
}

export const reached = (passages: string[], prompt: string) => passages.every((p) => coverage(p, prompt) >= 0.8)

export const median = (xs: number[]) => {
  if (xs.length === 0) return 0
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
