import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { clearLanguageSync, detectorFromData, likelyLanguageSync, loadDetector, writeDetectorData } from './language-detect.js'

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

/** The build's JSON form of eld's database (issue 41: the first turn paid 0.5 s loading eld's object literal). */
describe("eld's database read from the build's JSON", { timeout: 60_000 }, () => {
  const texts = [
    'Which file types can I upload to the knowledge base?',
    'Wie kann ich mein Benutzerkonto deaktivieren?',
    'cambiar el motor de búsqueda en edge',
    'Comment puis-je réinitialiser mon mot de passe ?',
    'Come posso cambiare la lingua del mio account?',
    'Hoe kan ik mijn abonnement opzeggen?',
    'Jak mogę zmienić adres e-mail na koncie?',
    'Как изменить пароль в настройках?',
    'パスワードを変更するにはどうすればいいですか',
    '如何更改我的密码',
    'كيف يمكنني تغيير كلمة المرور',
    'Πώς μπορώ να αλλάξω τον κωδικό μου;',
    'Şifremi nasıl değiştirebilirim?',
    'ok danke',
    'password reset',
  ]

  it('detects exactly what eld loaded by its own entry does, from a file of the installed version only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eld-'))
    try {
      const file = join(dir, 'eld-small.json')
      await writeDetectorData(file)
      const fast = await detectorFromData(file)
      const { eld } = await import('eld/small')
      expect(fast).not.toBeNull()
      for (const text of texts) {
        const a = fast!.detect(text)
        const b = eld.detect(text)
        expect({ text, language: a.language, reliable: a.isReliable(), scores: a.getScores() }).toEqual({
          text,
          language: b.language,
          reliable: b.isReliable(),
          scores: b.getScores(),
        })
      }
      // a file written from another eld version, or none: the package's own entry is used instead
      const other = join(dir, 'other.json')
      writeFileSync(other, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), eld: '0.0.1' }))
      expect(await detectorFromData(other)).toBeNull()
      expect(await detectorFromData(join(dir, 'missing.json'))).toBeNull()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
