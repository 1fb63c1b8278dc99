import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

export type ReceiverMode = 'ok' | 'fail' | 'hang' | 'gone'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  json: any
  /** which of the receiver's secrets verified the signature (with the reference package), by index */
  verifiedWith: number[]
  at: number
}

/**
 * A webhook receiver on 127.0.0.1 that verifies every request with the reference `standardwebhooks`
 * package and answers as told: 2xx, 500, no answer at all, or 410. `next` modes are used first, one per
 * request; then `mode`.
 */
export class WebhookReceiver {
  readonly received: Received[] = []
  mode: ReceiverMode = 'ok'
  next: ReceiverMode[] = []
  /** Modes for the next requests of one event type, used before `next`. */
  nextOfType: Record<string, ReceiverMode[]> = {}
  secrets: string[] = []
  private server: Server | null = null
  url = ''

  async start(path = '/hook'): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        const verifiedWith = this.secrets.flatMap((s, i) => {
          try {
            new Webhook(s).verify(body, req.headers as Record<string, string>)
            return [i]
          } catch {
            return []
          }
        })
        let json: unknown = null
        try {
          json = JSON.parse(body)
        } catch {}
        const type = (json as { type?: string } | null)?.type ?? ''
        const mode = this.nextOfType[type]?.shift() ?? this.next.shift() ?? this.mode
        this.received.push({ headers: req.headers, body, json, verifiedWith, at: Date.now() })
        if (mode === 'hang') return // never answers; the sender's timeout ends it
        if (mode === 'gone') return void res.writeHead(410).end('gone')
        if (mode === 'fail') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver is failing on purpose')
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`
    return this
  }

  ofType(type: string) {
    return this.received.filter((r) => r.json?.type === type)
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections()
    await new Promise((r) => this.server?.close(r))
  }
}
