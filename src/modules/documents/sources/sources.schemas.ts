import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../../http/schemas.js'
import { DocumentResponse } from '../documents.schemas.js'

export const Schedule = Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('manual')])
/** A connector's schedules (contract "Knowledge connectors"): its upstream API is cheap to ask hourly. */
export const ConnectorSchedule = Type.Union([Type.Literal('hourly'), Type.Literal('daily'), Type.Literal('manual')])
const AnySchedule = Type.Union([Type.Literal('hourly'), Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('manual')])
export const SourceType = Type.Union([
  Type.Literal('url'),
  Type.Literal('zendesk'),
  Type.Literal('intercom'),
  Type.Literal('freshdesk'),
  Type.Literal('github'),
])

export const LastSync = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('partial'), Type.Literal('failed')]),
  added: Type.Integer(),
  updated: Type.Integer(),
  deleted: Type.Integer(),
  unchanged: Type.Integer(),
  skipped: Type.Integer(),
  /** Articles the listing held, published or not (beyond the contract). */
  listed: Type.Integer(),
  finished_at: DateTime,
  error: Nullable(Type.String()),
})

/** A connector's settings as shown: everything but its secret, which is a hint like `••••9f2c`. */
export const ConnectorView = Type.Object({
  kind: Type.String(),
  base_url: Type.String(),
  email: Type.Optional(Type.String()),
  locales: Type.Optional(Type.Array(Type.String())),
  repo: Type.Optional(Type.String()),
  ref: Type.Optional(Nullable(Type.String())),
  path: Type.Optional(Nullable(Type.String())),
  secret_hint: Nullable(Type.String()),
})
const Exclusions = Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 100 })
const MaxPages = Type.Integer({ minimum: 1, maximum: 5000 })

export const UrlSourceCreate = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  schedule: Type.Optional(Schedule),
  exclusions: Type.Optional(Nullable(Exclusions)),
  /** Most pages this source may hold (default CRAWLER_DEFAULT_MAX_PAGES). */
  max_pages: Type.Optional(Nullable(MaxPages)),
})

const Secret = Type.String({ minLength: 1, maxLength: 500 })
/** Every kind's fields; which are required for a kind is checked by the service (a 422 naming the field). */
export const ConnectorConfig = Type.Object(
  {
    base_url: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    email: Type.Optional(Nullable(Type.String({ maxLength: 320 }))),
    api_token: Type.Optional(Nullable(Secret)),
    access_token: Type.Optional(Nullable(Secret)),
    api_key: Type.Optional(Nullable(Secret)),
    token: Type.Optional(Nullable(Secret)),
    locales: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 20 }), { maxItems: 20 }))),
    repo: Type.Optional(Nullable(Type.String({ maxLength: 201 }))),
    ref: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    path: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  },
  { additionalProperties: false },
)

export const ConnectorCreate = Type.Object({
  kind: Type.Union([Type.Literal('zendesk'), Type.Literal('intercom'), Type.Literal('freshdesk'), Type.Literal('github')]),
  name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  schedule: Type.Optional(ConnectorSchedule),
  config: ConnectorConfig,
})

/** What "Test connection" saw: the first articles of the listing, or the upstream's failure in words. */
export const ConnectorTestResult = Type.Object({
  ok: Type.Boolean(),
  articles: Type.Array(
    Type.Object({
      title: Type.String(),
      url: Nullable(Type.String()),
      status: Type.Union([Type.Literal('published'), Type.Literal('draft'), Type.Literal('restricted')]),
      version: Type.String(),
    }),
  ),
  error: Nullable(Type.String()),
})

export const UrlSourceUpdate = Type.Object({
  name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  /** `hourly` for connectors only, `weekly` for URL sources only. */
  schedule: Type.Optional(Nullable(AnySchedule)),
  exclusions: Type.Optional(Nullable(Exclusions)),
  /** Same as `exclusions`, under the name the record shows. */
  exclusion_patterns: Type.Optional(Nullable(Exclusions)),
  max_pages: Type.Optional(Nullable(MaxPages)),
  /** Paused sources are not crawled, by schedule or by refresh. */
  paused: Type.Optional(Nullable(Type.Boolean())),
})

export const UrlSource = Type.Object({
  id: Uuid,
  name: Type.String(),
  url: Type.String(),
  source_type: SourceType,
  status: Type.Union([Type.Literal('queued'), Type.Literal('indexing'), Type.Literal('ready'), Type.Literal('error'), Type.Literal('paused')]),
  schedule: AnySchedule,
  exclusion_patterns: Type.Array(Type.String()),
  max_pages: Type.Integer(),
  pages_found: Type.Integer(),
  pages_indexed: Type.Integer(),
  chunks_created: Type.Integer(),
  last_crawled_at: Nullable(DateTime),
  next_crawl_at: Nullable(DateTime),
  error_message: Nullable(Type.String()),
  warning_message: Nullable(Type.String()),
  created_at: DateTime,
  updated_at: DateTime,
  /**
   * Counts for progress bars: `crawl` while a crawl runs (URLs of its frontier handled of those found so
   * far; the total grows as pages reveal links), else null; `indexing`, pages ready of pages found.
   */
  progress: Type.Object({
    crawl: Nullable(Type.Object({ done: Type.Integer(), total: Type.Integer() })),
    indexing: Type.Object({ done: Type.Integer(), total: Type.Integer() }),
  }),
  /** Connectors: what the last sync did; null for URL sources and before the first sync ends. */
  last_sync: Nullable(LastSync),
  /** Connectors: their settings without the secret; null for URL sources. */
  connector: Nullable(ConnectorView),
})

export const CrawlRun = Type.Object({
  id: Uuid,
  status: Type.String(),
  trigger: Type.String(),
  pages_found: Type.Integer(),
  pages_indexed: Type.Integer(),
  pages_unchanged: Type.Integer(),
  pages_removed: Type.Integer(),
  failed_urls: Type.Array(Type.Object({ url: Type.String(), reason: Type.String() })),
  duration_seconds: Nullable(Type.Number()),
  error_message: Nullable(Type.String()),
  created_at: DateTime,
  finished_at: Nullable(DateTime),
})

export const SourcePage = Type.Object({
  id: Uuid,
  title: Nullable(Type.String()),
  url: Type.String(),
  status: Type.String(),
  chunk_count: Type.Integer(),
  updated_at: DateTime,
})

export const UrlSourceDetail = Type.Intersect([UrlSource, Type.Object({ recent_runs: Type.Array(CrawlRun), pages: Type.Array(SourcePage) })])

/** Uploaded files (in the documents module's shape) and URL sources. */
export const KnowledgeSources = Type.Object({ documents: Type.Array(DocumentResponse), url_sources: Type.Array(UrlSource) })

export const SourceParams = Type.Object({ source_id: Uuid })
export const SourcePageParams = Type.Object({ source_id: Uuid, document_id: Uuid })
