import { type TSchema, Type } from '@sinclair/typebox'
import { type Connector, ConnectorError, type ConnectorSettings, type ListedArticle } from './connector.types.js'
import { nextLink, header, trimSlashes } from './connectors.fns.js'
import type { Upstream } from './http.js'
import { checked } from './shape.js'

const Id = Type.Integer()
const Category = Type.Object({ id: Id })
const Folder = Type.Object({ id: Id, visibility: Type.Optional(Type.Union([Type.Integer(), Type.Null()])) })
const Article = Type.Object({
  id: Id,
  title: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  status: Type.Integer(),
  updated_at: Type.String({ maxLength: 64 }),
})

/** Folders nest at most this deep (Freshdesk allows 3 levels of subfolders; more is a loop). */
const MAX_DEPTH = 8
const MAX_PAGES = 5000

/**
 * Freshdesk Solutions: Basic `{api_key}:X`; categories, their folders, subfolders recursively, then each
 * folder's articles page by page, following `Link: <...>; rel="next"` (on the account's own host only) until
 * it is absent. Status 1 is a draft; a folder whose `visibility` is not 1 (all users) hides its articles and
 * its subfolders'. An article's page is `{base_url}/support/solutions/articles/{id}`.
 */
export function freshdeskConnector(s: ConnectorSettings, apiKey: string, http: (auth: Record<string, string>) => Upstream): Connector {
  const api = http({ authorization: `Basic ${Buffer.from(`${apiKey}:X`).toString('base64')}` })
  const base = trimSlashes(s.base_url)

  async function* pages<T extends TSchema>(first: string, item: T, what: string, signal: AbortSignal) {
    let url: string | null = first
    for (let n = 0; url; n++) {
      if (n >= MAX_PAGES) throw new ConnectorError('incomplete', `the Freshdesk listing of ${what} did not end`)
      const r = await api.json(url, signal)
      yield checked(Type.Array(item, { maxItems: 1000 }), r.body, `Freshdesk ${what}`)
      url = nextLink(header(r.headers, 'link'), base)
    }
  }

  async function* folder(id: number, restricted: boolean, depth: number, signal: AbortSignal): AsyncGenerator<ListedArticle[]> {
    if (depth > MAX_DEPTH) throw new ConnectorError('incomplete', 'Freshdesk folders nest deeper than expected')
    for await (const list of pages(`${base}/api/v2/solutions/folders/${id}/articles?per_page=100&page=1`, Article, 'articles', signal)) {
      yield list.map((a): ListedArticle => {
        const url = `${base}/support/solutions/articles/${a.id}`
        return {
          key: url,
          url,
          title: a.title ?? `Article ${a.id}`,
          version: a.updated_at,
          locale: null,
          hidden: a.status !== 2 ? 'draft' : restricted ? 'restricted' : null,
          html: a.description ?? '',
        }
      })
    }
    const subfolders: { id: number; visibility?: number | null }[] = []
    try {
      for await (const subs of pages(`${base}/api/v2/solutions/folders/${id}/subfolders`, Folder, 'subfolders', signal)) subfolders.push(...subs)
    } catch (err) {
      // accounts without nested folders answer 404 here: a folder without subfolders
      if (!(err instanceof ConnectorError && err.reason === 'not_found')) throw err
    }
    for (const sub of subfolders) yield* folder(sub.id, restricted || (sub.visibility ?? 1) !== 1, depth + 1, signal)
  }

  return {
    async *list(signal) {
      for await (const categories of pages(`${base}/api/v2/solutions/categories`, Category, 'categories', signal))
        for (const c of categories)
          for await (const folders of pages(`${base}/api/v2/solutions/categories/${c.id}/folders`, Folder, 'folders', signal))
            for (const f of folders) yield* folder(f.id, (f.visibility ?? 1) !== 1, 0, signal)
    },
    content: async (a) => ({ format: 'html', text: a.html ?? '' }),
  }
}
