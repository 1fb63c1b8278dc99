import { describe, expect, it } from 'vitest'
import type { SseStream } from '../../http/sse.js'
import { createLiveHub, type StreamFrame } from './live.stream.js'

/** A stream that keeps the ids it was sent. */
function fakeSse() {
  const ids: string[] = []
  const controller = new AbortController()
  const sse = {
    event: (id: string) => (ids.push(id), true),
    events: (frames: { id: string }[]) => (ids.push(...frames.map((f) => f.id)), true),
    comment: () => true,
    send: () => true,
    close: () => controller.abort(),
    signal: controller.signal,
    closed: false,
  } as unknown as SseStream
  return { sse, ids, cut: () => controller.abort() }
}

const settle = () => new Promise((r) => setTimeout(r, 20))

describe('live hub: streams of one group share their reads', () => {
  it('a stream joining during a read with another cursor, while the log grows, gets every event after its own cursor once, and so does the first', async () => {
    let notify: (key: string) => void = () => {}
    const hub = createLiveHub({
      changes: { subscribe: (_t, fn) => void (notify = fn), onReset: () => {}, live: true },
      heartbeatMs: 60_000,
      log: { warn: () => {} },
    })
    const log: StreamFrame[] = [1, 2, 3].map((n) => ({ id: String(n), payload: n, botId: n === 2 ? 'other-bot' : null }))
    let reads = 0
    const read = async (after: string) => {
      reads++
      const rows = log.filter((f) => Number(f.id) > Number(after))
      await Promise.resolve()
      return rows
    }
    const x = fakeSse()
    const y = fakeSse()
    const scoped = fakeSse()
    hub.open(x.sse, { team: 't1' }, '0', read)
    hub.open(y.sse, { team: 't1' }, '2', read)
    log.push({ id: '4', payload: 4, botId: null })
    hub.open(scoped.sse, { team: 't1' }, '0', read, (f) => f.botId !== 'other-bot')
    await settle()
    expect(x.ids).toEqual(['1', '2', '3', '4'])
    expect(y.ids).toEqual(['3', '4'])
    expect(scoped.ids).toEqual(['1', '3', '4'])

    // one notice, one read for the whole group
    log.push({ id: '5', payload: 5, botId: null })
    const before = reads
    notify('t1/s1')
    await settle()
    expect(reads - before).toBe(1)
    expect([x.ids.at(-1), y.ids.at(-1), scoped.ids.at(-1)]).toEqual(['5', '5', '5'])
    expect(hub.openStreams()).toBe(3)
    x.cut()
    expect(hub.openStreams()).toBe(2)
    hub.closeAll()
    expect(hub.openStreams()).toBe(0)
  })
})
