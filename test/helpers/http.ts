import { randomInt } from 'node:crypto'

export interface Res<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

type Body = unknown

/** A small JSON client over fetch. Each instance is one visitor: its own IP and optional credentials. */
export class Api {
  readonly ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`
  token: string | null = null
  apiKey: string | null = null
  cookie: string | null = null

  constructor(readonly base: string) {}

  withToken(token: string | null): this {
    this.token = token
    return this
  }
  withApiKey(key: string | null): this {
    this.apiKey = key
    return this
  }

  async request<T = any>(method: string, path: string, body?: Body, headers: Record<string, string> = {}): Promise<Res<T>> {
    const h: Record<string, string> = { 'x-forwarded-for': this.ip, ...headers }
    if (this.token) h.authorization = `Bearer ${this.token}`
    if (this.apiKey) h['x-api-key'] = this.apiKey
    if (this.cookie) h.cookie = this.cookie
    let payload: BodyInit | undefined
    if (body instanceof FormData) payload = body
    else if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body)
      h['content-type'] ??= 'application/json'
    }
    const res = await fetch(this.base + path, { method, headers: h, body: payload, redirect: 'manual' })
    const text = await res.text()
    let parsed: unknown = text
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text)
    return { status: res.status, headers: res.headers, body: parsed as T, text }
  }

  get = <T = any>(path: string, headers?: Record<string, string>) => this.request<T>('GET', path, undefined, headers)
  post = <T = any>(path: string, body?: Body, headers?: Record<string, string>) => this.request<T>('POST', path, body, headers)
  put = <T = any>(path: string, body?: Body, headers?: Record<string, string>) => this.request<T>('PUT', path, body, headers)
  patch = <T = any>(path: string, body?: Body, headers?: Record<string, string>) => this.request<T>('PATCH', path, body, headers)
  delete = <T = any>(path: string, headers?: Record<string, string>) => this.request<T>('DELETE', path, undefined, headers)
}

/** The chunks of a fetch body as they arrive (DOM's ReadableStream typing has no async iterator here). */
export async function* reads(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader()
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock()
  }
}
