/**
 * The visitor's language from what they wrote, by a maintained n-gram detector (eld, "small" database) with a
 * reliability verdict, instead of counting function words: a message is read only when it has at least
 * MIN_LETTERS letters, the detector calls its verdict reliable and the best language leads the second by
 * MIN_MARGIN (short or mixed messages such as "ok", "danke" or "password reset" wait for a clearer one).
 * The detector's database (about 2 s and 60 MB to load) is loaded on first use, not at boot.
 */

export const MIN_LETTERS = 10
/** The lead of the best score over the second: "password reset" reads as Italian by 0.03, a German question leads by 0.1-0.4. */
export const MIN_MARGIN = 0.05

interface Detector {
  detect(text: string): { language: string; isReliable(): boolean; getScores(): Record<string, number> }
}

let loading: Promise<Detector> | null = null
let loaded: Detector | null = null

/** The detector, loaded once per process. */
export function loadDetector(): Promise<Detector> {
  if (!loading) {
    loading = import('eld/small').then((m) => {
      loaded = m.eld as Detector
      return loaded
    })
    loading.catch(() => (loading = null))
  }
  return loading
}

export function countLetters(text: string): number {
  let n = 0
  for (const _ of text.matchAll(/\p{L}/gu)) n++
  return n
}

/** The language of the text when it is clear (see above), else null. Needs loadDetector() first (else null). */
export function clearLanguageSync(text: string): string | null {
  if (!loaded) return null
  const sample = text.slice(0, 2000)
  if (countLetters(sample) < MIN_LETTERS) return null
  const r = loaded.detect(sample)
  if (!r.language || !r.isReliable()) return null
  const scores = Object.values(r.getScores()).sort((a, b) => b - a)
  if (scores.length > 1 && scores[0]! - scores[1]! < MIN_MARGIN) return null
  return r.language
}

export async function clearLanguage(text: string): Promise<string | null> {
  await loadDetector()
  return clearLanguageSync(text)
}

/**
 * For one turn's search only (never stored as the session's language): the likeliest language of a question
 * whose language is not clear, when it is clearly not `unlike` (the knowledge's): the best guess leads `unlike`'s
 * score by MIN_MARGIN. "cambiar el motor de búsqueda en edge" is not clear enough to settle a session, but is
 * clearly not English; "download ddg browser" (German 0.76, English 0.73) stays English.
 */
export function likelyLanguageSync(text: string, unlike: string): string | null {
  if (!loaded) return null
  const sample = text.slice(0, 2000)
  if (countLetters(sample) < MIN_LETTERS) return null
  const r = loaded.detect(sample)
  if (!r.language || r.language === unlike) return null
  const scores = r.getScores()
  const best = scores[r.language] ?? 0
  return best - (scores[unlike] ?? 0) >= MIN_MARGIN ? r.language : null
}
