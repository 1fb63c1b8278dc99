import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { leanFetch } from './lean-fetch.js'

/**
 * The model calls keep their connection through a quiet minute: a server that does not say how long it keeps one
 * (uvicorn, a proxy) sees the second call of a turn 4.5 s after the first on the same connection (undici's default
 * pool would have dropped it after 4 s and opened another).
 */
let server: Server
let url = ''
let connections = 0
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      res.end('{"ok":true}')
    })
  })
  // 0: the server keeps idle connections and sends no Keep-Alive hint
  server.keepAliveTimeout = 0
  server.on('connection', () => {
    connections++
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

it('keeps a model connection open through 4.5 s of silence', async () => {
  const call = async () => {
    const res = await leanFetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true })
  }
  await call()
  await new Promise((r) => setTimeout(r, 4500))
  await call()
  expect(connections).toBe(1)
}, 20_000)
