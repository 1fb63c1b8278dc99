import { describe, expect, it } from 'vitest'
import { Readable } from 'node:stream'
import { findNul } from './input.js'

describe('findNul', () => {
  it('finds a NUL at any depth and names its path', () => {
    expect(findNul('a\u0000')).toEqual([])
    expect(findNul({ a: 'ok', b: ['x', { c: 'y\u0000' }] })).toEqual(['b', 1, 'c'])
    expect(findNul(Object.assign(Object.create(null), { q: '\u0000' }))).toEqual(['q'])
    expect(findNul({ ['k\u0000']: 1 })).toEqual(['k\u0000'])
  })

  it('passes clean input and skips buffers and streams', () => {
    expect(findNul({ a: 'fine', n: 1, t: true, z: null, list: ['x'] })).toBeNull()
    expect(findNul(undefined)).toBeNull()
    expect(findNul({ file: Buffer.from([0]), stream: Readable.from(['\u0000']) })).toBeNull()
  })

  it('stops at a bounded depth', () => {
    let deep: unknown = '\u0000'
    for (let i = 0; i < 100; i++) deep = [deep]
    expect(findNul(deep)).toBeNull()
  })
})
