/**
 * Counts of a gap analyzer run for progress bars: `total` is the steps known so far (each mode has two fixed
 * ones, finding its items and writing them, then one per topic or cluster whose coverage it measures, added when
 * found; so the total grows as the run learns its work, as a crawl's does) and `done` those finished. Saved
 * to the run row at most every `everyMs`, one write at a time, the last state always written by `flush`.
 */
export interface RunCounts {
  done: number
  total: number
}

export interface RunProgress {
  add(steps: number): void
  step(n?: number): void
  counts(): RunCounts
  /** Writes the current counts (after any write still in flight) and waits for it. */
  flush(): Promise<void>
}

export function createRunProgress(save: (c: RunCounts) => Promise<void>, opts: { everyMs?: number; now?: () => number } = {}): RunProgress {
  const everyMs = opts.everyMs ?? 500
  const now = opts.now ?? Date.now
  const c: RunCounts = { done: 0, total: 0 }
  let lastSaved = Number.NEGATIVE_INFINITY
  let chain: Promise<void> = Promise.resolve()
  const write = () => {
    lastSaved = now()
    const snapshot = { ...c }
    // a failed write only loses a progress figure: the run goes on
    chain = chain.then(() => save(snapshot).catch(() => {}))
    return chain
  }
  const maybeSave = () => {
    if (now() - lastSaved >= everyMs) void write()
  }
  return {
    add(steps) {
      c.total += Math.max(0, steps)
      maybeSave()
    },
    step(n = 1) {
      c.done = Math.min(c.total, c.done + n)
      maybeSave()
    },
    counts: () => ({ ...c }),
    flush: write,
  }
}

/** A run's progress as the status endpoint shows it: none while queued, the saved counts while running, complete once done. */
export function presentRunProgress(status: string, stats: unknown): RunCounts | null {
  const p = (stats as { progress?: Partial<RunCounts> } | null)?.progress
  const counts = p && Number.isInteger(p.done) && Number.isInteger(p.total) ? { done: p.done!, total: p.total! } : null
  if (status === 'queued') return null
  if (status === 'running') return counts ?? { done: 0, total: 0 }
  if (status === 'done' && counts) return { done: counts.total, total: counts.total }
  return counts
}

/** `fn` over `items`, at most `limit` at once, each finished item a step of `progress`; results in input order. */
export async function mapCounted<T, R>(items: T[], limit: number, progress: Pick<RunProgress, 'step'>, fn: (t: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i]!, i)
        progress.step()
      }
    }),
  )
  return out
}
