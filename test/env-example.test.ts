import { readFileSync } from 'node:fs'
import { parse } from 'dotenv'
import { describe, expect, it } from 'vitest'
import { CONFIG_KEYS, loadConfig } from '../src/config.js'
import { ENV_EXAMPLE_PATH, renderEnvExample } from '../scripts/env-example.js'

/** `.env.example` is generated from src/config.ts; these fail when the two drift apart. */
describe('.env.example', () => {
  const file = readFileSync(ENV_EXAMPLE_PATH, 'utf8')

  it('is what npm run env:example writes from the current config (regenerate it when this fails)', () => {
    expect(file).toBe(renderEnvExample())
  })

  it('lists every variable once, each with a line of meaning', () => {
    const parsed = parse(file)
    expect(Object.keys(parsed).sort()).toEqual([...CONFIG_KEYS].sort())
    const lines = file.split('\n')
    for (const key of CONFIG_KEYS) {
      const at = lines.findIndex((l) => l.startsWith(`${key}=`))
      expect(lines[at - 1], key).toMatch(/^# \S.{8,}/)
    }
  })

  it('is a valid configuration as it stands: copied to .env it starts the service on the defaults', () => {
    const fromFile = loadConfig(
      { ...parse(file), DATA_DIR: '/tmp/scb-env-example-unused', JWT_SECRET: 'x'.repeat(32), ENCRYPTION_KEY: '0'.repeat(64) },
      () => {},
    )
    const defaults = loadConfig({ DATA_DIR: '/tmp/scb-env-example-unused', JWT_SECRET: 'x'.repeat(32), ENCRYPTION_KEY: '0'.repeat(64) }, () => {})
    expect(fromFile).toEqual(defaults)
  })
})
