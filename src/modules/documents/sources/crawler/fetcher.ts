import type { Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { Agent, request } from 'undici'
import { normalizeUrl, urlProblemMessage } from './url.fns.js'
import { BlockedAddressError, createGuardedLookup, literalAddressProblem } from './ssrf.js'

export const MAX_REDIRECTS = 5
/** What `checkHop` returns for a redirect target the caller already has. */
export const ALREADY_VISITED = 'already visited'
/** What `checkHop` returns for a redirect to another site; read after "redirect to <url> refused: ". */
export const OFF_SITE = 'it is on another site (only same-site redirects are followed)'

export interface FetchOptions {
  /** Validators from the previous crawl, sent as If-None-Match / If-Modified-Since. */
  etag?: string | null
  lastModified?: string | null
  accept?: string
  /** Called for every redirect target; a returned reason stops the fetch (off-site, robots, excluded...). */
  checkHop?: (url: string) => string | null | Promise<string | null>
  /** A larger gap between requests to this host than the configured one (robots.txt Crawl-delay). */
  delayMs?: number
  signal?: AbortSignal
  maxBytes?: number
  timeoutMs?: number
}

export type FetchOutcome =
  | { kind: 'ok'; url: string; status: number; contentType: string; charset: string | null; body: Buffer; etag: string | null; lastModified: string | null }
  | { kind: 'not_modified'; url: string; etag: string | null; lastModified: string | null }
  | { kind: 'failed'; url: string; reason: string; status?: number }
  /** A redirect led to a URL `checkHop` said was already fetched; nothing more was requested. */
  | { kind: 'known'; url: string }

/** The crawler's only way out to the network, so tests and benches can count or replace it. */
export interface Fetcher {
  fetch(url: string, opts?: FetchOptions): Promise<FetchOutcome>
  close(): Promise<void>
}

export interface FetcherConfig {
  userAgent: string
  allowPrivateNetworks: boolean
  timeoutMs: number
  maxBytes: number
  /** Requests in flight per host, across every crawl in this process. */
  perHostConcurrency: number
  /** Minimum gap between request starts on one host. */
  perHostDelayMs: number
}

/**
 * Politeness per host for the whole process: at most N requests in flight and a minimum gap between
 * starts, however many sources (of however many tenants) point at the same site.
 */
export class HostGate {
  private readonly hosts = new Map<string, { active: number; waiters: (() => void)[]; nextStart: number }>()
  constructor(
    private readonly concurrency: number,
    private readonly delayMs: number,
  ) {}

  async acquire(host: string, delayMs = this.delayMs): Promise<() => void> {
    let h = this.hosts.get(host)
    if (!h) this.hosts.set(host, (h = { active: 0, waiters: [], nextStart: 0 }))
    const state = h
    while (state.active >= this.concurrency) await new Promise<void>((r) => state.waiters.push(r))
    state.active++
    const now = Date.now()
    const wait = Math.max(0, state.nextStart - now)
    state.nextStart = Math.max(now, state.nextStart) + delayMs
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    let released = false
    return () => {
      if (released) return
      released = true
      state.active--
      state.waiters.shift()?.()
      if (state.active === 0 && state.waiters.length === 0 && state.nextStart <= Date.now()) this.hosts.delete(host)
    }
  }
}

const REDIRECT = new Set([301, 302, 303, 307, 308])

export function describeNetworkError(err: unknown): string {
  if (err instanceof BlockedAddressError) return err.message
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown }
  if (e?.cause instanceof BlockedAddressError) return e.cause.message
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT' || e?.code === 'UND_ERR_CONNECT_TIMEOUT')
    return 'timeout'
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return 'DNS lookup failed'
  if (e?.code === 'ECONNREFUSED') return 'connection refused'
  if (e?.code === 'ECONNRESET' || e?.code === 'UND_ERR_SOCKET') return 'connection reset'
  if (e?.code && /^ERR_TLS|CERT|SSL/.test(e.code)) return 'TLS error'
  return `network error${e?.code ? ` (${e.code})` : ''}`
}

class TooLargeError extends Error {}

/** Reads a body, decompressing as declared, and gives up as soon as the decoded size passes the limit. */
async function readLimited(body: Readable, encoding: string, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  let stream: Readable = body
  const enc = encoding.trim().toLowerCase()
  if (enc === 'gzip' || enc === 'x-gzip') stream = body.pipe(createGunzip())
  else if (enc === 'deflate') stream = body.pipe(createInflate())
  else if (enc === 'br') stream = body.pipe(createBrotliDecompress())
  if (signal.aborted) {
    body.destroy()
    throw signal.reason instanceof Error ? signal.reason : new Error('aborted')
  }
  const chunks: Buffer[] = []
  let size = 0
  const onAbort = () => stream.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'))
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    for await (const chunk of stream) {
      size += (chunk as Buffer).length
      if (size > maxBytes) throw new TooLargeError()
      chunks.push(chunk as Buffer)
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    if (!body.destroyed) body.destroy()
    if (stream !== body && !stream.destroyed) stream.destroy()
  }
  return Buffer.concat(chunks, size)
}

const header = (h: Record<string, string | string[] | undefined>, name: string): string | null => {
  const v = h[name]
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null)
}

/**
 * Fetches over undici with redirects followed by hand (each hop normalised, SSRF-checked and offered to
 * `checkHop`), a deadline for the whole page, a decoded-size limit, and the guarded DNS lookup on every
 * connection.
 */
