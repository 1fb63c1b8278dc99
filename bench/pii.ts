/**
 * Redaction quality over a labelled file (Presidio's synthetic format: an array of
 * {full_text, spans: [{entity_type, entity_value, start_position, end_position}]}).
 *
 *   npm run bench:pii -- [file] [--misses]
 *
 * Default file: ../shared/data/pii/presidio-synth-dev.json relative to the repository root (a notice and
 * exit 0 when absent). Runs the real redaction (src/modules/tenants/privacy/pii.fns.ts) with every optional type
 * on and reports span-level precision and recall per type.
 *
 * Matching rule: a predicted span matches a gold span of the same type when their intersection over
 * union of character offsets, after trimming whitespace and surrounding punctuation from both, is at
 * least 0.5; each gold span matches at most one prediction (greedy by IoU). Predictions of our types
 * that have no Presidio counterpart (API_KEY, PASSWORD, URL_TOKEN, ID_DOC other than SSN) are not
 * scored. Precision counts a prediction as wrong when it matches no gold span of its type.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { detectPii, type PiiEntity } from '../src/modules/tenants/privacy/pii.fns.js'

interface GoldSpan {
  entity_type: string
  entity_value: string
  start_position: number
  end_position: number
}
interface Sample {
  full_text: string
  spans: GoldSpan[]
}

const TYPES = ['EMAIL_ADDRESS', 'PHONE_NUMBER', 'CREDIT_CARD', 'IBAN_CODE', 'IP_ADDRESS', 'US_SSN'] as const
type Scored = (typeof TYPES)[number]

function mapType(e: PiiEntity): Scored | null {
  switch (e.type) {
    case 'EMAIL':
      return 'EMAIL_ADDRESS'
    case 'PHONE':
      return 'PHONE_NUMBER'
    case 'CARD':
      return 'CREDIT_CARD'
    case 'IBAN':
      return 'IBAN_CODE'
    case 'IP':
      return 'IP_ADDRESS'
    case 'ID_DOC':
      return e.subtype === 'SSN' ? 'US_SSN' : null
    default:
      return null
  }
}

const TRIM = /[\s"'`.,;:!?()[\]{}<>]/
function trimSpan(text: string, s: number, e: number): [number, number] {
  while (s < e && TRIM.test(text[s])) s++
  while (e > s && TRIM.test(text[e - 1])) e--
  return [s, e]
}
function iou(a: [number, number], b: [number, number]): number {
  const inter = Math.max(0, Math.min(a[1], b[1]) - Math.max(a[0], b[0]))
  const union = Math.max(a[1], b[1]) - Math.min(a[0], b[0])
  return union > 0 ? inter / union : 0
}

const args = process.argv.slice(2)
const showMisses = args.includes('--misses')
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const file = args.find((a) => !a.startsWith('--')) ?? resolve(root, '../shared/data/pii/presidio-synth-dev.json')
if (!existsSync(file)) {
  console.log(`bench:pii: no labelled file at ${file}; nothing to measure (pass a path: npm run bench:pii -- <file>).`)
  process.exit(0)
}

const samples = JSON.parse(readFileSync(file, 'utf8')) as Sample[]
const optional = new Set(['ID_DOC', 'IP', 'URL_TOKEN'] as const)
const stats = Object.fromEntries(TYPES.map((t) => [t, { gold: 0, pred: 0, tp: 0 }])) as Record<Scored, { gold: number; pred: number; tp: number }>
const misses: string[] = []
let chars = 0
const started = process.hrtime.bigint()
const predictions = samples.map((s) => {
  chars += s.full_text.length
  return detectPii(s.full_text, { optional })
})
const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6

samples.forEach((sample, idx) => {
  const text = sample.full_text
  const gold = sample.spans
    .filter((g) => (TYPES as readonly string[]).includes(g.entity_type))
    .map((g) => ({ type: g.entity_type as Scored, span: trimSpan(text, g.start_position, g.end_position), used: false }))
  const pred = predictions[idx]
    .map((p) => ({ type: mapType(p), span: trimSpan(text, p.start, p.end), raw: p }))
    .filter((p): p is { type: Scored; span: [number, number]; raw: PiiEntity } => p.type !== null)
  for (const g of gold) stats[g.type].gold++
  for (const p of pred) {
    stats[p.type].pred++
    let best: (typeof gold)[number] | null = null
    let bestIou = 0.5
    for (const g of gold) {
      if (g.used || g.type !== p.type) continue
      const v = iou(p.span, g.span)
      if (v >= bestIou) {
        best = g
        bestIou = v
      }
    }
    if (best) {
      best.used = true
      stats[p.type].tp++
    } else if (showMisses)
      misses.push(
        `FP ${p.type.padEnd(13)} ${JSON.stringify(text.slice(p.span[0], p.span[1]))}  in: ${JSON.stringify(text.slice(Math.max(0, p.span[0] - 30), p.span[1] + 30))}`,
      )
  }
  if (showMisses)
    for (const g of gold)
      if (!g.used)
        misses.push(
          `FN ${g.type.padEnd(13)} ${JSON.stringify(text.slice(g.span[0], g.span[1]))}  in: ${JSON.stringify(text.slice(Math.max(0, g.span[0] - 30), g.span[1] + 30))}`,
        )
})

const pct = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '  -  ')
console.log(`file: ${file}`)
console.log(
  `samples: ${samples.length}, characters: ${chars}, redaction time: ${elapsedMs.toFixed(1)} ms (${((chars / 1024 / elapsedMs) * 1000).toFixed(0)} KB/s)`,
)
console.log('matching: same type and IoU >= 0.5 of trimmed character spans')
console.log('')
console.log('type            gold  pred    tp  precision  recall')
let tp = 0
let pred = 0
let gold = 0
for (const t of TYPES) {
  const s = stats[t]
  tp += s.tp
  pred += s.pred
  gold += s.gold
  console.log(
    `${t.padEnd(14)} ${String(s.gold).padStart(5)} ${String(s.pred).padStart(5)} ${String(s.tp).padStart(5)}  ${pct(s.tp / s.pred).padStart(9)}  ${pct(s.tp / s.gold).padStart(6)}`,
  )
}
console.log(
  `${'overall'.padEnd(14)} ${String(gold).padStart(5)} ${String(pred).padStart(5)} ${String(tp).padStart(5)}  ${pct(tp / pred).padStart(9)}  ${pct(tp / gold).padStart(6)}`,
)
if (showMisses && misses.length) {
  console.log('')
  for (const m of misses) console.log(m)
}
