/**
 * Lexical building blocks shared by FAQ matching, de-duplication and the gap analyzer: content terms
 * (stop words of the five widget languages dropped, light suffix stemming), stable keys and similarity.
 * Deliberately simple and linear: they run over thousands of questions per recalculation.
 */

const STOP = new Set(
  // en
  (
    'a an the and or but if then else of to in on at by for with from into onto about as is are was were be been being am ' +
    'do does did doing done have has had having i me my mine we us our ours you your yours he him his she her it its they them ' +
    'their this that these those what which who whom whose when where why how can could should would will shall may might ' +
    'must not no yes so than too very just also there here any all some each every more most other such only own same ' +
    'up down out over under again further once please tell know want need get got use using way ok okay hi hello thanks thank ' +
    "i'm it's don't can't there's let lets like make sure still there's via per etc " +
    // de
    'der die das den dem des ein eine einer eines einem einen und oder aber wenn dann ist sind war waren sein bin bist ich du er sie es wir ihr ' +
    'mein meine dein deine unser mit von zu zum zur im in am an auf für fur bei aus nach wie was wer wo warum kann können konnen muss nicht kein keine ' +
    // fr
    'le la les un une des du de et ou mais si est sont été etre être je tu il elle nous vous ils elles mon ma mes ton ta tes son sa ses ' +
    'avec pour par dans sur au aux ce cette ces comment quoi qui où pourquoi peux peut puis pas ne que qu ' +
    // es
    'el los las uno una unos unas y o pero es son fue ser soy yo tú el ella nosotros mi mis tu tus su sus con para por en del al ' +
    'como qué que quien dónde donde por qué puedo puede no'
  ).split(/\s+/),
)

/** Lower-case words (letters and digits), apostrophes kept inside a word. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? []
}

/** A light, language-agnostic suffix stemmer: enough to join "refunds"/"refund", "cancelling"/"cancel". */
export function stem(word: string): string {
  let w = word
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`
  else if (w.length > 5 && w.endsWith('sses')) w = w.slice(0, -2)
  else if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3)
  else if (w.length > 4 && w.endsWith('ed') && !w.endsWith('eed')) w = w.slice(0, -2)
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1)
  // cancelling -> cancell -> cancel; shipping -> shipp -> ship
  if (w.length > 4 && /([b-df-hj-np-tv-z])\1$/.test(w)) w = w.slice(0, -1)
  // delete / deleting / deleted -> delet
  else if (w.length > 4 && w.endsWith('e') && !w.endsWith('ee')) w = w.slice(0, -1)
  return w
}

/** Stemmed content terms in order (duplicates kept), at most `max` of them. */
export function terms(text: string, max = 256): string[] {
  const out: string[] = []
  for (const w of words(text.slice(0, 20_000))) {
    if (w.length < 2 || STOP.has(w) || (/^\d+$/.test(w) && w.length < 3)) continue
    out.push(stem(w.split("'")[0]!))
    if (out.length >= max) break
  }
  return out
}

/** The sorted distinct terms: a stable key ("How do I cancel my subscriptions?" -> "cancel subscription"). */
export function termKey(text: string, maxChars = 300): string {
  const key = [...new Set(terms(text))].sort().join(' ')
  return key.slice(0, maxChars)
}

/** Term frequencies of a text. */
export function bag(text: string): Map<string, number> {
  const m = new Map<string, number>()
  for (const t of terms(text)) m.set(t, (m.get(t) ?? 0) + 1)
  return m
}

/** Cosine similarity of two sparse vectors (term -> weight). */
export function cosineSparse(a: Map<string, number>, b: Map<string, number>): number {
  if (a.size === 0 || b.size === 0) return 0
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  let dot = 0
  for (const [t, w] of small) {
    const v = large.get(t)
    if (v !== undefined) dot += w * v
  }
  if (dot === 0) return 0
  let na = 0
  let nb = 0
  for (const w of a.values()) na += w * w
  for (const w of b.values()) nb += w * w
  return dot / Math.sqrt(na * nb)
}

/** Cosine of the two texts' distinct term sets: 1 for the same terms in any order, 0 for none shared. */
export function termSimilarity(a: string, b: string): number {
  const sa = new Set(terms(a))
  const sb = new Set(terms(b))
  return setCosine(sa, sb)
}

export function setCosine(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0
  let shared = 0
  for (const t of a) if (b.has(t)) shared++
  return shared / Math.sqrt(a.size * b.size)
}

/** One line, trimmed and capped (labels, questions). */
export function oneLine(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 1).trimEnd()}…` : t
}

/** Dense cosine for already L2-normalised vectors. */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length)
  let s = 0
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!
  return s
}

export function normalizeDense(v: ArrayLike<number>): Float32Array {
  const out = new Float32Array(v.length)
  let n = 0
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!
  const inv = n > 0 ? 1 / Math.sqrt(n) : 0
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * inv
  return out
}
