import { describe, expect, it } from 'vitest'
import { BudgetLru } from './budget-lru.js'

describe('BudgetLru', () => {
  it('evicts the least recently used entries until a new one fits, and replaces a key in place', () => {
    const lru = new BudgetLru<{ bytes: number; v: string }>(100)
    lru.set('a', { bytes: 40, v: 'a' })
    lru.set('b', { bytes: 40, v: 'b' })
    expect(lru.get('a')?.v).toBe('a') // a is now the most recent
    lru.set('c', { bytes: 40, v: 'c' }) // evicts b, not a
    expect(lru.get('b')).toBeUndefined()
    expect(lru.get('a')?.v).toBe('a')
    lru.set('a', { bytes: 60, v: 'a2' }) // replaces a: 60 + 40 fits
    expect(lru.get('a')?.v).toBe('a2')
    expect(lru.get('c')?.v).toBe('c')
    lru.set('d', { bytes: 50, v: 'd' }) // evicts a (least recent after c was read), then fits
    expect(lru.get('a')).toBeUndefined()
    expect(lru.get('c')?.v).toBe('c')
    expect(lru.get('d')?.v).toBe('d')
  })
})
