import { describe, expect, it } from 'vitest'
import { checkHealth } from './health.fns.js'

const now = new Date('2026-01-01T00:00:00Z')
const prose = (n: number, seed = 'a') =>
  Array.from({ length: n }, (_, i) => `Sentence ${i} ${seed} describes feature ${i * 7} and option ${i * 13} for customers.`).join(' ')
const types = (text: string) => checkHealth(text, now).warnings.map((w) => w.type)

describe('checkHealth', () => {
  it('gives a clean, structured document a perfect score', () => {
    const h = checkHealth(`# Guide\n\n## Install\n\n${prose(40)}\n\n## Use\n\n${prose(40, 'b')}`, now)
    expect(h).toEqual({ score: 100, checked_at: now.toISOString(), warnings: [], error: null })
  })

  it('flags an empty document with score 0', () => {
    expect(checkHealth('  \n ', now)).toMatchObject({ score: 0, warnings: [{ type: 'empty', severity: 'high' }] })
  })

  it('flags a very short document', () => {
    const h = checkHealth('Call us.', now)
    expect(h.warnings[0]).toMatchObject({ type: 'too_short', severity: 'high' })
    expect(h.score).toBeLessThan(70)
  })

  it('flags extraction garbage: replacement characters, (cid:n) runs, mojibake, symbol soup', () => {
    expect(types(`${prose(30)} ${'\uFFFD'.repeat(40)}`)).toContain('extraction_garbage')
    expect(types(`${prose(30)} ${'(cid:12)'.repeat(10)}`)).toContain('extraction_garbage')
    expect(types(`${prose(30)} CafÃ© rÃ©sumÃ© dÃ©jÃ  vu Ã¨ Ã¯`)).toContain('encoding_errors')
    expect(types(`# Data\n\n${'%$#@! 123 456 ;;; ::: ||| '.repeat(40)}`)).toContain('low_letter_ratio')
  })

  it('flags giant sections, missing structure and unfinished sections', () => {
    expect(types(`# One\n\n${prose(250)}`)).toContain('giant_section')
    expect(types(prose(200))).toContain('no_structure')
    const h = checkHealth(`# Guide\n\n## Install\n\n## Configure\n\n${prose(20)}\n\n## Troubleshooting\n`, now)
    const w = h.warnings.find((x) => x.type === 'unfinished_section')!
    expect(w.message).toContain('"Install"')
    expect(w.message).toContain('"Troubleshooting"')
    expect(types(`# A\n\n${prose(20)} TODO: write this. TBD.`)).toContain('placeholder_text')
  })

  it('flags duplicated and low-information text', () => {
    const para = 'This paragraph is repeated many times across the document without adding anything.'
    const dup = checkHealth(`# A\n\n${prose(20)}\n\n${Array(8).fill(para).join('\n\n')}`, now)
    expect(dup.warnings.find((w) => w.type === 'duplicate_content')?.severity).toBe('medium')
    expect(types(`# A\n\n${'buy now cheap buy now cheap '.repeat(100)}`)).toContain('low_information')
  })

  it('is deterministic and orders warnings by severity', () => {
    const text = `# A\n\n## Empty\n\n# B\n\n${'\uFFFD'.repeat(50)} ${prose(5)}`
    expect(checkHealth(text, now)).toEqual(checkHealth(text, now))
    const sev = checkHealth(text, now).warnings.map((w) => w.severity)
    expect([...sev].sort((a, b) => ['high', 'medium', 'low'].indexOf(a) - ['high', 'medium', 'low'].indexOf(b))).toEqual(sev)
  })
})
