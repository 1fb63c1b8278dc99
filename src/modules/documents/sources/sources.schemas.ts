import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../../http/schemas.js'
import { DocumentResponse } from '../documents.schemas.js'

export const Schedule = Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('manual')])
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

export const UrlSourceUpdate = Type.Object({
  name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  schedule: Type.Optional(Nullable(Schedule)),
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
  source_type: Type.Literal('url'),
  status: Type.Union([Type.Literal('queued'), Type.Literal('indexing'), Type.Literal('ready'), Type.Literal('error'), Type.Literal('paused')]),
  schedule: Schedule,
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
