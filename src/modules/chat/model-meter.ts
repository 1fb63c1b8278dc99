import type { ChatStream, LlmClient } from '../llm/llm.js'
import type { ModelWait } from '../retrieval/retrieval.types.js'

/**
 * How long a turn waited on the language model: the union of the intervals during which at least one
 * model call (guard, rewrite, embedding, generation, validation) was in flight. The turn's total minus
 * this is the time the service itself added, the figure the chat benchmark reports and the debug record
 * keeps. Each turn has its own meter and its own metered client (TurnDeps.llm), and hands the meter to
 * retrieval for the query embedding (SearchOptions.modelWait); calls made elsewhere are not counted.
 *
 * It was an AsyncLocalStorage once: on Node 20 that turns on async hooks for every promise of the process
 * (an init hook per promise, the store propagated to each), 2-3% of the server's CPU under load in bench:chat
 * for one number per turn. The meter is handed on explicitly instead.
 */
export interface TurnMeter {
  /** The model client whose calls this meter counts. */
  llm: LlmClient
  /** For calls made through another client (retrieval's query embedding): begin() when one starts, its result when it ends. */
  wait: ModelWait
  /** The model's time so far, in ms (a call in flight counts up to now). */
  read: () => number
}

export function createModelMeter(llm: LlmClient) {
  return {
    /** A new turn's meter, with its client. */
    start(): TurnMeter {
      let inFlight = 0
      let since = 0
      let ms = 0
      const wait: ModelWait = {
        begin() {
          if (inFlight++ === 0) since = performance.now()
          let ended = false
          return () => {
            if (ended) return
            ended = true
            if (--inFlight === 0) ms += performance.now() - since
          }
        },
      }
      const timed = async <T>(call: () => Promise<T>): Promise<T> => {
        const end = wait.begin()
        try {
          return await call()
        } finally {
          end()
        }
      }
      const metered: LlmClient = {
        chat: (opts) => timed(() => llm.chat(opts)),
        embed: (opts) => timed(() => llm.embed(opts)),
        chatStream(opts): ChatStream {
          const end = wait.begin()
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
      return { llm: metered, wait, read: () => Math.round((ms + (inFlight > 0 ? performance.now() - since : 0)) * 100) / 100 }
    },
  }
}

export type ModelMeter = ReturnType<typeof createModelMeter>
