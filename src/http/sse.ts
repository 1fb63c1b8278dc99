import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * A Server-Sent Events response on a hijacked Fastify reply. Each `send` is written to the socket at once
 * (no batching, Nagle off), so a token that arrives from the model reaches the visitor within the same
 * tick. Headers already put on the reply by hooks (CORS, rate-limit, request id) are carried over, since
 * a hijacked reply skips Fastify's own header writing.
 */
export interface SseStream {
  /** Writes one `data:` frame holding `payload` as JSON. Returns false once the stream is closed. */
  send(payload: unknown): boolean
  /** Writes one frame with an `id:` line (what a reconnecting client sends back as Last-Event-ID). */
  event(id: string, payload: unknown): boolean
  /** Writes several `id:` frames in one write (one system call for a batch, as a live stream's read returns them). */
  events(frames: readonly { id: string; payload: unknown }[]): boolean
  /** Writes a comment line (a keep-alive the client ignores). */
  comment(text: string): boolean
  /** Ends the response (idempotent). */
  close(): void
  /** Aborted when the client goes away before `close()`: pass it to the work that feeds the stream. */
  readonly signal: AbortSignal
  readonly closed: boolean
}

export interface SseOptions {
  /** A `: ping` comment this often keeps idle proxies from cutting a long answer; 0: none (the caller keeps it alive). */
  heartbeatMs?: number
}

export function openSse(req: FastifyRequest, reply: FastifyReply, opts: SseOptions = {}): SseStream {
  reply.hijack()
  const res = reply.raw
  const controller = new AbortController()
  let closed = false

  const headers: Record<string, string | string[]> = {}
  for (const [k, v] of Object.entries(reply.getHeaders())) {
    if (v === undefined) continue
    headers[k] = Array.isArray(v) ? v.map(String) : String(v)
  }
  Object.assign(headers, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  })
  delete headers['content-length']
  res.socket?.setNoDelay(true)
  res.writeHead(200, headers)
  // Sends the headers now: the visitor's browser knows the stream is open before the first frame.
  res.flushHeaders()

  const every = opts.heartbeatMs ?? 15_000
  const heartbeat = every > 0 ? setInterval(() => !closed && res.write(': ping\n\n'), every) : null
  heartbeat?.unref()

  const finish = () => {
    if (closed) return
    closed = true
    if (heartbeat) clearInterval(heartbeat)
  }
  // 'close' on the response fires both after a normal end and when the connection drops; only the
  // second one aborts the work behind the stream.
  res.on('close', () => {
    const dropped = !closed
    finish()
    if (dropped) {
      req.log.info('sse client disconnected')
      controller.abort(new Error('client disconnected'))
    }
  })

  return {
    send(payload: unknown): boolean {
      if (closed || res.destroyed) return false
      res.write(`data: ${JSON.stringify(payload)}\n\n`)
      return true
    },
    event(id: string, payload: unknown): boolean {
      if (closed || res.destroyed) return false
      res.write(`id: ${id}\ndata: ${JSON.stringify(payload)}\n\n`)
      return true
    },
    events(frames: readonly { id: string; payload: unknown }[]): boolean {
      if (closed || res.destroyed) return false
      if (frames.length) res.write(frames.map((f) => `id: ${f.id}\ndata: ${JSON.stringify(f.payload)}\n\n`).join(''))
      return true
    },
    comment(text: string): boolean {
      if (closed || res.destroyed) return false
      res.write(`: ${text}\n\n`)
      return true
    },
    close() {
      if (closed) return
      finish()
      res.end()
    },
    signal: controller.signal,
    get closed() {
      return closed
    },
  }
}
