import { DEFAULT_LANGUAGES, settleLanguage, type LanguageSettings, type LanguageSource } from '../../languages/languages.fns.js'
import type { LanguagesPort } from '../../languages/languages.port.js'
import { clearLanguage, likelyLanguageSync } from '../../shared/language-detect.js'
import { localeLanguage } from '../../shared/language.js'
import { message } from '../../shared/messages/catalogue.js'

/**
 * Stage 1b (#40): the session's language. Set once, from the first message of at least 10 letters whose language
 * is clear (shared/language-detect.ts), or from the language the visitor chose in the widget; then kept, so a
 * short "ok" or "danke" does not flip it. A language the bot does not answer in (the workspace's `answer`) gets
 * the fallback, and the visitor is told once, in their own language. Until it is known, the turn speaks the
 * browser locale's language, else the fallback, and stores nothing.
 */

export interface TurnLanguage {
  /** the language this turn answers in */
  language: string
  /** set: where the session's language came from; null: not known yet (this turn's is provisional) */
  source: LanguageSource | null
  /** the knowledge's language (the workspace's setting) */
  knowledge: string
  /** a note to put before this turn's reply: the fallback's, said once */
  notice: string | null
  /**
   * while the session's language is not known: the language this question is likely asked in when it is clearly
   * not the knowledge's, so retrieval still searches with its translation (05-translate.ts); null otherwise
   */
  asked?: string | null
  /**
   * The session's language settled by this turn, stored with the turn's own write (stage 10, `writeTurn`) rather
   * than in a statement of its own: one round trip less on a session's first turn.
   */
  store?: { language: string; source: LanguageSource } | null
}

export async function sessionLanguage(
  port: LanguagesPort | undefined,
  s: {
    tenantId: string
    session: { id: string; language?: string | null; language_source?: LanguageSource | null }
    question: string
    locale: string | null
    /** a language the visitor chose in the widget */
    chosen?: string | null
    /** a dry run (evaluation): nothing is stored */
    dryRun: boolean
  },
): Promise<TurnLanguage> {
  const settings: LanguageSettings = port ? await port.settingsFor(s.tenantId).catch(() => DEFAULT_LANGUAGES) : DEFAULT_LANGUAGES
  const knowledge = settings.knowledge
  const chosen = localeLanguage(s.chosen)
  // kept once known, unless the visitor now picks another one in the widget's menu
  const rechosen = chosen && !(s.session.language === chosen && s.session.language_source === 'visitor')
  if (s.session.language && !rechosen) return { language: s.session.language, source: s.session.language_source ?? 'detected', knowledge, notice: null }
  const detected = chosen ? null : await clearLanguage(s.question)
  const visitor = chosen ? { language: chosen, source: 'visitor' as const } : detected ? { language: detected, source: 'detected' as const } : null
  if (!visitor) {
    const provisional = localeLanguage(s.locale)
    const language = provisional && (settings.answer.length === 0 || settings.answer.includes(provisional)) ? provisional : settings.fallback
    return { language, source: null, knowledge, notice: null, asked: likelyLanguageSync(s.question, knowledge) }
  }
  const settled = settleLanguage(settings, visitor)
  const store = port && !s.dryRun ? { language: settled.language, source: settled.source } : null
  const notice = settled.outside ? message(settled.outside, 'language.fallback', { language: languageIn(settled.outside, settled.language) }) : null
  return { language: settled.language, source: settled.source, knowledge, notice, store }
}

/** The name of `code` in the language `lang` ("Englisch" for de), else the code. */
export function languageIn(lang: string, code: string): string {
  try {
    return new Intl.DisplayNames([lang, 'en'], { type: 'language' }).of(code) ?? code
  } catch {
    return code
  }
}
