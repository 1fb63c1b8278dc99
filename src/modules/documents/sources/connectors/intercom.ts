import { Type } from '@sinclair/typebox'
import { type Connector, ConnectorError, type ConnectorSettings, type ListedArticle } from './connector.types.js'
import type { Upstream } from './http.js'
import { trimSlashes } from './connectors.fns.js'
import { checked } from './shape.js'

const Article = Type.Object({
  id: Type.Union([Type.String({ maxLength: 64 }), Type.Integer()]),
  title: Type.Union([Type.String(), Type.Null()]),
  body: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  state: Type.String({ maxLength: 32 }),
  url: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
  updated_at: Type.Integer(),
  help_center_audience: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
})
const Page = Type.Object({
  total_count: Type.Optional(Type.Integer()),
  data: Type.Array(Article, { maxItems: 1000 }),
  pages: Type.Object({ page: Type.Integer(), total_pages: Type.Integer() }),
})

const PER_PAGE = 50
const MAX_PAGES = 5000

/**
 * Intercom Articles: Bearer token, `Intercom-Version: 2.16`, `/articles?page=N&per_page=50` until
 * `total_pages` or an empty page. Drafts (`state` not published) and an audience other than `everyone` are
 * not answered from. A listing that ends with fewer articles than its own `total_count` is incomplete.
 */
export function intercomConnector(s: ConnectorSettings, token: string, http: (auth: Record<string, string>) => Upstream): Connector {
  const api = http({ authorization: `Bearer ${token}`, 'intercom-version': '2.16' })
  const base = trimSlashes(s.base_url)
  return {
    async *list(signal) {
      let seen = 0
      let total: number | undefined
      for (let page = 1; page <= MAX_PAGES; page++) {
        const body = checked(Page, (await api.json(`${base}/articles?page=${page}&per_page=${PER_PAGE}`, signal)).body, 'Intercom articles page')
        total ??= body.total_count
        seen += body.data.length
        if (body.data.length === 0) break
        yield body.data.map(
          (a): ListedArticle => ({
            key: a.url || `intercom:article:${a.id}`,
            url: a.url ?? null,
            title: a.title ?? `Article ${a.id}`,
            version: String(a.updated_at),
            locale: null,
            hidden: a.state !== 'published' ? 'draft' : (a.help_center_audience ?? 'everyone') !== 'everyone' ? 'restricted' : null,
            html: a.body ?? '',
          }),
        )
        if (page >= body.pages.total_pages) break
      }
      if (total !== undefined && seen < total)
        throw new ConnectorError('incomplete', `Intercom listed ${seen} of the ${total} articles it counts; nothing was deleted`)
    },
    content: async (a) => ({ format: 'html', text: a.html ?? '' }),
  }
}
