import { Type, type Static } from '@sinclair/typebox'
import { DateTime, Email, Nullable, Uuid } from '../../http/schemas.js'
import { PROFILE_LIMITS } from './knowledge.fns.js'

const ProfileFieldName = Type.Union([
  Type.Literal('product_name'),
  Type.Literal('topics'),
  Type.Literal('glossary'),
  Type.Literal('support_email'),
  Type.Literal('support_urls'),
])

export const GlossaryEntry = Type.Object({ term: Type.String(), definition: Type.String() })

export const KnowledgeProfileResponse = Type.Object({
  product_name: Nullable(Type.String()),
  topics: Type.Array(Type.String()),
  glossary: Type.Array(GlossaryEntry),
  support_email: Nullable(Type.String()),
  support_urls: Type.Array(Type.String()),
  extraction_status: Type.Union([Type.Literal('pending'), Type.Literal('done'), Type.Literal('failed')]),
  updated_at: DateTime,
  // additions beyond the contract's fields
  /** Tenant setting: high-confidence FAQ candidates are approved automatically (off by default). */
  faq_auto_approve: Type.Boolean(),
  /** Fields the operator set; extractions leave them alone until they are handed back with reset_fields. */
  operator_fields: Type.Array(ProfileFieldName),
  extracted_at: Nullable(DateTime),
})

export const KnowledgeProfilePatchRequest = Type.Object({
  product_name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  topics: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: PROFILE_LIMITS.topicChars }), { maxItems: PROFILE_LIMITS.topics })),
  glossary: Type.Optional(
    Type.Array(
      Type.Object({
        term: Type.String({ minLength: 1, maxLength: PROFILE_LIMITS.termChars }),
        definition: Type.String({ maxLength: PROFILE_LIMITS.definitionChars }),
      }),
      { maxItems: PROFILE_LIMITS.glossary },
    ),
  ),
  support_email: Type.Optional(Nullable(Type.Union([Email, Type.Literal('')]))),
  support_urls: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: PROFILE_LIMITS.urlChars }), { maxItems: PROFILE_LIMITS.urls })),
  faq_auto_approve: Type.Optional(Type.Boolean()),
  /** Hand these fields back to the extraction (their current values stay until the next extraction). */
  reset_fields: Type.Optional(Type.Array(ProfileFieldName, { maxItems: 5 })),
})
export type KnowledgeProfilePatch = Static<typeof KnowledgeProfilePatchRequest>

const FaqSourceSchema = Type.Union([Type.Literal('docs'), Type.Literal('logs'), Type.Literal('swagger'), Type.Literal('operator')])

export const KnowledgeFaqItemResponse = Type.Object({
  id: Uuid,
  question: Type.String(),
  answer: Type.String(),
  confidence: Nullable(Type.Number()),
  source: FaqSourceSchema,
  approved: Type.Boolean(),
  created_at: DateTime,
  updated_at: DateTime,
  document_id: Nullable(Uuid),
})

export const KnowledgeFaqListResponse = Type.Object({
  items: Type.Array(KnowledgeFaqItemResponse),
  total: Type.Integer(),
  pending_count: Type.Integer(),
})

/** The short form's optional tenant_id; any string (not only a uuid), answered 404 unless it is the caller's. */
const TenantIdQuery = Type.Optional(Type.String({ maxLength: 100 }))

export const ShortFormQuery = Type.Object({ tenant_id: TenantIdQuery })

export const FaqListQuery = Type.Object({
  approved: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('all')], { default: 'all' })),
  source: Type.Optional(
    Type.Union([Type.Literal('docs'), Type.Literal('logs'), Type.Literal('swagger'), Type.Literal('operator'), Type.Literal('all')], { default: 'all' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
  tenant_id: TenantIdQuery,
})
export type FaqListFilter = Static<typeof FaqListQuery>

export const KnowledgeFaqUpdateRequest = Type.Object({
  question: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  answer: Type.Optional(Type.String({ minLength: 1, maxLength: 8000 })),
})

export const KnowledgeFaqApproveResponse = Type.Object({ id: Uuid, approved: Type.Literal(true) })
export const KnowledgeFaqRejectResponse = Type.Object({ id: Uuid, deleted: Type.Literal(true) })
export const KnowledgeFaqApproveAllResponse = Type.Object({ approved_count: Type.Integer() })

/** `/api/v1/tenants/{tenant_id}/knowledge/...`: tenant_id is a path string (404 unless the caller's own). */
export const TenantPathParams = Type.Object({ tenant_id: Type.String({ maxLength: 100 }) })
export const FaqPathParams = Type.Object({ faq_id: Uuid })
export const TenantFaqPathParams = Type.Object({ tenant_id: Type.String({ maxLength: 100 }), faq_id: Uuid })
