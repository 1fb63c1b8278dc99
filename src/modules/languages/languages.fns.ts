import { LANGUAGE_NAMES } from '../shared/language.js'

/**
 * A workspace's languages (#40) as pure rules: which codes exist, what a settings change may say, and which
 * language a session gets once its visitor's is known.
 */

export interface LanguageSettings {
  /** the language the knowledge is written in */
  knowledge: string
  /** the languages the bot answers in; empty: any */
  answer: string[]
  /** what a session in a language outside `answer` gets */
  fallback: string
}

export type LanguageSource = 'detected' | 'visitor' | 'fallback'

export const DEFAULT_LANGUAGES: LanguageSettings = { knowledge: 'en', answer: [], fallback: 'en' }

/** The ISO 639-1 codes a setting may name: the languages the service knows by name (prompts, the dashboard). */
export const LANGUAGE_CODES = Object.keys(LANGUAGE_NAMES)

export const isLanguageCode = (code: string) => Object.hasOwn(LANGUAGE_NAMES, code)

/** The problems of a settings change, each with the field it is about (the route answers the first as a 422). */
export function settingsProblems(s: LanguageSettings): { loc: (string | number)[]; msg: string }[] {
  const out: { loc: (string | number)[]; msg: string }[] = []
  const unknown = (code: string) => `Unknown language code '${code.slice(0, 12)}' (use one of: ${LANGUAGE_CODES.join(', ')})`
  if (!isLanguageCode(s.knowledge)) out.push({ loc: ['body', 'knowledge'], msg: unknown(s.knowledge) })
  s.answer.forEach((code, i) => {
    if (!isLanguageCode(code)) out.push({ loc: ['body', 'answer', i], msg: unknown(code) })
  })
  if (!isLanguageCode(s.fallback)) out.push({ loc: ['body', 'fallback'], msg: unknown(s.fallback) })
  else if (s.answer.length && !s.answer.includes(s.fallback))
    out.push({ loc: ['body', 'fallback'], msg: `The fallback language '${s.fallback}' must be one of the answer languages` })
  return out
}

/** The settings as stored: answer languages once each, in the order given. */
export function normalizeSettings(s: LanguageSettings): LanguageSettings {
  return { knowledge: s.knowledge, answer: [...new Set(s.answer)], fallback: s.fallback }
}

/**
 * The session's language from the visitor's (detected or chosen): kept when the bot answers in it, else the
 * fallback, with the visitor's own language in `outside` so the turn can say once, in it, why.
 */
export function settleLanguage(
  settings: LanguageSettings,
  visitor: { language: string; source: 'detected' | 'visitor' },
): { language: string; source: LanguageSource; outside: string | null } {
  if (settings.answer.length === 0 || settings.answer.includes(visitor.language)) return { language: visitor.language, source: visitor.source, outside: null }
  return { language: settings.fallback, source: 'fallback', outside: visitor.language }
}

/**
 * The knowledge's language from the languages of a sample of its passages: the most frequent one, with its
 * share; null when nothing could be read.
 */
export function majorityLanguage(langs: (string | null)[]): { language: string; share: number; sampled: number } | null {
  const counts = new Map<string, number>()
  let read = 0
  for (const l of langs) {
    if (!l) continue
    read++
    counts.set(l, (counts.get(l) ?? 0) + 1)
  }
  if (!read) return null
  const [language, n] = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!
  return { language, share: Math.round((n / read) * 100) / 100, sampled: read }
}
