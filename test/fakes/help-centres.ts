import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Socket } from 'node:net'

/**
 * Real HTTP servers on 127.0.0.1 that answer like the four vendors' APIs as their documentation shows them
 * (contract "Knowledge connectors"): Zendesk Guide's cursor pages, Intercom's numbered pages and
 * X-RateLimit-Reset, Freshdesk's categories/folders/subfolders and Link pages, GitHub's trees and contents
 * with its 403 rate limit. Articles change while they run; faults (status, headers, times) are injected per
 * path; every request is logged so a test can prove what was (not) read.
 */
export interface FakeArticle {
  id: number
  title: string
  /** HTML (help centres) or Markdown (GitHub files). */
  body: string
  /** ISO time; bumped by `update`. */
  updated_at: string
  draft?: boolean
  /** Zendesk: user_segment_ids; Intercom: help_center_audience; Freshdesk: the folder's visibility. */
  restricted?: boolean
  /** Zendesk: the translation's locale (one entry per locale). */
  locale?: string
  /** Freshdesk: its folder id; GitHub: its path. */
  folder?: number
  path?: string
}

export interface Fault {
  /** Matched against the request's path and query. */
  match: RegExp
  status: number
  headers?: Record<string, string>
  body?: string
  /** How many requests get it (default 1). */
  times?: number
}

export interface Logged {
  method: string
  path: string
  status: number
  auth: string | null
  headers: Record<string, string | string[] | undefined>
}

type Routed = { status: number; body: unknown; headers?: Record<string, string> }

let clockTick = Date.parse('2026-01-01T00:00:00Z')
export const nextTime = () => new Date((clockTick += 60_000)).toISOString().replace(/\.\d{3}Z$/, 'Z')

abstract class FakeVendor {
  readonly articles = new Map<string, FakeArticle>()
  readonly requests: Logged[] = []
  readonly faults: Fault[] = []
  /** Every answer waits this long (the bench's realistic latency). */
  delayMs = 0
  /** The largest page the server gives, whatever is asked (the vendors cap theirs too); small in tests to page often. */
  pageSize = 100
  /** The credentials the server accepts, as the Authorization header. */
  abstract expectedAuth(): string
  url = ''
  private server: Server | null = null
  private readonly sockets = new Set<Socket>()

  /** Articles keyed by id (and locale for Zendesk translations). */
  put(a: Omit<FakeArticle, 'updated_at'> & { updated_at?: string }): this {
    this.articles.set(this.keyOf(a), { ...a, updated_at: a.updated_at ?? nextTime() })
    return this
  }
  update(id: number, patch: Partial<FakeArticle>, locale?: string): this {
    const key =
      locale && this.articles.has(`${id}:${locale}`) ? `${id}:${locale}` : [...this.articles.keys()].find((k) => k === String(id) || k.startsWith(`${id}:`))!
    const a = this.articles.get(key)!
    this.articles.set(key, { ...a, ...patch, updated_at: nextTime() })
    return this
  }
  remove(id: number): this {
    for (const k of [...this.articles.keys()]) if (k === String(id) || k.startsWith(`${id}:`)) this.articles.delete(k)
    return this
  }
  protected keyOf(a: { id: number; locale?: string }) {
    return a.locale ? `${a.id}:${a.locale}` : String(a.id)
  }
  fail(f: Fault): this {
    this.faults.push({ times: 1, ...f })
    return this
  }
  /** Requests whose path matches. */
  count(re: RegExp): number {
    return this.requests.filter((r) => re.test(r.path)).length
  }
  list(): FakeArticle[] {
    return [...this.articles.values()].sort((a, b) => a.id - b.id || (a.locale ?? '').localeCompare(b.locale ?? ''))
  }

  protected abstract route(url: URL, req: IncomingMessage): Routed

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res))
    this.server.on('connection', (s) => {
      this.sockets.add(s)
      s.on('close', () => this.sockets.delete(s))
    })
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r))
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`
    return this
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()))
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url)
    const path = `${url.pathname}${url.search}`
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({ method: req.method ?? 'GET', path: decodeURIComponent(path), status, auth: req.headers.authorization ?? null, headers: req.headers })
      const text = typeof body === 'string' ? body : JSON.stringify(body)
      res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8', ...headers })
      res.end(text)
    }
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs))
    const fault = this.faults.find((f) => (f.times ?? 1) > 0 && f.match.test(decodeURIComponent(path)))
    if (fault) {
      fault.times = (fault.times ?? 1) - 1
      return send(fault.status, fault.body ?? { errors: [{ message: `fault ${fault.status}` }] }, fault.headers)
    }
    if (req.headers.authorization !== this.expectedAuth()) return send(401, { error: 'Couldn\u2019t authenticate you' })
    const r = this.route(url, req)
    send(r.status, r.body, r.headers)
  }
}

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`

