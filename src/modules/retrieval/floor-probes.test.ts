import { describe, expect, it } from 'vitest'
import { createProbeFloors, floorFromProbes, OFF_TOPIC_PROBES } from './floor-probes.js'

describe('floor from off-topic probes', () => {
  it('takes the second highest top cosine plus a tenth of the way to 1', () => {
    // one probe on the knowledge's own subject (0.7) is left out
    expect(floorFromProbes([0.12, 0.7, 0.2, 0.15, 0.1, 0.18, 0.11, 0.14])).toBe(0.28)
    // an ada-002-like scale
    expect(floorFromProbes([0.74, 0.75, 0.73, 0.76, 0.72, 0.74, 0.73, 0.75])).toBe(0.775)
  })

  it('tells nothing from too few probes', () => {
    expect(floorFromProbes([0.2, 0.3])).toBeNull()
  })

  it('embeds the probes once, measures each corpus version once, and tries again after a failed embedding', async () => {
    let embeds = 0
    let fail = true
    let lookups = 0
    const floor = createProbeFloors({
      embed: async (_key, texts) => {
        embeds++
        if (fail) throw new Error('provider down')
        return texts.map((_, i) => [i])
      },
      nearest: async (_t, _c, v) => {
        lookups++
        return 0.1 + (v[0] ?? 0) / 100
      },
    })
    const corpus = { n: 10, totalLen: 100, nEmbedded: 10, version: 1 }
    expect(await floor('t1', corpus, 'k')).toBeNull()
    fail = false
    const first = await floor('t1', corpus, 'k')
    expect(first).toBeCloseTo(0.16 + 0.1 * (1 - 0.16), 4)
    expect(await floor('t1', corpus, 'k')).toBe(first)
    expect(lookups).toBe(OFF_TOPIC_PROBES.length)
    await floor('t1', { ...corpus, version: 2 }, 'k')
    expect(lookups).toBe(2 * OFF_TOPIC_PROBES.length)
    expect(embeds).toBe(2)
    expect(await floor('t2', { ...corpus, nEmbedded: 0 }, 'k')).toBeNull()
  })
})
