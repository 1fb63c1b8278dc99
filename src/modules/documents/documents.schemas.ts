import { Type } from '@sinclair/typebox'
import { DateTime, ErrorBody, Nullable, Uuid, ValidationErrorBody } from '../../http/schemas.js'

export const FileType = Type.Union([
  Type.Literal('pdf'),
  Type.Literal('markdown'),
  Type.Literal('docx'),
  Type.Literal('doc'),
  Type.Literal('plaintext'),
  Type.Literal('json'),
  Type.Literal('yaml'),
  Type.Literal('swagger'),
  Type.Literal('url'),
])
export const DocumentStatus = Type.Union([Type.Literal('processing'), Type.Literal('ready'), Type.Literal('error')])

export const HealthWarning = Type.Object({
  type: Type.String(),
  severity: Type.Union([Type.Literal('high'), Type.Literal('medium'), Type.Literal('low')]),
  message: Type.String(),
})

export const DocumentHealthStatusResponse = Type.Object({
  score: Nullable(Type.Integer({ minimum: 0, maximum: 100 })),
  checked_at: DateTime,
  warnings: Type.Array(HealthWarning),
  error: Nullable(Type.String()),
})

/**
 * Whether the document's chunks have vectors of the embedding model in use. A `ready` document is
 * searchable by keywords at once; vectors follow. `failed` carries the reason (no provider text) and the
 * time of the last failed try; it clears by itself once the vectors exist.
 */
export const DocumentEmbeddings = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('pending'), Type.Literal('failed')]),
  model: Type.String(),
  done: Type.Integer({ minimum: 0 }),
  total: Type.Integer({ minimum: 0 }),
  reason: Nullable(
    Type.Union([
      Type.Literal('unreachable'),
      Type.Literal('timeout'),
      Type.Literal('provider_error'),
      Type.Literal('rate_limited'),
      Type.Literal('model_not_found'),
      Type.Literal('malformed'),
      Type.Literal('wrong_width'),
      Type.Literal('not_finite'),
      Type.Literal('zero_norm'),
      Type.Literal('key_refused'),
      Type.Literal('rejected'),
      Type.Literal('no_key'),
    ]),
  ),
  message: Nullable(Type.String()),
  failed_at: Nullable(DateTime),
})

export const DocumentResponse = Type.Object({
  id: Uuid,
  filename: Type.String(),
  title: Nullable(Type.String()),
  file_type: FileType,
  status: DocumentStatus,
  error_message: Nullable(Type.String()),
  source_id: Nullable(Uuid),
  source_url: Nullable(Type.String()),
  size_bytes: Type.Integer(),
  chunk_count: Type.Integer(),
  health_status: Nullable(DocumentHealthStatusResponse),
  created_at: DateTime,
  updated_at: DateTime,
  embeddings: DocumentEmbeddings,
  embedding_error: Nullable(
    Type.String({ description: 'why the vectors of this document could not be made (the provider failed or sent unusable vectors); null when none failed' }),
  ),
})

/**
 * How far indexing got, for a progress bar: `parsing` (the file is being read and chunked; no counts yet),
 * `embedding` (searchable by keywords already; `done` of `total` chunks have their vector), `done`, `error`.
 */
export const IndexingProgress = Type.Object({
  stage: Type.Union([Type.Literal('parsing'), Type.Literal('embedding'), Type.Literal('done'), Type.Literal('error')]),
  done: Type.Integer(),
  total: Type.Integer(),
})

export const DocumentDetailResponse = Type.Composite([
  DocumentResponse,
  Type.Object({ parsed_text: Type.String(), parsed_text_length: Type.Integer(), progress: IndexingProgress }),
])

export const DocumentListResponse = Type.Object({ documents: Type.Array(DocumentResponse) })

export const DocumentParams = Type.Object({ document_id: Uuid })

/** For the OpenAPI document only: the body is read as a multipart stream, not validated as JSON. */
export const DocumentUploadBody = Type.Object({ file: Type.String({ format: 'binary' }) })

/** 422 on upload: a validation error (no file field) or a parse error with a message (`{detail: "..."}`). */
export const UploadUnprocessable = Type.Union([ValidationErrorBody, ErrorBody])