/** Zendesk Guide: `/api/v2/help_center[/{locale}]/articles.json`, cursor pagination (`page[size]`, `page[after]`). */
export class FakeZendesk extends FakeVendor {
  email = 'agent@acme.test'
  token = 'zd-token-0123456789abcd'
  /** Answer has_more: false after this many pages (a listing that ends early, as a broken API would). */
  endAfterPages: number | null = null
  expectedAuth() {
    return basic(`${this.email}/token:${this.token}`)
  }
  protected route(url: URL): Routed {
    const m = /^\/api\/v2\/help_center(?:\/([a-z-]+))?\/articles\.json$/.exec(url.pathname)
    if (!m) return { status: 404, body: { error: 'InvalidEndpoint' } }
    const locale = m[1] ?? 'en-us'
    const size = Math.min(this.pageSize, Number(url.searchParams.get('page[size]') ?? 30))
    const after = Number(url.searchParams.get('page[after]') ?? 0)
    const all = this.list().filter((a) => (a.locale ?? 'en-us') === locale)
    const slice = all.slice(after, after + size)
    const pageNo = after / size + 1
    const hasMore = after + size < all.length && !(this.endAfterPages !== null && pageNo >= this.endAfterPages)
    return {
      status: 200,
      body: {
        articles: slice.map((a) => ({
          id: a.id,
          url: `${this.url}/api/v2/help_center/${locale}/articles/${a.id}.json`,
          html_url: `${this.url}/hc/${locale}/articles/${a.id}`,
          title: a.title,
          body: a.body,
          locale,
          source_locale: 'en-us',
          draft: !!a.draft,
          section_id: 1,
          updated_at: a.updated_at,
          user_segment_id: null,
          user_segment_ids: a.restricted ? [7] : [],
        })),
        meta: { has_more: hasMore, after_cursor: hasMore ? String(after + size) : null, before_cursor: null },
        links: { next: hasMore ? `${this.url}${url.pathname}?page[size]=${size}&page[after]=${after + size}` : null, prev: null },
      },
    }
  }
}

/** Intercom Articles: `/articles?page=N&per_page=50`, Bearer token, `Intercom-Version`. */
export class FakeIntercom extends FakeVendor {
  token = 'ic-token-abcdef0123456789'
  /** Pretend the help centre counts this many more articles than it lists (an API that stops short). */
  extraCount = 0
  expectedAuth() {
    return `Bearer ${this.token}`
  }
  protected route(url: URL, req: IncomingMessage): Routed {
    if (url.pathname !== '/articles') return { status: 404, body: { type: 'error.list', errors: [{ code: 'not_found' }] } }
    if (!req.headers['intercom-version']) return { status: 400, body: { type: 'error.list', errors: [{ code: 'intercom_version_missing' }] } }
    const per = Math.min(this.pageSize, Number(url.searchParams.get('per_page') ?? 50))
    const page = Number(url.searchParams.get('page') ?? 1)
    const all = this.list()
    const total_pages = Math.max(1, Math.ceil(all.length / per))
    return {
      status: 200,
      body: {
        type: 'list',
        total_count: all.length + this.extraCount,
        data: all.slice((page - 1) * per, page * per).map((a) => ({
          type: 'article',
          id: String(a.id),
          workspace_id: 'ws1',
          title: a.title,
          body: a.body,
          author_id: 1,
          state: a.draft ? 'draft' : 'published',
          created_at: 1_700_000_000,
          updated_at: Math.floor(Date.parse(a.updated_at) / 1000),
          url: a.draft ? null : `${this.url}/en/articles/${a.id}-article`,
          help_center_audience: a.restricted ? 'users' : 'everyone',
        })),
        pages: { type: 'pages', page, per_page: per, total_pages },
      },
    }
  }
}

