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
 * Split: one template in four (a stable hash of template_id) is held out, so sentences of one template are
 * all on one side; tune on dev, read held-out apart. Phones are also scored by whether a phone word is
 * near them (a fixed list here, not the detector's: within 40 characters before with no digit between, or
 * 25 characters after on the same line), and then on a generated set of every region's numbers
 * (bench/pii-generated.ts: national layouts outside the default regions, phone words before, after or
 * none, non-phones), split by region and sentence pattern the same way.
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
import { generatedPhoneSet, stableHash } from './pii-generated.js'

interface GoldSpan {
  entity_type: string
  entity_value: string
  start_position: number
  end_position: number
}
interface Sample {
  full_text: string
  spans: GoldSpan[]
  template_id?: number
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
const optional = new Set(['ID_DOC', 'IP', 'URL_TOKEN'] as const)
const pct = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '  -  ')

/** A phone word near a span, by a fixed list of this bench (English and the languages the service detects). */
const NEAR_WORD_RE =
  /(?<![\p{L}])(?:phone|tel|telephone|mobile|cell|fax|desk|office|call|ring|whatsapp|number|contact|messages?|answering|registered|telefon|handy|mobil|rufnummer|téléphone|tél|portable|teléfono|móvil|celular|llamar|telefone|telemóvel|telefono|cellulare|telefoon|mobiel)(?![\p{L}])/iu
function wordNear(text: string, s: number, e: number): boolean {
  const before = text.slice(Math.max(0, s - 40), s)
  const after = text.slice(e, e + 25)
  return NEAR_WORD_RE.test(before.slice(before.search(/\d[^\d]*$/) + 1)) || NEAR_WORD_RE.test(after.split(/[\d\n]/)[0])
}

type Counts = { gold: number; pred: number; tp: number }
const counts = (): Counts => ({ gold: 0, pred: 0, tp: 0 })
const row = (name: string, c: Counts) =>
  `${name.padEnd(22)} ${String(c.gold).padStart(5)} ${String(c.pred).padStart(5)} ${String(c.tp).padStart(5)}  ${pct(c.tp / c.pred).padStart(9)}  ${pct(c.tp / c.gold).padStart(6)}`
const HEAD = `${''.padEnd(22)}  gold  pred    tp  precision  recall`

/**
 * Scores predictions against gold spans of one text into per-type counts; PHONE_NUMBER also into
 * phone-near / phone-far by wordNear (a prediction by its own neighbourhood).
 */
function score(
  text: string,
  goldSpans: Array<{ type: Scored; start: number; end: number }>,
  entities: PiiEntity[],
  into: (key: string) => Counts,
  misses: string[] | null,
) {
  const gold = goldSpans.map((g) => ({ type: g.type, span: trimSpan(text, g.start, g.end), used: false }))
  const pred = entities
    .map((p) => ({ type: mapType(p), span: trimSpan(text, p.start, p.end) }))
    .filter((p): p is { type: Scored; span: [number, number] } => p.type !== null)
  const keys = (type: Scored, span: [number, number]) => (type === 'PHONE_NUMBER' ? [type, wordNear(text, ...span) ? 'phone-near' : 'phone-far'] : [type])
  const show = (what: string, span: [number, number]) =>
    `${what} ${JSON.stringify(text.slice(span[0], span[1]))}  in: ${JSON.stringify(text.slice(Math.max(0, span[0] - 30), span[1] + 30))}`
  for (const g of gold) for (const k of keys(g.type, g.span)) into(k).gold++
  for (const p of pred) {
    for (const k of keys(p.type, p.span)) into(k).pred++
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
      for (const k of keys(best.type, best.span)) into(k).tp++
    } else misses?.push(show(`FP ${p.type.padEnd(13)}`, p.span))
  }
  for (const g of gold) if (!g.used) misses?.push(show(`FN ${g.type.padEnd(13)}`, g.span))
}

function table(byKey: Map<string, Counts>, names: readonly string[]) {
  for (const n of names) if (byKey.has(n)) console.log(row(n, byKey.get(n)!))
}

