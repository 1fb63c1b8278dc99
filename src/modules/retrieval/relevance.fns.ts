import { detectLanguage, foldText } from '../shared/language.js'
import { topicality } from './general-words.js'

/**
 * The relevance floor: whether the knowledge holds evidence for a question at all, judged without any
 * model (a guard model that says "relevant" to everything must not make unrelated chunks an answer).
 *
 * Lexical evidence is the share of the query's content terms (its lexemes, stop words already dropped),
 * weighted by idf, that one of the top chunks contains. A word the knowledge never uses weighs as much as
 * the rarest word it does use (df 1), so "quantum flux capacitor ... telemetry" against a refund page
 * covers only the little weight of a common word. Everyday words weigh less than topical ones
 * (`general-words.ts`): "why does my internet stop working while the VPN reconnects?" should not fail on a
 * page that never says "stop", where "xylophone telemetry" must. Vector evidence is the top hit's cosine similarity,
 * which means something only for the embedding model it came from: thresholds are configured per model
 * (`model=cosine` pairs), and a model without one has no say. The floor passes on either kind of evidence.
 * Thresholds are calibrated by bench/grounding.ts on a real help centre (see docs/benchmarks.md).
 */

export interface QueryTermStat {
  /** A query lexeme as the index normalises it. */
  term: string
  /** Chunks of the tenant containing it (0: the knowledge never uses the word). */
  df: number
  /** For a spelling correction: the unknown lexeme of the question it stands for. */
  corrects?: string
}

export interface EvidenceHit {
  title: string
  text: string
  /** Cosine similarity to the query, when vectors were searched. */
  vector: number | null
  kind?: 'chunk' | 'faq'
  /** 0..1; for an approved FAQ, how close its question is (the knowledge module's score). */
  confidence?: number
}

export interface FloorParams {
  /** Lexical coverage (0..1) of the best of the top chunks at or above which the floor passes. */
  lexical: number
  /** Cosine at or above which the floor passes, for the embedding model in use; null: vectors have no say. */
  cosine: number | null
  /** How many of the top hits are looked at (default 6). */
  topHits?: number
  /** An approved FAQ at least this close passes the floor (its question was matched to the visitor's already). */
  faq?: number
}

export interface Relevance {
  /** Best idf-weighted share of the query terms found in one of the top hits, 0..1. */
  lexical: number
  /** Content words of the question (function and question-phrasing words left out) found in any top hit. */
  topical: number
  /** Best cosine among the top hits, null without vectors. */
  vector: number | null
  /** Number of content terms in the query. */
  terms: number
  grounded: boolean
}

/** Lucene's BM25 idf (as bm25.fns.ts), with an unknown word counted as the rarest known one. */
export function termWeight(df: number, n: number): number {
  const d = Math.min(Math.max(df, 1), Math.max(n, 1))
  return Math.log(1 + (Math.max(n, 1) - d + 0.5) / (d + 0.5))
}

export { foldText }

/** Tests whether a query term occurs in a text; lexemeMatcher and termMatcher build one. */
export interface LexemeMatcher {
  test(text: string): boolean
}

const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u

/** Whether the code point ending just before `at` is a letter or a number (what a lexeme must not follow). */
function wordCharBefore(text: string, at: number): boolean {
  const c = text.charCodeAt(at - 1)
  if (c < 0x80) return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a)
  const pair = c >= 0xdc00 && c <= 0xdfff && at >= 2 && text.charCodeAt(at - 2) >= 0xd800 && text.charCodeAt(at - 2) <= 0xdbff
  return LETTER_OR_NUMBER.test(text.slice(pair ? at - 2 : at - 1, at))
}

/** The strings a lexeme may start a word with: itself, and for a stem ending in i its y form. */
function lexemeForms(term: string): string[] {
  const t = foldText(term)
  return t.length > 3 && t.endsWith('i') ? [t, `${t.slice(0, -1)}y`] : [t]
}

/** A word of the text starts with one of `forms`: a substring search and a look at the character before. */
function formsMatcher(forms: string[]): LexemeMatcher {
  return {
    test(text: string): boolean {
      for (const f of forms) {
        for (let at = text.indexOf(f); at >= 0; at = text.indexOf(f, at + 1)) if (at === 0 || !wordCharBefore(text, at)) return true
      }
      return false
    },
  }
}

/**
 * A matcher for one lexeme: a word of the text starting with it (stemmed lexemes are word prefixes:
 * "telemetri" of "telemetry" after the y -> i rule, "refund" of "refunds"). Not a regular expression per
 * lexeme: compiled anew for every question's words and tried at every position of six chunks, those cost
 * the floor about 3 ms of CPU a turn (bench:chat's profile).
 */
export function lexemeMatcher(term: string): LexemeMatcher {
  return formsMatcher(lexemeForms(term))
}

/** Share (0..1) of the weighted terms found in `text` (already folded). */
export function coverage(text: string, terms: { re: LexemeMatcher; w: number }[]): number {
  let total = 0
  let found = 0
  for (const t of terms) {
    total += t.w
    if (t.re.test(text)) found += t.w
  }
  return total > 0 ? found / total : 0
}

