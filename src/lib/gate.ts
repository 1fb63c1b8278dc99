/**
 * At most `slots` tasks at once in this process; up to `queue` more wait their turn, each at most `waitMs`, and
 * beyond that `busy()` is thrown at once. A finished task hands its slot to the longest waiting one. Used where each
 * task holds a large buffer (an uploaded file and its copies), so that many at once cannot exhaust the heap: a
 * waiting request's body is not read, so its bytes stay in the socket (TCP back-pressure), not in memory.
 */
export interface Gate {
  run<T>(fn: () => Promise<T>, busy: () => Error): Promise<T>
  readonly running: number
  readonly waiting: number
}

export function createGate(slots: number, queue: number, waitMs: number): Gate {
  let running = 0
  const waiting: { go: () => void }[] = []

  function release() {
    const next = waiting.shift()
    if (next) next.go()
    else running--
  }

  function acquire(busy: () => Error): Promise<void> {
    if (running < slots) {
      running++
      return Promise.resolve()
    }
    if (waiting.length >= queue) return Promise.reject(busy())
    return new Promise<void>((resolve, reject) => {
      const entry = {
        go: () => {
          clearTimeout(timer)
          resolve()
        },
      }
      const timer = setTimeout(() => {
        const i = waiting.indexOf(entry)
        if (i >= 0) waiting.splice(i, 1)
        reject(busy())
      }, waitMs)
      waiting.push(entry)
    })
  }

  return {
    async run(fn, busy) {
      await acquire(busy)
      try {
        return await fn()
      } finally {
        release()
      }
    },
    get running() {
      return running
    },
    get waiting() {
      return waiting.length
    },
  }
}
