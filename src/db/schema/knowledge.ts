import type { Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from './foundation.js'

export type ExtractionStatus = 'pending' | 'done' | 'failed'
/** `operator`: a question a person on the team answered when resolving its ticket (assist, issue 39). */
export type FaqSource = 'docs' | 'logs' | 'swagger' | 'operator'
/** `rejected` and `deleted` rows are tombstones: hidden everywhere, kept so the same candidate is not suggested again. */
export type FaqState = 'active' | 'rejected' | 'deleted'
export type GapSource = 'mode_a' | 'mode_b'
export type GapStatus = 'active' | 'dismissed' | 'archived' | 'closed' | 'inactive'
export type GapClassification = 'uncovered' | 'partial' | 'covered'
export type GapRunMode = 'mode_a' | 'mode_b' | 'both'
export type GapRunStatus = 'queued' | 'running' | 'done' | 'failed'

export interface GlossaryEntry {
  term: string
  definition: string
}

/** Profile fields the operator may set; a field the operator set is never overwritten by an extraction. */
export type ProfileField = 'product_name' | 'topics' | 'glossary' | 'support_email' | 'support_urls'

export interface KnowledgeProfilesTable {
  tenant_id: string
  product_name: string | null
  topics: Json<string[]>
  glossary: Json<GlossaryEntry[]>
  support_email: string | null
  support_urls: Json<string[]>
  extraction_status: Generated<ExtractionStatus>
  /** Which fields the operator set (PATCH), so later extractions leave them alone. */
  operator_fields: Json<ProfileField[]>
  /** Tenant setting: approve new FAQ candidates at or above the confidence threshold automatically. */
  faq_auto_approve: Generated<boolean>
  /** A document was indexed after this; the extraction job picks it up (the sweep is the safety net). */
  dirty_at: NullableTimestamp
  extracted_at: NullableTimestamp
  /** Short reason of the last failed extraction (never provider text with secrets). */
  extraction_error: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface FaqCandidatesTable {
  id: Generated<string>
  tenant_id: string
  question: string
  answer: string
  confidence: number | null
  source: FaqSource
  approved: Generated<boolean>
  state: Generated<FaqState>
  /** Normalised content terms of the question, sorted: the de-duplication key. */
  question_key: string
  /** The document a docs/swagger candidate came from (null for logs and after the document was deleted). */
  document_id: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

/** Which version (content hash) of each document the FAQ extraction has already read. */
export interface KnowledgeDocumentsTable {
  tenant_id: string
  document_id: string
  content_hash: string
  extracted_at: Timestamp
}

export interface GapsTable {
  id: Generated<string>
  tenant_id: string
  source: GapSource
  /** Stable normalised key of the topic label or the cluster's main terms; a dismissed key stays dismissed. */
  key: string
  label: string
  coverage_score: number | null
  classification: GapClassification
  status: GapStatus
  dismiss_reason: string | null
  is_new: Generated<boolean>
  question_count: Generated<number>
  signal_weight: number | null
  example_questions: Json<string[]>
  /** Top weighted terms of the topic or cluster, used to recognise the same gap in the next run. */
  terms: Json<Record<string, number>>
  linked_gap_id: string | null
  first_seen_run_id: string | null
  last_seen_run_id: string | null
  last_question_at: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}

export interface GapRunsTable {
  id: Generated<string>
  tenant_id: string
  mode: GapRunMode
  status: GapRunStatus
  accepted_at: Timestamp
  started_at: NullableTimestamp
  finished_at: NullableTimestamp
  error: string | null
  stats: Json<Record<string, unknown> | null> | null
}

export interface KnowledgeTables {
  knowledge_profiles: KnowledgeProfilesTable
  faq_candidates: FaqCandidatesTable
  knowledge_documents: KnowledgeDocumentsTable
  gaps: GapsTable
  gap_runs: GapRunsTable
}
