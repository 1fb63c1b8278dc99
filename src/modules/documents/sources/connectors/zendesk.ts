import { type Static, Type } from '@sinclair/typebox'
import { type Connector, ConnectorError, type ConnectorSettings, type ListedArticle } from './connector.types.js'
import type { Upstream } from './http.js'
import { trimSlashes } from './connectors.fns.js'
import { checked } from './shape.js'

const Id = Type.Union([Type.Integer(), Type.String({ maxLength: 64 })])
const Article = Type.Object({
  id: Id,
  html_url: Type.String({ maxLength: 4096 }),
  title: Type.Union([Type.String(), Type.Null()]),
  body: Type.Union([Type.String(), Type.Null()]),
  locale: Type.String({ maxLength: 32 }),
  draft: Type.Boolean(),
  updated_at: Type.String({ maxLength: 64 }),
  user_segment_id: Type.Optional(Type.Union([Id, Type.Null()])),
  user_segment_ids: Type.Optional(Type.Union([Type.Array(Id), Type.Null()])),
})
const Page = Type.Object({
  articles: Type.Array(Article, { maxItems: 1000 }),
  meta: Type.Object({ has_more: Type.Boolean(), after_cursor: Type.Union([Type.String({ maxLength: 2048 }), Type.Null()]) }),
})

/** Rows of a cursor page; 100 is the API's largest. */
const PAGE_SIZE = 100
/** A listing that has not ended after this many pages is a loop in the vendor's cursors, not a help centre. */
const MAX_PAGES = 2000

/**
 * Zendesk Guide: Basic `{email}/token:{api_token}`, cursor pages of `/api/v2/help_center[/{locale}]/articles.json`
 * (`meta.has_more`, `meta.after_cursor`; the next URL is built here from the cursor rather than taken from
 * `links.next`, so a reply cannot lead the credentials elsewhere). One listing per configured locale, each
 * translation its own article. Restricted: `user_segment_id` set or `user_segment_ids` not empty.
 */
export function zendeskConnector(s: ConnectorSettings, apiToken: string, http: (auth: Record<string, string>) => Upstream): Connector {
  const api = http({ authorization: `Basic ${Buffer.from(`${s.email}/token:${apiToken}`).toString('base64')}` })
  const base = trimSlashes(s.base_url)
  const locales = s.locales?.length ? s.locales : [null]
  return {
    async *list(signal) {
      for (const locale of locales) {
        const path = locale ? `/api/v2/help_center/${encodeURIComponent(locale)}/articles.json` : '/api/v2/help_center/articles.json'
        let after: string | null = null
        for (let n = 0; ; n++) {
          if (n >= MAX_PAGES) throw new ConnectorError('incomplete', 'the Zendesk listing did not end after 2000 pages')
          const url: string = `${base}${path}?page[size]=${PAGE_SIZE}${after ? `&page[after]=${encodeURIComponent(after)}` : ''}`
          const page: Static<typeof Page> = checked(Page, (await api.json(url, signal)).body, 'Zendesk articles page')
          yield page.articles.map(
            (a): ListedArticle => ({
              key: a.html_url,
              url: a.html_url,
              title: a.title ?? `Article ${a.id}`,
              version: a.updated_at,
              locale: a.locale,
              hidden: a.draft ? 'draft' : a.user_segment_id != null || (a.user_segment_ids ?? []).length > 0 ? 'restricted' : null,
              html: a.body ?? '',
            }),
          )
          if (!page.meta.has_more) break
          if (!page.meta.after_cursor) throw new ConnectorError('incomplete', 'Zendesk said there are more articles but gave no cursor to them')
          after = page.meta.after_cursor
        }
      }
    },
    content: async (a) => ({ format: 'html', text: a.html ?? '' }),
  }
}
