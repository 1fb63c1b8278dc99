import type { ColumnType, Generated } from 'kysely'
import type { NullableTimestamp, Timestamp } from './foundation.js'

export type DocumentFileType = 'pdf' | 'markdown' | 'docx' | 'doc' | 'plaintext' | 'json' | 'yaml' | 'swagger' | 'url'
export type DocumentStatus = 'processing' | 'ready' | 'error'

export interface HealthWarning {
  type: string
  severity: 'high' | 'medium' | 'low'
  message: string
}

export interface HealthStatus {
  score: number | null
  checked_at: string
  warnings: HealthWarning[]
  error: string | null
}

export interface DocumentsTable {
  id: Generated<string>
  tenant_id: string
  filename: string
  file_type: DocumentFileType
  status: Generated<DocumentStatus>
  error_message: string | null
  /** A crawled page's URL source (FK added by the sources migration); null for uploaded files. */
  source_id: string | null
  source_url: string | null
  title: string | null
  size_bytes: number
  /** sha256 hex of the uploaded bytes (uploads) or of the page text (crawled pages). */
  content_hash: string
  chunk_count: Generated<number>
  health_status: ColumnType<HealthStatus | null, string | null | undefined, string | null>
  /** Markdown: headings as `#`, code fenced. The indexer chunks this. */
  parsed_text: Generated<string>
  /** The regconfig detected for the whole text (chunks carry their own). */
  lang: string | null
  /** A connector article's locale ("de", "en-us"): the indexer stems it in that language instead of guessing. */
  locale: Generated<string | null>
  indexed_at: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}

export interface ChunksTable {
  id: Generated<string>
  tenant_id: string
  document_id: string
  ordinal: number
  content: string
  section_title: string | null
  /** Headings above the chunk, e.g. "Guide > Install > Linux". */
  heading_path: string | null
  source_url: string | null
  token_count: number
  /** The regconfig `tsv` was built with (english, german, ..., simple). */
  lang: string
  /** Written only through SQL (`to_tsvector`); read for search. */
  tsv: ColumnType<string, never, never>
  /** pgvector `vector` (read as text "[...]") or `real[]` (read as number[]); written only through SQL. */
  embedding: ColumnType<string | number[] | null, never, never>
  embedding_model: string | null
  created_at: Timestamp
}

/** Why the embedding failed: `scope` provider (the address or the service) or tenant (its key, or none). */
export type EmbeddingFailureReason =
  | 'unreachable'
  | 'timeout'
  | 'provider_error'
  | 'rate_limited'
  | 'model_not_found'
  | 'malformed'
  | 'wrong_width'
  | 'not_finite'
  | 'zero_norm'
  | 'key_refused'
  | 'rejected'
  | 'no_key'
export type EmbeddingFailureScope = 'provider' | 'tenant'

export interface EmbeddingFailuresTable {
  tenant_id: string
  /** The embedding model the failed run asked for: a row of another model says nothing about the one in use. */
  model: string
  reason: EmbeddingFailureReason
  scope: EmbeddingFailureScope
  attempts: Generated<number>
  first_failed_at: Timestamp
  failed_at: Timestamp
}

export interface IngestionTables {
  documents: DocumentsTable
  chunks: ChunksTable
  embedding_failures: EmbeddingFailuresTable
}
