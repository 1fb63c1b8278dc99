import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A real website on 127.0.0.1 for the crawler: pages, redirects, robots.txt, sitemaps, slow and huge
 * responses, all changeable while it runs. ETag / Last-Modified are answered like a real server (304 on
 * a matching conditional request), and every request is logged so tests can prove what was (not) fetched.
 */
export interface PageSpec {
  status?: number
  body?: string | Buffer
  contentType?: string
  /** Send a 30x to this location (relative or absolute). */
  redirect?: string
  /** Wait this long before answering (headers included). */
  delayMs?: number
  /** Stream this many bytes of HTML (chunked, no Content-Length). */
  hugeBytes?: number
  /** Answer conditional requests; default true for 200s. */
  validators?: boolean
  lastModified?: string
  /** Extra response headers (content-encoding for a pre-compressed body, ...). */
  headers?: Record<string, string>
}

export interface LoggedRequest {
  path: string
  status: number
  ifNoneMatch: string | null
  ifModifiedSince: string | null
  userAgent: string | null
}

export const html = (title: string, body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>` +
  `<nav><a href="/">Home</a></nav><main><article><h1>${title}</h1>${body}</article></main>` +
  `<footer>© Example Corp</footer></body></html>`

/** A paragraph long enough for Readability to accept it as content. */
export const prose = (topic: string, n = 3) =>
  Array.from({ length: n }, (_, i) => `<p>${topic} paragraph ${i + 1}: ${`${topic} explained in plain words for the reader. `.repeat(6)}</p>`).join('')

export const links = (paths: string[]) => `<ul>${paths.map((p) => `<li><a href="${p}">${p}</a></li>`).join('')}</ul>`

export class FakeWebsite {
  readonly pages = new Map<string, PageSpec>()
  readonly requests: LoggedRequest[] = []
  private server: Server | null = null
  private readonly sockets = new Set<import('node:net').Socket>()
  url = ''
  /** The site as seen from outside: the host and port, e.g. "127.0.0.1:41234". */
  host = ''

  constructor(pages: Record<string, PageSpec> = {}) {
    for (const [p, spec] of Object.entries(pages)) this.pages.set(p, spec)
  }

  set(path: string, spec: PageSpec): this {
    this.pages.set(path, spec)
    return this
  }

  remove(path: string): this {
    this.pages.delete(path)
    return this
  }

  /** Paths requested so far (query included), optionally only after a mark. */
  fetched(since = 0): string[] {
    return this.requests.slice(since).map((r) => r.path)
  }

  async start(host = '127.0.0.1'): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res))
    this.server.on('connection', (s) => {
      this.sockets.add(s)
      s.on('close', () => this.sockets.delete(s))
    })
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve))
    const { port } = this.server.address() as AddressInfo
    this.host = `${host.includes(':') ? `[${host}]` : host}:${port}`
    this.url = `http://${this.host}`
    return this
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '/'
    const spec = this.pages.get(path) ?? this.pages.get(path.split('?')[0]!)
    const log: LoggedRequest = {
      path,
      status: 0,
      ifNoneMatch: (req.headers['if-none-match'] as string) ?? null,
      ifModifiedSince: (req.headers['if-modified-since'] as string) ?? null,
      userAgent: req.headers['user-agent'] ?? null,
    }
    this.requests.push(log)
    const send = (status: number, headers: Record<string, string | number>, body?: string | Buffer) => {
      log.status = status
      if (res.destroyed) return
      res.writeHead(status, headers)
      res.end(body)
    }
    if (!spec) return send(404, { 'content-type': 'text/html' }, html('Not found', '<p>No such page.</p>'))
    if (spec.delayMs) {
      await new Promise((r) => setTimeout(r, spec.delayMs))
      if (req.destroyed || res.destroyed) return
    }
    if (spec.redirect) return send(spec.status ?? 301, { location: spec.redirect })
    if (spec.hugeBytes) return this.streamHuge(res, spec.hugeBytes, log)
    const status = spec.status ?? 200
    const body = spec.body ?? ''
    const headers: Record<string, string | number> = { 'content-type': spec.contentType ?? 'text/html; charset=utf-8', ...spec.headers }
    if (status === 200 && spec.validators !== false) {
      const etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`
      headers.etag = etag
      if (spec.lastModified) headers['last-modified'] = spec.lastModified
      const inm = req.headers['if-none-match']
      const ims = req.headers['if-modified-since']
      if ((inm && inm === etag) || (!inm && ims && spec.lastModified && ims === spec.lastModified)) return send(304, { etag })
    }
    send(status, headers, body)
  }

  private streamHuge(res: ServerResponse, bytes: number, log: LoggedRequest): void {
    log.status = 200
    res.writeHead(200, { 'content-type': 'text/html' })
    const chunk = Buffer.from(`<p>${'x'.repeat(64 * 1024 - 7)}</p>`)
    let sent = 0
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length
        if (res.destroyed) return
        if (!res.write(chunk)) return void res.once('drain', pump)
      }
      res.end()
    }
    res.write('<html><body>')
    pump()
  }
}
