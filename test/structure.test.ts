import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { explain, moduleCycles, moduleGraph } from '../scripts/module-graph.js'
import { currentSection, routeMapSection } from '../scripts/routes-map.js'

/** The layout rules of docs/ARCHITECTURE.md that a reader relies on, held by CI. */
describe('structure', () => {
  it('has no import cycle between modules (src/modules/<a> importing <b> importing <a>)', () => {
    const graph = moduleGraph()
    expect(graph.size).toBeGreaterThan(10)
    expect(graph.get('chat')?.has('retrieval')).toBe(true)
    const cycles = moduleCycles(graph).map((c) => explain(c, graph))
    expect(cycles).toEqual([])
  })

  it('keeps every file under src/ below 450 lines', () => {
    const lines = (dir: string): [string, number][] =>
      readdirSync(dir).flatMap((name) => {
        const p = join(dir, name)
        if (statSync(p).isDirectory()) return lines(p)
        if (!/\.(ts|mts|mjs)$/.test(name)) return []
        const text = readFileSync(p, 'utf8')
        return [[relative(process.cwd(), p), text.split('\n').length - (text.endsWith('\n') ? 1 : 0)] as [string, number]]
      })
    const big = lines('src').filter(([, n]) => n >= 450)
    expect(big).toEqual([])
  })

  it('has the route map of docs/ARCHITECTURE.md in step with the route table (npm run routes:map)', async () => {
    expect(currentSection()).toBe(await routeMapSection())
  }, 120_000)
})
