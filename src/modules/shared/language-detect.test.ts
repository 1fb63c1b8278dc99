import { beforeAll, describe, expect, it } from 'vitest'
import { clearLanguageSync, likelyLanguageSync, loadDetector } from './language-detect.js'

/** The likely language of a question whose language is not clear enough to settle a session (#40, retrieval only). */
describe('likely language for one search', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    await loadDetector()
  })

  it('names a clearly foreign language that is not clear enough to settle the session', () => {
    const q = 'cambiar el motor de búsqueda en edge'
    expect(clearLanguageSync(q)).toBeNull()
    expect(likelyLanguageSync(q, 'en')).toBe('es')
  })

  it('stays silent for English-looking, short or knowledge-language questions', () => {
    // German 0.76 against English 0.73: too close to call it foreign
    expect(likelyLanguageSync('download ddg browser', 'en')).toBeNull()
    expect(likelyLanguageSync('ok danke', 'en')).toBeNull()
    expect(likelyLanguageSync('How do I deactivate my account?', 'en')).toBeNull()
    expect(likelyLanguageSync('Wie kann ich mein Benutzerkonto deaktivieren?', 'de')).toBeNull()
  })
})
