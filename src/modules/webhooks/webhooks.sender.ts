import { Agent, request } from 'undici'
import { describeNetworkError } from '../documents/sources/crawler/fetcher.js'
import { createGuardedLookup, literalAddressProblem } from '../documents/sources/crawler/ssrf.js'
import { excerpt } from './webhooks.fns.js'

export interface SendOutcome {
  /** null: no HTTP answer (timeout, refused, blocked address) */
  status: number | null
  latencyMs: number
  excerpt: string | null
  error: string | null
}

/** The webhooks' only way out to the network, so tests and benches can count or replace it. */
export interface WebhookSender {
  send(url: string, headers: Record<string, string>, body: string): Promise<SendOutcome>
  close(): Promise<void>
}

const EXCERPT_BYTES = 2048

/**
 * POSTs through the crawler's SSRF guard (the address connected to is checked at connect time, so DNS
 * rebinding cannot slip a private address in), with one deadline for the whole exchange, no redirect
 * followed (a 3xx is a failed attempt) and only the first bytes of the answer read.
 */
export function createSender(cfg: { allowPrivateNetworks: boolean; timeoutMs: number; userAgent: string }): WebhookSender {
  const agent = new Agent({
    connect: { lookup: createGuardedLookup(cfg.allowPrivateNetworks) as never, timeout: cfg.timeoutMs },
    headersTimeout: cfg.timeoutMs,
    bodyTimeout: cfg.timeoutMs,
    keepAliveTimeout: 4000,
  })
  return {
    async send(url, headers, body) {
      const started = performance.now()
      const ms = () => Math.round(performance.now() - started)
      const blocked = literalAddressProblem(url, cfg.allowPrivateNetworks)
      if (blocked) return { status: null, latencyMs: 0, excerpt: null, error: blocked.message }
      const timeout = AbortSignal.timeout(cfg.timeoutMs)
      try {
        const res = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': cfg.userAgent, ...headers },
          body,
          dispatcher: agent,
          signal: timeout,
        })
        const chunks: Buffer[] = []
        let size = 0
        try {
          for await (const chunk of res.body) {
            chunks.push(chunk as Buffer)
            size += (chunk as Buffer).length
            if (size >= EXCERPT_BYTES) break
          }
        } catch {
          // the status is what counts; a body cut short still leaves an excerpt
        } finally {
          if (!res.body.destroyed) res.body.destroy()
        }
        const text = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8')
        return { status: res.statusCode, latencyMs: ms(), excerpt: text ? excerpt(text) : null, error: null }
      } catch (err) {
        return { status: null, latencyMs: ms(), excerpt: null, error: timeout.aborted ? 'timeout' : describeNetworkError(err) }
      }
    },
    close: () => agent.close(),
  }
}