export function createFetcher(cfg: FetcherConfig): Fetcher & { gate: HostGate } {
  const agent = new Agent({
    connect: { lookup: createGuardedLookup(cfg.allowPrivateNetworks) as never, timeout: cfg.timeoutMs },
    connections: Math.max(cfg.perHostConcurrency, 1),
    headersTimeout: cfg.timeoutMs,
    bodyTimeout: cfg.timeoutMs,
    keepAliveTimeout: 4000,
  })
  const gate = new HostGate(cfg.perHostConcurrency, cfg.perHostDelayMs)

  async function fetchPage(startUrl: string, opts: FetchOptions): Promise<FetchOutcome> {
    let url = startUrl
    const seen = new Set<string>([url])
    // The page's deadline starts with its first request, not while it waits for a polite slot.
    let deadline: { signal: AbortSignal; timeout: AbortSignal } | null = null
    for (let hop = 0; ; hop++) {
      const blocked = literalAddressProblem(url, cfg.allowPrivateNetworks)
      if (blocked) return { kind: 'failed', url, reason: blocked.message }
      // The host slot is held until the body is read: politeness counts whole responses.
      const release = await gate.acquire(new URL(url).host, Math.max(cfg.perHostDelayMs, opts.delayMs ?? 0))
      let outcome: FetchOutcome | { kind: 'redirect'; to: string }
      try {
        if (!deadline) {
          const timeout = AbortSignal.timeout(opts.timeoutMs ?? cfg.timeoutMs)
          deadline = { timeout, signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout }
        }
        outcome = await fetchHop(url, opts, deadline.signal, deadline.timeout)
      } finally {
        release()
      }
      if (outcome.kind !== 'redirect') return outcome
      const next = outcome.to
      if (hop + 1 > MAX_REDIRECTS) return { kind: 'failed', url: startUrl, reason: `too many redirects (more than ${MAX_REDIRECTS})` }
      if (seen.has(next)) return { kind: 'failed', url: startUrl, reason: 'redirect loop' }
      const refused = await opts.checkHop?.(next)
      if (refused === ALREADY_VISITED) return { kind: 'known', url: next }
      if (refused) return { kind: 'failed', url: next, reason: `redirect to ${next} refused: ${refused}` }
      seen.add(next)
      url = next
    }
  }

  async function fetchHop(
    url: string,
    opts: FetchOptions,
    signal: AbortSignal,
    timeout: AbortSignal,
  ): Promise<FetchOutcome | { kind: 'redirect'; to: string }> {
    const maxBytes = opts.maxBytes ?? cfg.maxBytes
    const headers: Record<string, string> = {
      'user-agent': cfg.userAgent,
      accept: opts.accept ?? 'text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.1',
      'accept-encoding': 'gzip, deflate, br',
    }
    if (opts.etag) headers['if-none-match'] = opts.etag
    if (opts.lastModified) headers['if-modified-since'] = opts.lastModified
    let res: Awaited<ReturnType<typeof request>>
    try {
      res = await request(url, { method: 'GET', headers, dispatcher: agent, signal })
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? err
      return { kind: 'failed', url, reason: timeout.aborted ? 'timeout' : describeNetworkError(err) }
    }
    const h = res.headers as Record<string, string | string[] | undefined>
    const discard = () => res.body.dump().catch(() => {})
    if (REDIRECT.has(res.statusCode)) {
      await discard()
      const location = header(h, 'location')
      if (!location) return { kind: 'failed', url, status: res.statusCode, reason: `http ${res.statusCode} without Location` }
      const next = normalizeUrl(location, url)
      if ('problem' in next) return { kind: 'failed', url, reason: `redirect refused: ${urlProblemMessage[next.problem]}` }
      return { kind: 'redirect', to: next.url }
    }
    const etag = header(h, 'etag')
    const lastModified = header(h, 'last-modified')
    if (res.statusCode === 304) {
      await discard()
      return { kind: 'not_modified', url, etag: etag ?? opts.etag ?? null, lastModified: lastModified ?? opts.lastModified ?? null }
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await discard()
      return { kind: 'failed', url, status: res.statusCode, reason: `http ${res.statusCode}` }
    }
    const declared = Number(header(h, 'content-length') ?? NaN)
    const encoding = header(h, 'content-encoding') ?? ''
    const tooLarge = { kind: 'failed', url, status: res.statusCode, reason: `too large (over ${maxBytes} bytes)` } as const
    if (!encoding && Number.isFinite(declared) && declared > maxBytes) {
      res.body.destroy()
      return tooLarge
    }
    const rawType = header(h, 'content-type') ?? ''
    const contentType = rawType.split(';')[0]!.trim().toLowerCase()
    const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(rawType)?.[1] ?? null
    try {
      const body = await readLimited(res.body, encoding, maxBytes, signal)
      return { kind: 'ok', url, status: res.statusCode, contentType, charset, body, etag, lastModified }
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? err
      if (err instanceof TooLargeError) return tooLarge
      if (timeout.aborted) return { kind: 'failed', url, reason: 'timeout' }
      return { kind: 'failed', url, reason: (err as { code?: string }).code?.startsWith('Z_') ? 'corrupt compressed body' : describeNetworkError(err) }
    }
  }

  return { gate, fetch: (url, opts = {}) => fetchPage(url, opts), close: () => agent.close() }
}

/** Decodes a page body: charset from the header, else from a <meta> near the top, else UTF-8. */
export function decodeBody(body: Buffer, charset: string | null): string {
  let label = charset
  if (!label) {
    const head = body.subarray(0, 2048).toString('latin1')
    label = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1] ?? 'utf-8'
  }
  try {
    return new TextDecoder(label).decode(body)
  } catch {
    return new TextDecoder('utf-8').decode(body)
  }
}
