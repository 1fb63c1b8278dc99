import type { Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from './foundation.js'

/** URL sources: daily, weekly, manual; connectors: hourly, daily, manual. */
export type SourceSchedule = 'hourly' | 'daily' | 'weekly' | 'manual'
export type SourceKind = 'url' | 'zendesk' | 'intercom' | 'freshdesk' | 'github'

/** What a connector's last sync did (contract "Knowledge connectors"). */
export interface LastSync {
  status: 'ok' | 'partial' | 'failed'
  added: number
  updated: number
  deleted: number
  unchanged: number
  skipped: number
  /** Articles the listing held (published or not); a much shorter listing than the last complete one deletes nothing. */
  listed: number
  finished_at: string
  error: string | null
  /** The size of the last listing believed complete, which the next listing is compared with. */
  reference_listed?: number | null
  /** This sync's complete-looking listing was much shorter than the reference: nothing was deleted. */
  short?: boolean
}
/** Stored status; `paused` is a flag of its own and shown instead of this while set. */
export type SourceStatus = 'queued' | 'indexing' | 'ready' | 'error'
export type CrawlTrigger = 'initial' | 'manual' | 'scheduled'
export type CrawlRunStatus = 'running' | 'completed' | 'partial' | 'failed' | 'cancelled'
export type CrawlQueueState = 'pending' | 'done' | 'failed' | 'skipped'

export interface FailedUrl {
  url: string
  reason: string
}

export interface UrlSourcesTable {
  id: Generated<string>
  tenant_id: string
  name: string
  /** The normalised start URL. */
  url: string
  status: Generated<SourceStatus>
  paused: Generated<boolean>
  schedule: SourceSchedule
  exclusion_patterns: Json<string[]>
  max_pages: number
  last_crawled_at: NullableTimestamp
  next_crawl_at: NullableTimestamp
  /** When the owner last asked for a crawl (create or refresh); refresh is allowed once an hour. */
  refresh_requested_at: NullableTimestamp
  /** What the next crawl job should record as its trigger. */
  pending_trigger: Generated<CrawlTrigger>
  error_message: string | null
  warning_message: string | null
  created_at: Timestamp
  updated_at: Timestamp
  kind: Generated<SourceKind>
  /** A connector's settings without its secret (base_url, email, repo, ref, path, locales). */
  connector_config: Json<Record<string, unknown>> | null
  /** A connector's token or key, encrypted (lib/crypto); never returned, only `secret_hint`. */
  secret_enc: string | null
  secret_hint: string | null
  last_sync: Json<LastSync> | null
}

export interface CrawlRunsTable {
  id: Generated<string>
  tenant_id: string
  source_id: string
  trigger: CrawlTrigger
  status: Generated<CrawlRunStatus>
  /** The site the crawl stays on (host without "www."), settled after the start URL's redirects. */
  site: string
  sitemap_done: Generated<boolean>
  pages_found: Generated<number>
  pages_indexed: Generated<number>
  pages_unchanged: Generated<number>
  pages_removed: Generated<number>
  cap_reached: Generated<boolean>
  /** Filled when the run ends; while it runs the failures live in crawl_queue. */
  failed_urls: Json<FailedUrl[]>
  error_message: string | null
  created_at: Timestamp
  finished_at: NullableTimestamp
}

/** The persisted frontier and visited set of a run, so a crawl resumes after a crash without refetching. */
export interface CrawlQueueTable {
  run_id: string
  url: string
  depth: number
  seq: Generated<number>
  state: Generated<CrawlQueueState>
  reason: string | null
}

export interface SourcePagesTable {
  id: Generated<string>
  tenant_id: string
  source_id: string
  url: string
  document_id: string | null
  etag: string | null
  last_modified: string | null
  content_hash: string | null
  /** Removed by the owner: never fetched or added again. */
  excluded: Generated<boolean>
  last_status: number | null
  last_seen_run_id: string | null
  /** Same-site links found on the page at its last fetch; followed again when it answers 304. */
  links: Json<string[]>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface SourcesTables {
  url_sources: UrlSourcesTable
  crawl_runs: CrawlRunsTable
  crawl_queue: CrawlQueueTable
  source_pages: SourcePagesTable
}
