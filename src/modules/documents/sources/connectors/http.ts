import { Agent, request } from 'undici'
import { BlockedAddressError, createGuardedLookup, literalAddressProblem } from '../crawler/ssrf.js'
import { describeNetworkError } from '../crawler/fetcher.js'
import { type ConnectorKind, ConnectorError, TOKEN_REFUSED } from './connector.types.js'
import { type Headers, rateLimitWait } from './connectors.fns.js'

/** The most of one reply read: an article of 10 MB, or a listing page of 100 of them at their usual size. */
export const MAX_REPLY_BYTES = 10 * 1024 * 1024
/** Rate-limit pauses one request may take before the run gives up (and resumes at the next sync). */
const MAX_RATE_WAITS = 5
/** A longer pause than this is not waited out inside a run: the run ends partial and says when to retry. */
const MAX_WAIT_SECONDS = 300
/** Server errors and broken connections are retried this many times, after 1 s, then 2 s. */
const SERVER_RETRIES = 2

export type Reply = { status: number; headers: Headers; body: Buffer }

/** The connectors' only way out to the network, through the crawler's SSRF guard, so tests can count it. */
export interface ConnectorTransport {
  get(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<Reply>
  close(): Promise<void>
}

class TooLarge extends Error {}

/**
 * GETs with the outbound guard (a literal private address refused before sending, a host name at connect
 * time, CRAWLER_ALLOW_PRIVATE_NETWORKS for tests), no redirect followed, one deadline for the whole reply,
 * and at most MAX_REPLY_BYTES read.
 */
export function createConnectorTransport(cfg: { allowPrivateNetworks: boolean; userAgent: string; timeoutMs: number }): ConnectorTransport {
  const agent = new Agent({
    connect: { lookup: createGuardedLookup(cfg.allowPrivateNetworks) as never, timeout: cfg.timeoutMs },
    keepAliveTimeout: 10_000,
    headersTimeout: cfg.timeoutMs,
    bodyTimeout: cfg.timeoutMs,
  })
  return {
    async get(url, headers, signal) {
      const literal = literalAddressProblem(url, cfg.allowPrivateNetworks)
      if (literal) throw new ConnectorError('upstream', literal.message)
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(cfg.timeoutMs)])
      const res = await request(url, { method: 'GET', headers: { 'user-agent': cfg.userAgent, ...headers }, dispatcher: agent, signal: deadline })
      const declared = Number(res.headers['content-length'] ?? Number.NaN)
      try {
        if (Number.isFinite(declared) && declared > MAX_REPLY_BYTES) throw new TooLarge()
        const chunks: Buffer[] = []
        let size = 0
        for await (const chunk of res.body) {
          size += (chunk as Buffer).length
          if (size > MAX_REPLY_BYTES) throw new TooLarge()
          chunks.push(chunk as Buffer)
        }
        return { status: res.statusCode, headers: res.headers as Headers, body: Buffer.concat(chunks, size) }
      } catch (err) {
        if (err instanceof TooLarge) throw new ConnectorError('too_large', `a reply of ${new URL(url).pathname} is over ${MAX_REPLY_BYTES / 1024 / 1024} MB`)
        throw err
      } finally {
        if (!res.body.destroyed) res.body.destroy()
      }
    },
    close: () => agent.close(),
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })

export const VENDOR: Record<ConnectorKind, string> = { zendesk: 'Zendesk', intercom: 'Intercom', freshdesk: 'Freshdesk', github: 'GitHub' }

export interface Upstream {
  /** The reply's JSON; a 404 throws `not_found` with `notFound` as its words (default: "<vendor> answered 404 for <path>"). */
  json<T = unknown>(url: string, signal: AbortSignal, opts?: { notFound?: string; accept?: string }): Promise<{ body: T; headers: Headers }>
  raw(url: string, signal: AbortSignal, accept: string): Promise<Buffer>
}

/**
 * One vendor's API as the connectors use it: its auth headers on every request, rate limits waited out as the
 * vendor says (rateLimitWait), server errors retried twice, a refused token named as such.
 */
export function upstream(kind: ConnectorKind, transport: ConnectorTransport, auth: Record<string, string>, opts: { retryBaseMs?: number } = {}): Upstream {
  const vendor = VENDOR[kind]
  const retryBaseMs = opts.retryBaseMs ?? 1000

  async function get(url: string, signal: AbortSignal, accept: string, notFound?: string): Promise<Reply> {
    const path = new URL(url).pathname
    let rateWaits = 0
    let serverTries = 0
    for (;;) {
      let r: Reply
      try {
        r = await transport.get(url, { accept, ...auth }, signal)
      } catch (err) {
        if (signal.aborted) throw signal.reason ?? err
        if (err instanceof ConnectorError) throw err
        const blocked = err instanceof BlockedAddressError || (err as { cause?: unknown })?.cause instanceof BlockedAddressError
        if (blocked || serverTries >= SERVER_RETRIES) throw new ConnectorError('upstream', `${vendor} could not be reached (${describeNetworkError(err)})`)
        await sleep(retryBaseMs * 2 ** serverTries++, signal)
        continue
      }
      if (r.status >= 200 && r.status < 300) return r
      const wait = rateLimitWait(kind, r.status, r.headers, Date.now())
      if (wait !== null) {
        if (wait > MAX_WAIT_SECONDS || rateWaits >= MAX_RATE_WAITS)
          throw new ConnectorError(
            'rate_limited',
            `${vendor}'s rate limit was still reached after ${rateWaits} pauses (next try in ${Math.ceil(wait)} s); the next sync resumes`,
          )
        rateWaits++
        // a little over the vendor's figure: its clock and ours differ by a fraction of a second
        await sleep(Math.ceil(wait * 1000) + 250, signal)
        continue
      }
      if (r.status === 401 || r.status === 403) throw new ConnectorError('refused', TOKEN_REFUSED)
      if (r.status === 404) throw new ConnectorError('not_found', notFound ?? `${vendor} answered 404 for ${path}`)
      if (r.status >= 500 && serverTries < SERVER_RETRIES) {
        await sleep(retryBaseMs * 2 ** serverTries++, signal)
        continue
      }
      throw new ConnectorError('upstream', `${vendor} answered HTTP ${r.status} for ${path}`)
    }
  }

  return {
    async json<T>(url: string, signal: AbortSignal, o: { notFound?: string; accept?: string } = {}) {
      const r = await get(url, signal, o.accept ?? 'application/json', o.notFound)
      try {
        return { body: JSON.parse(r.body.toString('utf8')) as T, headers: r.headers }
      } catch {
        throw new ConnectorError('malformed', `${vendor} answered ${new URL(url).pathname} with something that is not JSON`)
      }
    },
    async raw(url: string, signal: AbortSignal, accept: string) {
      return (await get(url, signal, accept)).body
    },
  }
}