/** Question phrasing, not subject: "how long does it take", "is it possible", "I want to know". */
const PHRASING =
  'long much many take takes need want please know tell possible way able like often frequently usually soon quickly ever still really ' +
  'exactly actually currently work works working happen happens mean means thing things'
const PHRASING_WORDS = new Set(PHRASING.split(' '))

/** The query lexemes that only question phrasing made (see PHRASING): "way" of "is there a way to ...". */
export function phrasingLexemes(query: string, lexemes: string[]): Set<string> {
  const words = foldText(query).match(WORD) ?? []
  const out = new Set<string>()
  for (const l of lexemes) {
    const from = words.filter((w) => stemOf(foldText(l), w))
    if (from.length > 0 && from.every((w) => PHRASING_WORDS.has(w))) out.add(l)
  }
  return out
}

/** A function word of the languages the widget speaks (question phrasing not included): no subject of its own. */
export const isFunctionWord = (word: string): boolean => STOP.has(word) && !PHRASING_WORDS.has(word)

/**
 * Function words of the languages the widget speaks. The index stems a query under every configuration
 * its chunks use, so a word one configuration drops ("how", "the") comes back from another (`simple`)
 * with the tiny document frequency of the few chunks indexed that way, and would weigh like a rare word.
 */
const STOP = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by can could ' +
    'did do does doing down during each few for from further get got had has have having he her here hers him his how i if in into is it its ' +
    'itself just let me more most my myself no nor not now of off on once only or other our ours out over own same she should so some such ' +
    'than that the their theirs them then there these they this those through to too under until up very was we were what when where which ' +
    'while who whom why will with would you your yours yourself s t ll re ve d m ' +
    // the first halves of contractions ("doesn't" is split into "doesn" and "t")
    'don doesn didn isn aren wasn weren won wouldn couldn shouldn haven hasn hadn can cannot ain ' +
    PHRASING +
    ' ' +
    'aber alle als am an auch auf aus bei bin bis bist da dann das dass dem den der des die dies doch du durch ein eine einem einen einer eines ' +
    'er es für gibt hat habe haben ich ihr im in ist ja kann kein keine man mein mit nach nicht noch nur ob oder sein sich sie sind so über ' +
    'um und uns von vor was wenn wer wie wir wird wo zu zum zur ' +
    'au aux avec ce ces dans de des du elle en est et il je la le les leur lui ma mais me mes moi mon ne nos notre nous on ou par pas pour ' +
    'qu que qui sa se ses son sur ta te toi ton tu un une vos votre vous y comment est-ce ' +
    'al como con cual cuando del el ella ellos es esta este hay la las lo los mas mi mis muy no nos o para pero por puedo que se si sin ' +
    'su sus te tu un una uno y yo'
  ).split(' '),
)

const WORD = /[\p{L}\p{N}]+/gu

/** `lexeme` as the index may have made it of `word`: a prefix ("peopl" of "people", "telemetri" of "telemetry"). */
function stemOf(lexeme: string, word: string): boolean {
  if (lexeme.length < Math.min(3, word.length)) return false
  if (word.startsWith(lexeme)) return true
  return lexeme.length > 3 && lexeme.endsWith('i') && word.startsWith(`${lexeme.slice(0, -1)}y`)
}

/**
 * The query's content terms, one per word: function words dropped, and the lexemes the index made of a
 * word under its configurations ("people", "peopl") taken together. A word weighs as its most common
 * lexeme (the view of the configuration most chunks use); a word the index made nothing of is a stop
 * word to it; lexemes that belong to no word (another language's stemming of "does": "dos") are noise.
 */
export function contentTerms(query: string, terms: QueryTermStat[]): { term: string; df: number; word: string }[] {
  const lexemes = terms.map((t) => ({ l: foldText(t.term), df: t.df, corrects: t.corrects === undefined ? undefined : foldText(t.corrects) }))
  const out: { term: string; df: number; word: string }[] = []
  const seen = new Set<string>()
  // redaction placeholders ([EMAIL], [PHONE]) stand for the visitor's own data, not for the subject
  for (const word of foldText(query.replace(/\[[A-Z_]+\]/g, ' ')).match(WORD) ?? []) {
    if (seen.has(word) || STOP.has(word)) continue
    seen.add(word)
    const mine = lexemes.filter((x) => stemOf(x.l, word))
    // the index kept the word whole inside a longer token ("duck" in "duck.ai")
    if (mine.length === 0) mine.push(...lexemes.filter((x) => x.l.startsWith(word) && x.l.length > word.length && !/[\p{L}\p{N}]/u.test(x.l[word.length]!)))
    if (mine.length === 0) continue
    // a slip of the keyboard ("pasword") is looked for as the knowledge spells it
    mine.push(...lexemes.filter((x) => x.corrects !== undefined && mine.some((m) => m.l === x.corrects)))
    // the most common lexeme is the main configuration's: its stem is the one to look for in the chunks
    const main = mine.sort((x, y) => y.df - x.df || y.l.length - x.l.length)[0]!
    out.push({ term: word.startsWith(main.l) || main.l.endsWith('i') || main.corrects !== undefined ? main.l : word, df: main.df, word })
  }
  return out
}

