import { expect } from 'vitest'

/**
 * Linear time without a fixed wall-clock bound (issue 50, the ReDoS class): a scan on the shape that made the pattern
 * it replaced super-linear, at the longest input its call site allows, against a baseline, the same scan on ordinary
 * text of the same length. Both are CPU time of as many repetitions as make the baseline last 20 ms, the least of
 * three runs each, so a loaded machine slows both alike. A linear scan stays within a few times its baseline (at
 * most 6.2 measured: a scan that reads a run of blanks several times, against one that skips by indexOf), hence the
 * default of 20; the patterns replaced took 350 to 140,000 times theirs at these lengths.
 */
export const cpuMs = (f: () => void) => {
  const t0 = process.cpuUsage()
  f()
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / 1000
}

/** CPU ms a run of `f` over `times` runs, stopped early once past `stopAt` ms in all (a failing case ends soon). */
function perRun(f: () => void, times: number, stopAt = Number.POSITIVE_INFINITY): number {
  const t0 = process.cpuUsage()
  const spent = () => {
    const d = process.cpuUsage(t0)
    return (d.user + d.system) / 1000
  }
  let runs = 0
  while (runs < times) {
    f()
    runs++
    if (spent() > stopAt) break
  }
  return spent() / runs
}

export function linearAgainstBaseline<T>(scan: (s: string) => T, hostile: string, ordinary: string, ratio = 20): { base: number; worst: number } {
  expect(hostile.length, 'compare at the same length').toBe(ordinary.length)
  let times = 1
  while (times < 1 << 16 && perRun(() => scan(ordinary), times) * times < 20) times *= 2
  const base = Math.min(...[0, 1, 2].map(() => perRun(() => scan(ordinary), times)))
  const worst = Math.min(...[0, 1, 2].map(() => perRun(() => scan(hostile), times, 2 * ratio * base * times)))
  if (process.env.LINEAR_TIME_LOG)
    console.log(
      `linear-time: ${(worst / base).toFixed(2)}x (${worst.toFixed(4)} / ${base.toFixed(4)} ms, ${hostile.length} chars) ${JSON.stringify(hostile.slice(0, 12))}`,
    )
  expect(worst, `${worst.toFixed(4)} ms a run against a baseline of ${base.toFixed(4)} ms (${hostile.length} characters)`).toBeLessThan(ratio * base)
  return { base, worst }
}

/** `unit` repeated to exactly `n` characters. */
export const ofLength = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n)

/**
 * Random texts over the characters a replaced pattern cares about (a seeded generator: the same texts each run), and
 * `same`, which checks that a scan gives exactly what the pattern gives on `n` of them.
 */
export function equivalence(start = 50) {
  let seed = start
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed % n
  }
  const text = (alphabet: string[], max: number) => Array.from({ length: rand(max) }, () => alphabet[rand(alphabet.length)]).join('')
  const same = <T>(n: number, alphabet: string[], max: number, scan: (s: string) => T, pattern: (s: string) => T) => {
    for (let i = 0; i < n; i++) {
      const s = text(alphabet, max)
      expect(scan(s), JSON.stringify(s)).toEqual(pattern(s))
    }
  }
  return { rand, text, same }
}
