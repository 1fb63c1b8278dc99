import { describe, expect, it } from 'vitest'
import { createGate } from './gate.js'

const later = () => {
  let open!: () => void
  const p = new Promise<void>((r) => (open = r))
  return { p, open }
}

describe('createGate', () => {
  it('runs at most `slots` at once, hands the slot on in order, and refuses beyond the queue at once', async () => {
    const gate = createGate(2, 1, 10_000)
    const busy = () => new Error('busy')
    const order: string[] = []
    const a = later()
    const b = later()
    const c = later()
    const ra = gate.run(async () => (await a.p, order.push('a')), busy)
    const rb = gate.run(async () => (await b.p, order.push('b')), busy)
    const rc = gate.run(async () => (order.push('c started'), await c.p, order.push('c')), busy)
    await expect(gate.run(async () => 1, busy)).rejects.toThrow('busy')
    expect(gate.running).toBe(2)
    expect(gate.waiting).toBe(1)
    b.open()
    await rb
    await new Promise((r) => setTimeout(r, 0))
    expect(order).toEqual(['b', 'c started'])
    a.open()
    c.open()
    await Promise.all([ra, rc])
    expect(gate.running).toBe(0)
    expect(gate.waiting).toBe(0)
  })

  it('a waiting task gives up after waitMs with busy, and its place is freed', async () => {
    const gate = createGate(1, 4, 30)
    const hold = later()
    const first = gate.run(
      () => hold.p,
      () => new Error('busy'),
    )
    await expect(
      gate.run(
        async () => 1,
        () => new Error('busy'),
      ),
    ).rejects.toThrow('busy')
    expect(gate.waiting).toBe(0)
    hold.open()
    await first
    expect(
      await gate.run(
        async () => 2,
        () => new Error('busy'),
      ),
    ).toBe(2)
  })

  it('a failing task releases its slot', async () => {
    const gate = createGate(1, 0, 10)
    await expect(
      gate.run(
        async () => Promise.reject(new Error('boom')),
        () => new Error('busy'),
      ),
    ).rejects.toThrow('boom')
    expect(
      await gate.run(
        async () => 3,
        () => new Error('busy'),
      ),
    ).toBe(3)
  })
})
