import { describe, expect, it } from 'vitest'
import { createRunProgress, mapCounted, presentRunProgress } from './gaps.progress.js'

describe('gap run progress', () => {
  it('saves at most once per interval, in order, and the last counts on flush; done never passes total', async () => {
    let clock = 0
    const saved: { done: number; total: number }[] = []
    const p = createRunProgress(
      async (c) => {
        await new Promise((r) => setTimeout(r, 5 - saved.length)) // later writes finish sooner: order must hold anyway
        saved.push(c)
      },
      { everyMs: 100, now: () => clock },
    )
    p.add(2) // saved: first write
    p.step()
    p.step()
    p.step() // capped at total
    clock = 150
    p.add(3) // saved: interval passed
    p.step()
    await p.flush()
    expect(saved).toEqual([
      { done: 0, total: 2 },
      { done: 2, total: 5 },
      { done: 3, total: 5 },
    ])
  })

  it('counts each finished item of a bounded parallel map, results in input order', async () => {
    const p = createRunProgress(async () => {})
    p.add(5)
    const out = await mapCounted([30, 10, 20, 0, 5], 2, p, async (ms, i) => {
      await new Promise((r) => setTimeout(r, ms))
      return i
    })
    expect(out).toEqual([0, 1, 2, 3, 4])
    expect(p.counts()).toEqual({ done: 5, total: 5 })
  })

  it('shows none while queued, the saved counts while running, complete when done', () => {
    expect(presentRunProgress('queued', null)).toBeNull()
    expect(presentRunProgress('running', null)).toEqual({ done: 0, total: 0 })
    expect(presentRunProgress('running', { progress: { done: 3, total: 9 } })).toEqual({ done: 3, total: 9 })
    expect(presentRunProgress('done', { mode: 'mode_a', progress: { done: 8, total: 9 } })).toEqual({ done: 9, total: 9 })
    expect(presentRunProgress('failed', null)).toBeNull()
  })
})