if (existsSync(file)) {
  const samples = JSON.parse(readFileSync(file, 'utf8')) as Sample[]
  const splits = { dev: new Map<string, Counts>(), heldout: new Map<string, Counts>() }
  const misses: string[] = []
  let chars = 0
  const started = process.hrtime.bigint()
  const predictions = samples.map((s) => {
    chars += s.full_text.length
    return detectPii(s.full_text, { optional })
  })
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6
  samples.forEach((sample, idx) => {
    const split = stableHash(String(sample.template_id ?? idx)) % 4 === 0 ? 'heldout' : 'dev'
    const by = splits[split]
    const into = (k: string) => by.get(k) ?? by.set(k, counts()).get(k)!
    const gold = sample.spans
      .filter((g) => (TYPES as readonly string[]).includes(g.entity_type))
      .map((g) => ({ type: g.entity_type as Scored, start: g.start_position, end: g.end_position }))
    score(sample.full_text, gold, predictions[idx], into, showMisses && split === 'dev' ? misses : null)
  })
  console.log(`file: ${file}`)
  console.log(
    `samples: ${samples.length}, characters: ${chars}, redaction time: ${elapsedMs.toFixed(1)} ms (${((chars / 1024 / elapsedMs) * 1000).toFixed(0)} KB/s)`,
  )
  console.log('matching: same type and IoU >= 0.5 of trimmed character spans; held-out: templates with hash(template_id) % 4 == 0')
  for (const split of ['dev', 'heldout'] as const) {
    const by = splits[split]
    const all = counts()
    for (const t of TYPES) for (const f of ['gold', 'pred', 'tp'] as const) all[f] += by.get(t)?.[f] ?? 0
    console.log(`\n${split} (${samples.filter((s, i) => (stableHash(String(s.template_id ?? i)) % 4 === 0) === (split === 'heldout')).length} samples)`)
    console.log(HEAD)
    table(by, [...TYPES, 'phone-near', 'phone-far'])
    console.log(row('overall', all))
  }
  if (showMisses && misses.length) console.log(`\ndev misses:\n${misses.join('\n')}`)
} else {
  console.log(`bench:pii: no labelled file at ${file}; the generated set only (pass a path: npm run bench:pii -- <file>).`)
}

// The generated set: recall by where the phone word is, precision over all of it, non-phones flagged.
const generated = generatedPhoneSet()
console.log(`\ngenerated set: ${generated.length} sentences (bench/pii-generated.ts), PHONE only`)
const genStarted = process.hrtime.bigint()
const genMisses: string[] = []
for (const split of ['dev', 'heldout'] as const) {
  const by = new Map<string, Counts>()
  const into = (k: string) => by.get(k) ?? by.set(k, counts()).get(k)!
  const flagged = { near: 0, nearOf: 0, plain: 0, plainOf: 0, wrongType: 0 }
  for (const g of generated.filter((x) => x.split === split)) {
    const entities = detectPii(g.text, { optional })
    const phones = entities.filter((e) => e.type === 'PHONE')
    if (g.phone) {
      const c = into(g.kind === 'none' && g.intl ? 'none, +CC' : g.kind)
      c.gold++
      c.pred += phones.length
      const hit = phones.some((p) => iou(trimSpan(g.text, p.start, p.end), trimSpan(g.text, ...g.phone!)) >= 0.5)
      if (hit) c.tp++
      else if (showMisses && split === 'dev') genMisses.push(`FN ${g.kind.padEnd(6)} ${g.what} ${JSON.stringify(g.text)}`)
    } else {
      const near = g.kind === 'negative-near'
      flagged[near ? 'nearOf' : 'plainOf']++
      if (phones.length) flagged[near ? 'near' : 'plain']++
      if (g.expect && !entities.some((e) => e.type === g.expect)) flagged.wrongType++
      if (phones.length && showMisses && split === 'dev') genMisses.push(`FP ${g.what.padEnd(8)} ${JSON.stringify(g.text)}`)
      into('non-phones').pred += phones.length
    }
  }
  const phone = counts()
  for (const k of ['before', 'after', 'none', 'none, +CC', 'non-phones']) for (const f of ['gold', 'pred', 'tp'] as const) phone[f] += by.get(k)?.[f] ?? 0
  // predictions in phone sentences that are not the phone are counted wrong too (pred - tp)
  console.log(`\n${split}`)
  console.log(HEAD)
  for (const k of ['before', 'after', 'none', 'none, +CC']) if (by.has(k)) console.log(row(`phone word ${k}`, by.get(k)!))
  console.log(row('phone, all', phone))
  console.log(`non-phones flagged: ${flagged.near} of ${flagged.nearOf} next to a phone word, ${flagged.plain} of ${flagged.plainOf} without`)
  console.log(`cards and IBANs not found as their own type: ${flagged.wrongType}`)
}
console.log(`\ngenerated set time: ${(Number(process.hrtime.bigint() - genStarted) / 1e6).toFixed(0)} ms`)
if (genMisses.length) console.log(`\ngenerated dev misses:\n${genMisses.join('\n')}`)
