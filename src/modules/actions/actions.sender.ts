import { Agent, request } from 'undici'
import { BlockedAddressError, createGuardedLookup, literalAddressProblem } from '../documents/sources/crawler/ssrf.js'
import { RESPONSE_MAX_BYTES } from './actions.fns.js'

export interface OutboundRequest {
  method: string
  url: string
  headers: Record<string, string>
  body: string | null
}

export type SendStatus = 'ok' | 'http_error' | 'timeout' | 'refused' | 'blocked'

export interface SendResult {
  status: SendStatus
  /** null: no HTTP answer */
  httpStatus: number | null
  /** the answer's text, at most RESPONSE_MAX_BYTES (cut beyond) */
  body: string | null
  latencyMs: number
  error: string | null
}

/** The actions' only way out to the network, so tests can count or replace it. */
export interface ActionSender {
  send(req: OutboundRequest, timeoutMs: number): Promise<SendResult>
  close(): Promise<void>
}

const blockedBy = (err: unknown): BlockedAddressError | null => {
  if (err instanceof BlockedAddressError) return err
  const cause = (err as { cause?: unknown } | null)?.cause
  return cause instanceof BlockedAddressError ? cause : null
}

/**
 * Sends through the crawler's SSRF guard: a literal address is judged before anything is sent, a host name
 * at connect time (the address checked is the one connected to). Redirects are never followed: a 3xx is the
 * answer (http_error), so a redirect to a private or metadata address reaches nothing. One deadline covers
 * connecting, waiting and reading; only the first 256 KB of the answer are read.
 */
export function createActionSender(cfg: { allowPrivateNetworks: boolean; userAgent: string }): ActionSender {
  const agent = new Agent({
    connect: { lookup: createGuardedLookup(cfg.allowPrivateNetworks) as never, timeout: 30_000 },
    keepAliveTimeout: 4000,
  })
  return {
    async send(req, timeoutMs) {
      const started = performance.now()
      const ms = () => Math.round(performance.now() - started)
      let literal: BlockedAddressError | null
      try {
        literal = literalAddressProblem(req.url, cfg.allowPrivateNetworks)
      } catch {
        return { status: 'refused', httpStatus: null, body: null, latencyMs: 0, error: 'invalid URL' }
      }
      if (literal) return { status: 'blocked', httpStatus: null, body: null, latencyMs: 0, error: literal.message }
      const deadline = AbortSignal.timeout(timeoutMs)
      try {
        const res = await request(req.url, {
          method: req.method as never,
          headers: { 'user-agent': cfg.userAgent, accept: 'application/json', ...req.headers },
          body: req.body ?? undefined,
          dispatcher: agent,
          signal: deadline,
          maxRedirections: 0,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        } as never)
        const chunks: Buffer[] = []
        let size = 0
        try {
          for await (const chunk of res.body) {
            const b = chunk as Buffer
            chunks.push(b)
            size += b.length
            if (size >= RESPONSE_MAX_BYTES) break
          }
        } finally {
          if (!res.body.destroyed) res.body.destroy()
        }
        const body = Buffer.concat(chunks).subarray(0, RESPONSE_MAX_BYTES).toString('utf8')
        const ok = res.statusCode >= 200 && res.statusCode < 300
        return { status: ok ? 'ok' : 'http_error', httpStatus: res.statusCode, body, latencyMs: ms(), error: ok ? null : `HTTP ${res.statusCode}` }
      } catch (err) {
        const blocked = blockedBy(err)
        if (blocked) return { status: 'blocked', httpStatus: null, body: null, latencyMs: ms(), error: blocked.message }
        const code = (err as { code?: string; name?: string }) ?? {}
        const timedOut = deadline.aborted || code.name === 'TimeoutError' || /TIMEOUT/.test(code.code ?? '')
        return {
          status: timedOut ? 'timeout' : 'refused',
          httpStatus: null,
          body: null,
          latencyMs: ms(),
          error: timedOut ? 'timeout' : (code.code ?? 'network error'),
        }
      }
    },
    close: () => agent.close(),
  }
}
