import { describe, expect, it } from 'vitest'
import { createRecentImages } from './attachments.recent.js'

describe('recent images', () => {
  it('gives an image back once', () => {
    const r = createRecentImages(100, 1000)
    r.put('a', new Uint8Array(10))
    expect(r.take('a')?.length).toBe(10)
    expect(r.take('a')).toBeUndefined()
    expect(r.bytes).toBe(0)
  })

  it('keeps at most its bytes, dropping the oldest first', () => {
    const r = createRecentImages(25, 60_000)
    r.put('a', new Uint8Array(10))
    r.put('b', new Uint8Array(10))
    r.put('c', new Uint8Array(10))
    expect(r.bytes).toBeLessThanOrEqual(25)
    expect(r.take('a')).toBeUndefined()
    expect(r.take('b')?.length).toBe(10)
    expect(r.take('c')?.length).toBe(10)
    r.put('huge', new Uint8Array(26))
    expect(r.take('huge')).toBeUndefined()
  })

  it('forgets what is older than its age', () => {
    let t = 0
    const r = createRecentImages(100, 1000, () => t)
    r.put('a', new Uint8Array(1))
    t = 500
    r.put('b', new Uint8Array(1))
    t = 1200
    expect(r.take('a')).toBeUndefined()
    expect(r.take('b')?.length).toBe(1)
  })
})
