import { request } from 'node:http'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSse } from '../src/http/sse.js'
import { reads } from './helpers/http.js'

/**
 * The SSE helper on its own (the widget's /widget/chat uses it): frames leave at once, headers from
 * hooks survive the hijack, heartbeats flow while idle, and a client that goes away aborts the work.
 */
const app = Fastify()
let base = ''
let lastAbort: { aborted: boolean; at: number } = { aborted: false, at: 0 }

beforeAll(async () => {
  app.addHook('onRequest', async (_req, reply) => {
    reply.header('access-control-allow-origin', 'https://shop.example.com')
  })
  app.get('/stream', async (req, reply) => {
    const q = req.query as { n?: string; gap?: string; idle?: string }
    const sse = openSse(req, reply, { heartbeatMs: 50 })
    lastAbort = { aborted: false, at: 0 }
    sse.signal.addEventListener('abort', () => (lastAbort = { aborted: true, at: Date.now() }))
    sse.send({ type: 'status', stage: 'thinking' })
    if (q.idle) await new Promise((r) => setTimeout(r, Number(q.idle)))
    for (let i = 0; i < Number(q.n ?? 3); i++) {
      if (sse.signal.aborted) break
      await new Promise((r) => setTimeout(r, Number(q.gap ?? 30)))
      sse.send({ type: 'chunk', text: `w${i} ` })
    }
    if (!sse.signal.aborted) sse.send({ type: 'done' })
    sse.close()
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
})
afterAll(() => app.close())

describe('openSse', () => {
  it('sends event-stream headers (and those set by hooks) and each frame as it is written', async () => {
    const res = await fetch(`${base}/stream?n=5&gap=60`)
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    expect(res.headers.get('x-accel-buffering')).toBe('no')
    expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example.com')
    const arrivals: { at: number; text: string }[] = []
    const decoder = new TextDecoder()
    for await (const part of reads(res.body!)) arrivals.push({ at: Date.now(), text: decoder.decode(part) })
    const all = arrivals.map((a) => a.text).join('')
    expect(all.startsWith('data: {"type":"status","stage":"thinking"}\n\n')).toBe(true)
    expect(all.match(/"type":"chunk"/g)).toHaveLength(5)
    // Not batched: the chunk frames arrived in separate reads spread over the writer's pace.
    const chunkReads = arrivals.filter((a) => a.text.includes('"chunk"'))
    expect(chunkReads.length).toBeGreaterThanOrEqual(4)
    expect(chunkReads[chunkReads.length - 1]!.at - chunkReads[0]!.at).toBeGreaterThanOrEqual(150)
  })

  it('keeps an idle stream alive with comment heartbeats', async () => {
    // a second idle at a 50 ms heartbeat: three pings even when a loaded machine delays the timer (at 300 ms only two
    // came at load 8; a late interval does not catch up)
    const text = await (await fetch(`${base}/stream?n=1&idle=1000`)).text()
    expect(text.match(/^: ping$/gm)!.length).toBeGreaterThanOrEqual(3)
  })

  it('aborts the work behind the stream when the client disconnects', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = request(`${base}/stream?n=50&gap=40`, (res) => {
        res.once('data', () => {
          req.destroy()
          resolve()
        })
      })
      req.on('error', () => {})
      req.on('close', resolve)
      req.end()
      setTimeout(() => reject(new Error('no data')), 3000)
    })
    await expect.poll(() => lastAbort.aborted, { timeout: 2000 }).toBe(true)
  })

  it('does not abort a stream that ended normally', async () => {
    await (await fetch(`${base}/stream?n=2&gap=5`)).text()
    await new Promise((r) => setTimeout(r, 50))
    expect(lastAbort.aborted).toBe(false)
  })
})
