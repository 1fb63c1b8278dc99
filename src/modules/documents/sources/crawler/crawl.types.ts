import type { Logger } from 'pino'
import type { Db } from '../../../../db/client.js'
import type { JobQueue } from '../../../../jobs/queue.js'
import type { Clock } from '../../../../lib/clock.js'
import type { EventsPort } from '../../../shared/events.port.js'
import type { ExtractedPage } from '../../parsers/html-extract.js'
import type { SourcesRepo } from '../sources.repo.js'
import type { Fetcher } from './fetcher.js'

export interface CrawlSettings {
  userAgent: string
  /** Pages fetched at once by one crawl (the host gate bounds it further per host). */
  concurrency: number
  maxDepth: number
  maxDocumentsPerTenant: number
}

export interface CrawlerDeps {
  db: Db
  repo: SourcesRepo
  fetcher: Fetcher
  queue: JobQueue
  clock: Clock
  log: Logger
  settings: CrawlSettings
  /** The documents module's file parser, for PDF links; without it PDFs are reported and skipped. */
  parseFile?: (filename: string, bytes: Uint8Array) => Promise<{ text: string; title: string | null }>
  /**
   * HTML extraction off the event loop (the documents module's parser threads, with their time and memory
   * budget): a multi-megabyte page takes seconds and hundreds of MB of heap. Without it, extraction runs here.
   */
  extractHtml?: (html: string, url: string) => Promise<ExtractedPage>
  /** The outbound events outbox (source.crawl_failed), written with the run's outcome. */
  events?: EventsPort
}

/** Thrown when the worker stops mid-crawl; the job is retried and the run resumes from its frontier. */
export class CrawlInterrupted extends Error {
  override name = 'CrawlInterrupted'
  constructor() {
    super('crawl interrupted by shutdown; it resumes from its saved frontier')
  }
}

/** What visiting one URL came to, before it is recorded. */
export type Visit =
  | { type: 'failed'; url: string; depth: number; reason: string; transient: boolean }
  | { type: 'known'; url: string; depth: number }
  | { type: 'skipped'; url: string; finalUrl: string; depth: number; reason: string; links: string[] }
  | { type: 'not_modified'; url: string; finalUrl: string; depth: number; etag: string | null; lastModified: string | null }
  | {
      type: 'page'
      url: string
      finalUrl: string
      depth: number
      status: number
      title: string | null
      markdown: string
      hash: string
      links: string[]
      etag: string | null
      lastModified: string | null
    }
