import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ApiRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

export type ApiHandler = (req: ApiRequest, res: ServerResponse) => void | 'hang'

/**
 * A workspace's own API on 127.0.0.1, as the bot's actions call it: records every request and answers through
 * `handler` (JSON 200 `{ok: true}` by default). `hang` never answers, for timeouts.
 */
export class WorkspaceApi {
  readonly requests: ApiRequest[] = []
  handler: ApiHandler = (_req, res) => json(res, 200, { ok: true })
  private server: Server | null = null
  url = ''

  async start(): Promise<this> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const r: ApiRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
        this.requests.push(r)
        this.handler(r, res)
      })
    })
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  get port() {
    return Number(new URL(this.url).port)
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections()
    await new Promise((r) => this.server?.close(r))
  }
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}
