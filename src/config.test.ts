import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CONFIG_KEYS, ConfigError, loadConfig } from './config.js'

const JWT = 'j'.repeat(40)
const KEY = 'ab'.repeat(32)
const dirs: string[] = []
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'scb-config-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('loadConfig', () => {
  it('refuses to start in production without JWT_SECRET or ENCRYPTION_KEY, naming what is missing', () => {
    const DATA_DIR = tempDir()
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR }, () => {})).toThrow(ConfigError)
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR }, () => {})).toThrow(/JWT_SECRET and ENCRYPTION_KEY/)
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR, JWT_SECRET: JWT }, () => {})).toThrow(/ENCRYPTION_KEY/)
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR, JWT_SECRET: JWT }, () => {})).not.toThrow(/JWT_SECRET/)
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR, ENCRYPTION_KEY: KEY }, () => {})).toThrow(/JWT_SECRET/)
    // An empty value counts as missing.
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR, JWT_SECRET: ' ', ENCRYPTION_KEY: KEY }, () => {})).toThrow(/JWT_SECRET/)
    const ok = loadConfig({ NODE_ENV: 'production', DATA_DIR, JWT_SECRET: JWT, ENCRYPTION_KEY: KEY }, () => {})
    expect(ok).toMatchObject({ isProduction: true, JWT_SECRET: JWT, ENCRYPTION_KEY: KEY })
  })

  it('generates missing secrets once outside production, warns, and keeps them in DATA_DIR', () => {
    const DATA_DIR = tempDir()
    const warnings: string[] = []
    const first = loadConfig({ DATA_DIR }, (m) => warnings.push(m))
    expect(first.JWT_SECRET.length).toBeGreaterThanOrEqual(32)
    expect(first.ENCRYPTION_KEY).toMatch(/^[0-9a-f]{64}$/)
    expect(warnings).toHaveLength(2)
    expect(warnings.join('\n')).toMatch(/JWT_SECRET/)
    expect(warnings.join('\n')).toMatch(/ENCRYPTION_KEY/)
    // Warnings name the variable, never the value.
    expect(warnings.join('\n')).not.toContain(first.JWT_SECRET)

    const file = join(DATA_DIR, 'secrets.json')
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ JWT_SECRET: first.JWT_SECRET, ENCRYPTION_KEY: first.ENCRYPTION_KEY })
    expect(statSync(file).mode & 0o077).toBe(0)

    const second = loadConfig({ DATA_DIR }, () => {})
    expect(second.JWT_SECRET).toBe(first.JWT_SECRET)
    expect(second.ENCRYPTION_KEY).toBe(first.ENCRYPTION_KEY)
    // A value that is set wins over the kept one.
    expect(loadConfig({ DATA_DIR, JWT_SECRET: JWT }, () => {}).JWT_SECRET).toBe(JWT)
  })

  it('applies defaults and converts types', () => {
    const DATA_DIR = tempDir()
    const c = loadConfig({ DATA_DIR, JWT_SECRET: JWT, ENCRYPTION_KEY: KEY }, () => {})
    expect(c).toMatchObject({
      PORT: 8000,
      HOST: '0.0.0.0',
      TRUST_PROXY: false,
      LOG_LEVEL: 'info',
      RUN_WORKER: true,
      REDIS_PREFIX: 'scb:',
      CORS_ORIGINS: [],
      isProduction: false,
      dataDir: DATA_DIR,
    })
    expect(c.DATABASE_URL).toBeUndefined()
    expect(c.REDIS_URL).toBeUndefined()
    const d = loadConfig(
      {
        DATA_DIR,
        JWT_SECRET: JWT,
        ENCRYPTION_KEY: KEY,
        PORT: '9001',
        TRUST_PROXY: 'true',
        CORS_ORIGINS: 'https://a.example, https://b.example ,',
        PUBLIC_BASE_URL: 'https://api.example/',
        FRONTEND_URL: 'https://app.example///',
        DATABASE_URL: '',
      },
      () => {},
    )
    expect(d).toMatchObject({
      PORT: 9001,
      TRUST_PROXY: true,
      CORS_ORIGINS: ['https://a.example', 'https://b.example'],
      PUBLIC_BASE_URL: 'https://api.example',
      FRONTEND_URL: 'https://app.example',
    })
    expect(d.DATABASE_URL).toBeUndefined()
    expect(Object.isFrozen(d)).toBe(true)
  })

  it('names each invalid variable', () => {
    const DATA_DIR = tempDir()
    const base = { DATA_DIR, JWT_SECRET: JWT, ENCRYPTION_KEY: KEY }
    expect(() => loadConfig({ ...base, PORT: 'eighty' }, () => {})).toThrow(/PORT/)
    expect(() => loadConfig({ ...base, PORT: '70000' }, () => {})).toThrow(/PORT/)
    expect(() => loadConfig({ ...base, LOG_LEVEL: 'loud' }, () => {})).toThrow(/LOG_LEVEL/)
    expect(() => loadConfig({ ...base, ENCRYPTION_KEY: 'short' }, () => {})).toThrow(/ENCRYPTION_KEY/)
    expect(() => loadConfig({ ...base, JWT_SECRET: 'too-short' }, () => {})).toThrow(/JWT_SECRET/)
    expect(() => loadConfig({ ...base, TRUST_PROXY: 'perhaps' }, () => {})).toThrow(/TRUST_PROXY/)
  })

  it('lists every variable the issue names', () => {
    for (const key of [
      'PORT',
      'HOST',
      'DATA_DIR',
      'DATABASE_URL',
      'REDIS_URL',
      'JWT_SECRET',
      'ENCRYPTION_KEY',
      'SMTP_URL',
      'EMAIL_FROM',
      'PUBLIC_BASE_URL',
      'FRONTEND_URL',
      'CORS_ORIGINS',
      'LLM_BASE_URL',
      'LOG_LEVEL',
      'TRUST_PROXY',
    ]) {
      expect(CONFIG_KEYS).toContain(key)
    }
  })
})