/** Freshdesk Solutions: categories, folders (visibility), subfolders, articles with `Link: rel="next"`. */
export class FakeFreshdesk extends FakeVendor {
  apiKey = 'fd-key-0123456789abcdef'
  /** folder id -> {visibility, parent}; category 1 holds the top folders. */
  folders = new Map<number, { visibility: number; parent: number | null }>([[10, { visibility: 1, parent: null }]])
  expectedAuth() {
    return basic(`${this.apiKey}:X`)
  }
  protected route(url: URL): Routed {
    const p = url.pathname
    if (p === '/api/v2/solutions/categories') return { status: 200, body: [{ id: 1, name: 'General', visibility_in_portals: [1] }] }
    let m = /^\/api\/v2\/solutions\/categories\/(\d+)\/folders$/.exec(p)
    if (m)
      return {
        status: 200,
        body: [...this.folders].filter(([, f]) => f.parent === null).map(([id, f]) => ({ id, name: `Folder ${id}`, visibility: f.visibility })),
      }
    m = /^\/api\/v2\/solutions\/folders\/(\d+)\/subfolders$/.exec(p)
    if (m) {
      const parent = Number(m[1])
      return {
        status: 200,
        body: [...this.folders].filter(([, f]) => f.parent === parent).map(([id, f]) => ({ id, name: `Folder ${id}`, visibility: f.visibility })),
      }
    }
    m = /^\/api\/v2\/solutions\/folders\/(\d+)\/articles$/.exec(p)
    if (m) {
      const folder = Number(m[1])
      const per = Math.min(this.pageSize, Number(url.searchParams.get('per_page') ?? 30))
      const page = Number(url.searchParams.get('page') ?? 1)
      const all = this.list().filter((a) => (a.folder ?? 10) === folder)
      const slice = all.slice((page - 1) * per, page * per)
      const more = page * per < all.length
      return {
        status: 200,
        body: slice.map((a) => ({
          id: a.id,
          title: a.title,
          description: a.body,
          description_text: a.body.replace(/<[^>]*>/g, ''),
          status: a.draft ? 1 : 2,
          folder_id: folder,
          updated_at: a.updated_at,
        })),
        headers: more ? { link: `<${this.url}${p}?per_page=${per}&page=${page + 1}>; rel="next"` } : {},
      }
    }
    return { status: 404, body: { code: 'not_found' } }
  }
}

/** GitHub: repository, recursive tree (`truncated`), contents (base64 with line breaks). */
export class FakeGitHub extends FakeVendor {
  token = 'ghp_fake0123456789abcdefXYZ1'
  repo = 'acme/docs'
  branch = 'main'
  /** Answer the tree as truncated (too many files). */
  truncated = false
  /** Extra non-doc files in the tree. */
  others = ['README.txt', 'src/index.ts', 'docs/logo.png']
  expectedAuth() {
    return `Bearer ${this.token}`
  }
  sha(a: FakeArticle) {
    return Buffer.from(`${a.path}@${a.updated_at}`).toString('hex').slice(-40).padStart(40, '0')
  }
  protected route(url: URL): Routed {
    const p = decodeURIComponent(url.pathname)
    const base = `/repos/${this.repo}`
    if (p === base) return { status: 200, body: { full_name: this.repo, default_branch: this.branch, private: true } }
    const tree = /^\/repos\/[^/]+\/[^/]+\/git\/trees\/(.+)$/.exec(p)
    if (tree && p.startsWith(`${base}/`)) {
      if (tree[1] !== this.branch) return { status: 404, body: { message: 'Not Found' } }
      return {
        status: 200,
        body: {
          sha: 'f'.repeat(40),
          truncated: this.truncated,
          tree: [
            { path: 'docs', type: 'tree', sha: 'd'.repeat(40), mode: '040000' },
            ...this.others.map((o) => ({ path: o, type: 'blob', sha: 'e'.repeat(40), mode: '100644', size: 10 })),
            ...this.list().map((a) => ({ path: a.path!, type: 'blob', sha: this.sha(a), mode: '100644', size: a.body.length })),
          ],
        },
      }
    }
    const contents = /^\/repos\/[^/]+\/[^/]+\/contents\/(.+)$/.exec(p)
    if (contents && p.startsWith(`${base}/`)) {
      const a = this.list().find((x) => x.path === contents[1])
      if (!a || url.searchParams.get('ref') !== this.branch) return { status: 404, body: { message: 'Not Found' } }
      const b64 = Buffer.from(a.body)
        .toString('base64')
        .replace(/(.{60})/g, '$1\n')
      return {
        status: 200,
        body: {
          type: 'file',
          encoding: 'base64',
          size: a.body.length,
          name: a.path!.split('/').pop(),
          path: a.path,
          content: b64,
          sha: this.sha(a),
          html_url: `https://github.com/${this.repo}/blob/${this.branch}/${a.path}`,
        },
      }
    }
    return { status: 404, body: { message: 'Not Found' } }
  }
}
