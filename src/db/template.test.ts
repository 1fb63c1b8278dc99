import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { pgliteVersion, seedFromTemplate, templateCurrent, templateUsable } from './template.js'

const root = mkdtempSync(join(tmpdir(), 'scb-template-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

function fakeTemplate(name: string, migrations: string[], version = pgliteVersion()) {
  const dir = join(root, name)
  mkdirSync(join(dir, 'pgdata', 'base'), { recursive: true })
  writeFileSync(join(dir, 'pgdata', 'PG_VERSION'), '17\n')
  writeFileSync(join(dir, 'pgdata', 'base', 'file'), 'x')
  writeFileSync(join(dir, 'template.json'), JSON.stringify({ pglite: version, migrations }))
  return dir
}

describe('the migrated template of a fresh embedded database', () => {
  it('is usable when it carries the first migrations of the current list on the installed PGlite', () => {
    const m = { pglite: '1.0', migrations: ['0001_a', '0002_b'] }
    expect(templateUsable(m, ['0001_a', '0002_b'], '1.0')).toBe(true)
    expect(templateCurrent(m, ['0001_a', '0002_b'], '1.0')).toBe(true)
    // A newer migration on top: still usable (it runs at open), no longer current (the build remakes it).
    expect(templateUsable(m, ['0001_a', '0002_b', '0003_c'], '1.0')).toBe(true)
    expect(templateCurrent(m, ['0001_a', '0002_b', '0003_c'], '1.0')).toBe(false)
    // A migration sorted before one it carries, one it carries that is gone, another PGlite: ignored.
    expect(templateUsable(m, ['0001_a', '0001_z', '0002_b'], '1.0')).toBe(false)
    expect(templateUsable(m, ['0001_a'], '1.0')).toBe(false)
    expect(templateUsable(m, ['0001_a', '0002_b'], '2.0')).toBe(false)
    expect(templateUsable(null, ['0001_a'], '1.0')).toBe(false)
  })

  it('seeds only a fresh folder, from a usable template', () => {
    const tpl = fakeTemplate('good', ['0001_a'])
    const fresh = join(root, 'data1', 'pgdata')
    expect(seedFromTemplate(fresh, tpl, ['0001_a', '0002_b'])).toEqual(['0001_a'])
    expect(readFileSync(join(fresh, 'base', 'file'), 'utf8')).toBe('x')
    expect(readdirSync(join(root, 'data1'))).toEqual(['pgdata'])
    // Already a database there: untouched.
    writeFileSync(join(fresh, 'base', 'file'), 'mine')
    expect(seedFromTemplate(fresh, tpl, ['0001_a'])).toBeNull()
    expect(readFileSync(join(fresh, 'base', 'file'), 'utf8')).toBe('mine')
    // A stale template, none at all, a folder with other files: nothing done.
    const stale = fakeTemplate('stale', ['0001_a', '0009_gone'])
    expect(seedFromTemplate(join(root, 'data2'), stale, ['0001_a', '0002_b'])).toBeNull()
    expect(seedFromTemplate(join(root, 'data3'), null, ['0001_a'])).toBeNull()
    expect(seedFromTemplate(join(root, 'data4'), fakeTemplate('old', ['0001_a'], '0.0.1'), ['0001_a'])).toBeNull()
    mkdirSync(join(root, 'data5'))
    writeFileSync(join(root, 'data5', 'other'), '')
    expect(seedFromTemplate(join(root, 'data5'), tpl, ['0001_a'])).toBeNull()
  })
})
