import { NoticeCache, type ChangeFeed } from '../../db/change-feed.js'
import type { Clock } from '../../lib/clock.js'
import { ValidationError } from '../../lib/errors.js'
import { clearLanguage, loadDetector, clearLanguageSync } from '../shared/language-detect.js'
import { LANGUAGE_NAMES } from '../shared/language.js'
import { DEFAULT_LANGUAGES, majorityLanguage, normalizeSettings, settingsProblems, type LanguageSettings } from './languages.fns.js'
import { LANGUAGES_TOPIC, type LanguagesRepo } from './languages.repo.js'

/** A workspace's language settings: read (with the knowledge's language read from its pages), changed, and cached for the chat turn. */
export function createLanguagesService(deps: { repo: LanguagesRepo; clock: Clock; changes: ChangeFeed }) {
  const { repo, clock } = deps
  const cache = new NoticeCache<LanguageSettings | null>(deps.changes, LANGUAGES_TOPIC, { ttlMs: 60_000, max: 10_000, clock })

  async function detectKnowledge(tenantId: string) {
    const texts = await repo.sampleTexts(tenantId)
    if (!texts.length) return null
    await loadDetector()
    return majorityLanguage(texts.map((t) => clearLanguageSync(t)))
  }

  async function present(tenantId: string, saved: LanguageSettings | null) {
    const s = saved ?? DEFAULT_LANGUAGES
    return {
      ...s,
      detected_knowledge: await detectKnowledge(tenantId),
      configured: saved !== null,
      available: Object.entries(LANGUAGE_NAMES).map(([code, name]) => ({ code, name })),
    }
  }

  return {
    async get(tenantId: string) {
      return present(tenantId, await repo.find(tenantId))
    },

    async update(tenantId: string, input: LanguageSettings) {
      const s = normalizeSettings({
        knowledge: input.knowledge.toLowerCase(),
        answer: input.answer.map((a) => a.toLowerCase()),
        fallback: input.fallback.toLowerCase(),
      })
      const problem = settingsProblems(s)[0]
      if (problem) throw new ValidationError(problem.loc, problem.msg)
      await repo.save(tenantId, s, clock.now())
      return present(tenantId, s)
    },

    /** The settings a chat turn follows (cached per tenant, dropped on every instance when they change). */
    async settingsFor(tenantId: string): Promise<LanguageSettings> {
      return (await cache.get(tenantId, () => repo.find(tenantId))) ?? DEFAULT_LANGUAGES
    },

    setSessionLanguage: repo.setSessionLanguage,
    clearLanguage,
  }
}

export type LanguagesService = ReturnType<typeof createLanguagesService>
