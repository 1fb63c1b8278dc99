import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCipher } from '../src/lib/crypto.js'
import { checkKeyFingerprint } from '../src/lib/key-fingerprint.js'
import { startApp, type TestApp } from './helpers/app.js'
import { memoryLogger } from './helpers/logs.js'

/** Issue 37: two instances on one database with different ENCRYPTION_KEYs are detected, and say which setting differs. */
let t: TestApp
beforeAll(async () => {
  t = await startApp()
}, 240_000)
afterAll(() => t?.close())

const OTHER = 'ab'.repeat(32)

describe('ENCRYPTION_KEY fingerprint', () => {
  it('the started instance recorded its key; the same key matches; another is refused in production, warned about elsewhere', async () => {
    const db = t.ctx.database.db
    const logs = memoryLogger()
    expect(await checkKeyFingerprint(db, t.ctx.config.ENCRYPTION_KEY, { isProduction: true, log: logs.log })).toBe('match')
    await expect(checkKeyFingerprint(db, OTHER, { isProduction: true, log: logs.log })).rejects.toThrow(/ENCRYPTION_KEY differs/)
    expect(await checkKeyFingerprint(db, OTHER, { isProduction: false, log: logs.log })).toBe('mismatch')
    expect(logs.text()).toContain('ENCRYPTION_KEY')
    expect(logs.text()).not.toContain(OTHER)
    expect(logs.text()).not.toContain(t.ctx.config.ENCRYPTION_KEY)
  })

  it('a secret written under another key fails naming ENCRYPTION_KEY, not "unable to authenticate data"', () => {
    const written = createCipher(OTHER).encrypt('smtp-password')
    expect(() => t.ctx.cipher.decrypt(written)).toThrow(/ENCRYPTION_KEY differs/)
  })
})
