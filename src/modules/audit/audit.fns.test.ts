import { describe, expect, it } from 'vitest'
import { boundDetail, decodeCursor, encodeCursor } from './audit.fns.js'

describe('audit cursor', () => {
  it('round-trips the last entry time and id, and refuses anything else', () => {
    const at = new Date('2026-03-01T10:00:00.123Z')
    expect(decodeCursor(encodeCursor(at, '42'))).toEqual({ at, id: '42' })
    expect(decodeCursor('nonsense')).toBeNull()
    expect(decodeCursor(Buffer.from('1.2; DROP TABLE x').toString('base64url'))).toBeNull()
  })
})

describe('boundDetail', () => {
  it('keeps details short', () => {
    const d = boundDetail({ long: 'x'.repeat(1000), list: Array.from({ length: 100 }, (_, i) => i), n: 1, gone: undefined })
    expect((d.long as string).length).toBe(300)
    expect(d.list).toHaveLength(50)
    expect(d.n).toBe(1)
    expect('gone' in d).toBe(false)
  })
})