/** The floor for one retrieval: lexical coverage of the top hits, their best cosine, and whether either is enough. */
export function relevance(query: string, terms: QueryTermStat[], corpusChunks: number, hits: EvidenceHit[], p: FloorParams): Relevance {
  const top = hits.slice(0, p.topHits ?? 6)
  let content = contentTerms(query, terms)
  // A question in another language than the knowledge ("Wie lange dauert der Versand?" over English pages) is
  // made of words the knowledge cannot hold: those count neither way, and the floor rests on the words it
  // does share (names, product terms, the English words mixed in); one shared word (a brand name) is not enough.
  const detected = detectLanguage(query)
  const cross = crossLanguage(detected, top)
  if (cross) content = content.filter((t) => t.df > 0)
  const language = detected ?? 'en'
  const weighted = content.map((t) => {
    return { re: lexemeMatcher(t.term), w: termWeight(t.df, corpusChunks) * topicality(t.word, language) }
  })
  let lexical = 0
  let vector: number | null = null
  let faq = false
  const found = new Set<number>()
  for (const h of top) {
    if (h.kind === 'faq' && p.faq !== undefined && (h.confidence ?? 0) >= p.faq) faq = true
    const text = foldText(`${h.title}\n${h.text}`)
    lexical = Math.max(lexical, coverage(text, weighted))
    weighted.forEach((t, i) => {
      if (!found.has(i) && t.re.test(text)) found.add(i)
    })
    if (h.vector !== null) vector = Math.max(vector ?? -1, h.vector)
  }
  const topical = found.size
  const byVector = p.cosine !== null && vector !== null && vector >= p.cosine
  // Only the clearly unrelated is stopped here: no content word of the question in any top chunk (two across
  // languages, where one shared brand name proves nothing) and no close vector. Everything else goes to the
  // answer model, whose "not in the sources" verdict (07-prompt.ts) decides answerability with the text in view.
  const byWords = topical >= (cross ? 2 : 1) && lexical >= p.lexical
  return { lexical, topical, vector, terms: weighted.length, grounded: byWords || byVector || faq }
}

/**
 * The question's language is known and none of the top chunks is in it (languages told apart by their
 * function words): the knowledge does not speak the visitor's language. A help centre with a few translated
 * pages still has pages in the question's language among its top hits, and judges it word for word.
 */
/**
 * The language of a chunk's first 1,500 characters, remembered by that text: the same chunks come back turn after
 * turn and the floor asks this of each top hit twice a turn (the decision and the answer). A pure function's memo,
 * bounded (oldest first out).
 */
const chunkLanguages = new Map<string, string | null>()
const CHUNK_LANGUAGES_MAX = 2_000
export function chunkLanguage(text: string): string | null {
  const head = text.length > 1500 ? text.slice(0, 1500) : text
  const known = chunkLanguages.get(head)
  if (known !== undefined) return known
  const lang = detectLanguage(head)
  if (chunkLanguages.size >= CHUNK_LANGUAGES_MAX) chunkLanguages.delete(chunkLanguages.keys().next().value!)
  chunkLanguages.set(head, lang)
  return lang
}

function crossLanguage(q: string | null, top: EvidenceHit[]): boolean {
  if (q === null) return false
  const langs = top.filter((h) => h.kind !== 'faq').map((h) => chunkLanguage(h.text))
  return langs.some((l) => l !== null) && !langs.includes(q)
}

/**
 * The floor's cosine for embedding models whose scale is known, used when RETRIEVAL_FLOOR_COSINE does not name the
 * model: a question the vectors place this close to a chunk is not clearly unrelated, whatever its words. From
 * published measurements of these models: with the v3 models an unrelated question scores about 0.1-0.2 against a
 * passage and a relevant one 0.35-0.6; ada-002 puts nearly any two texts above 0.7 and related ones above 0.8.
 * Other models' floors are measured on each tenant's knowledge with off-topic probes (floor-probes.ts).
 */
export const KNOWN_FLOOR_COSINES: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 0.3,
  'text-embedding-3-large': 0.3,
  'text-embedding-ada-002': 0.8,
}

/**
 * "text-embedding-3-small=0.35,my-model=0.6" -> the cosine for `model`; "my-model=none" (or a value that is no
 * number) takes the model's vectors out of the floor (null); a model the setting does not name gets
 * KNOWN_FLOOR_COSINES' value (matched on the name after a provider prefix, "openai/text-embedding-3-small"), else
 * undefined: its floor is measured on each tenant's knowledge (floor-probes.ts).
 */
export function cosineFor(spec: string, model: string): number | null | undefined {
  for (const part of spec.split(',')) {
    const i = part.lastIndexOf('=')
    if (i <= 0) continue
    if (part.slice(0, i).trim() !== model) continue
    const v = Number(part.slice(i + 1))
    return part.slice(i + 1).trim() !== '' && Number.isFinite(v) ? v : null
  }
  return KNOWN_FLOOR_COSINES[model.slice(model.lastIndexOf('/') + 1)]
}
