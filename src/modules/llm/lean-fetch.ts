import { Agent, request } from 'undici'

/**
 * The model calls' connections: kept 60 s idle (undici's default keeps them 4 s). A quiet service's turn comes
 * minutes apart, and each of its model calls then opened a connection again, with TLS to a hosted provider (tens
 * of milliseconds before the first token). A server that says how long it keeps a connection (`Keep-Alive:
 * timeout=`) is believed; one that closes earlier without saying so closes the socket, which undici sees and
 * replaces, and a request caught in that moment is the SDK's retry.
 */
const modelConnections = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 })

/**
 * The `fetch` the OpenAI SDK is given: undici's `request` (on `modelConnections`, a keep-alive pool as the global
 * fetch) with the reply handed over as it arrived, instead of WHATWG fetch's Request, Response and web streams.
 * A turn makes four model calls, and fetch's own machinery was about a tenth of the server's CPU a turn.
 *
 * The SDK reads a reply through `ok`, `status`, `headers`, `json()`, `text()` and, for a stream, `body` as an async
 * iterable of bytes (`ReadableStreamToAsyncIterable` takes any async iterable as it is, and `CancelReadableStream`
 * ends one through its iterator's `return`), so the reply is that shape over undici's body stream. An abort of the
 * call's signal rejects the request or errors the body with undici's `AbortError`, as fetch would. A redirect (which
 * `request` does not follow) and a body other than text or bytes go through the standard fetch.
 */
export const leanFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
  const headers: Record<string, string> = {}
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value
  })
  const body = init?.body
  if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    // not what the SDK sends for chat and embeddings (JSON text); anything else goes the standard way
    return fetch(input, init)
  }
  const res = await request(url, {
    method: (init?.method ?? 'GET') as 'GET',
    headers,
    body: body ?? undefined,
    signal: init?.signal ?? undefined,
    dispatcher: modelConnections,
  })
  if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
    // a server behind a redirect (fetch follows it; request does not): dropped here, followed the standard way
    await res.body.dump()
    return fetch(input, init)
  }
  return new LeanResponse(url, res.statusCode, res.headers, res.body) as unknown as Response
}) as typeof fetch

type UndiciBody = Awaited<ReturnType<typeof request>>['body']

/** What the SDK reads of a reply (see above); `new Response(...)` is made only when something asks for more. */
class LeanResponse {
  readonly headers: Headers
  readonly ok: boolean
  readonly statusText = ''
  readonly redirected = false
  readonly type = 'basic'
  constructor(
    readonly url: string,
    readonly status: number,
    raw: Record<string, string | string[] | undefined>,
    readonly body: UndiciBody,
  ) {
    this.ok = status >= 200 && status < 300
    const h = new Headers()
    for (const name in raw) {
      const v = raw[name]
      if (Array.isArray(v)) for (const x of v) h.append(name, x)
      else if (v !== undefined) h.append(name, v)
    }
    this.headers = h
  }
  get bodyUsed() {
    return this.body.bodyUsed
  }
  json(): Promise<unknown> {
    return this.body.json()
  }
  text(): Promise<string> {
    return this.body.text()
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.body.arrayBuffer()
  }
  async blob(): Promise<Blob> {
    return new Blob([await this.body.arrayBuffer()])
  }
  clone(): never {
    throw new Error('a model reply is read once')
  }
}
