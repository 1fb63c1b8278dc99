import { AsyncLocalStorage } from 'node:async_hooks'
import type { ChatStream, LlmClient } from '../llm/llm.js'

/**
 * How long a turn waited on the language model: the union of the intervals during which at least one
 * model call (guard, rewrite, embedding, generation, validation) was in flight. The turn's total minus
 * this is the time the service itself added, the figure the chat benchmark reports and the debug record
 * keeps. Calls made outside `measure` are not counted.
 */
interface Meter {
  inFlight: number
  since: number
  ms: number
}

export function createModelMeter(llm: LlmClient) {
  const als = new AsyncLocalStorage<Meter>()
  const begin = () => {
    const m = als.getStore()
    if (!m) return () => {}
    if (m.inFlight++ === 0) m.since = performance.now()
    let ended = false
    return () => {
      if (ended) return
      ended = true
      if (--m.inFlight === 0) m.ms += performance.now() - m.since
    }
  }
  const metered: LlmClient = {
    async chat(opts) {
      const end = begin()
      try {
        return await llm.chat(opts)
      } finally {
        end()
      }
    },
    async embed(opts) {
      const end = begin()
      try {
        return await llm.embed(opts)
      } finally {
        end()
      }
    },
    chatStream(opts): ChatStream {
      const end = begin()
      const inner = llm.chatStream(opts)
      const it = inner[Symbol.asyncIterator]()
      return {
        [Symbol.asyncIterator]: () => ({
          async next() {
            try {
              const r = await it.next()
              if (r.done) end()
              return r
            } catch (err) {
              end()
              throw err
            }
          },
          async return(value?: unknown) {
            end()
            return (await it.return?.(value)) ?? { done: true as const, value: undefined }
          },
        }),
        result: () => inner.result(),
      }
    },
  }
  return {
    llm: metered,
    /** Runs `fn` with a meter; `modelMs()` reads it at any point inside. */
    measure<T>(fn: (modelMs: () => number) => Promise<T>): Promise<T> {
      const m: Meter = { inFlight: 0, since: 0, ms: 0 }
      const read = () => Math.round((m.ms + (m.inFlight > 0 ? performance.now() - m.since : 0)) * 100) / 100
      return als.run(m, () => fn(read))
    },
  }
}

export type ModelMeter = ReturnType<typeof createModelMeter>
