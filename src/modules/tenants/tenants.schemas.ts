import { Type } from '@sinclair/typebox'
import { DateTime, Email, Nullable, Uuid } from '../../http/schemas.js'

export const TenantResponse = Type.Object({
  id: Uuid,
  name: Type.String(),
  has_llm_key: Type.Boolean(),
  llm_key_hint: Nullable(Type.String()),
  api_key_hint: Nullable(Type.String()),
  support_email: Nullable(Type.String()),
  is_verified: Type.Boolean(),
  is_active: Type.Boolean(),
  created_at: DateTime,
  updated_at: DateTime,
})

export const UpdateTenantRequest = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  llm_api_key: Type.Optional(Nullable(Type.String({ maxLength: 512 }))),
  support_email: Type.Optional(Nullable(Type.Union([Email, Type.Literal('')]))),
})

export const KycSecretGenerated = Type.Object({ secret_key: Type.String(), message: Type.String() })
export const KycStatus = Type.Object({
  has_secret: Type.Boolean(),
  masked_secret_hint: Nullable(Type.String()),
  previous_valid_until: Nullable(DateTime),
  identified_sessions_7d: Type.Integer(),
  identified_session_rate_7d: Type.Number(),
  last_identified_session: Nullable(DateTime),
})

export const ApiKeyStatus = Type.Union([Type.Literal('active'), Type.Literal('revoking'), Type.Literal('revoked')])
export const TenantApiKey = Type.Object({
  id: Uuid,
  key_hint: Type.String(),
  status: ApiKeyStatus,
  created_at: DateTime,
  expires_at: Nullable(DateTime),
  revoked_at: Nullable(DateTime),
  revoked_reason: Nullable(Type.String()),
  last_used_at: Nullable(DateTime),
})
export const TenantApiKeyList = Type.Object({ items: Type.Array(TenantApiKey) })
export const RotateReason = Type.Union(['leaked', 'scheduled', 'compromise', 'other'].map((r) => Type.Literal(r)))
export const RotateTenantApiKeyRequest = Type.Object({
  revoke_old_immediately: Type.Boolean({ default: false }),
  reason: Type.Optional(RotateReason),
})
export const RotateTenantApiKeyResponse = Type.Object({ api_key: Type.String(), key: TenantApiKey, message: Type.String() })
export const ApiKeyParams = Type.Object({ key_id: Uuid })

export const OPTIONAL_PII_TYPES = ['ID_DOC', 'IP', 'URL_TOKEN'] as const
export const MANDATORY_PII_TYPES = ['EMAIL', 'PHONE', 'CARD', 'IBAN', 'API_KEY', 'PASSWORD'] as const
const OptionalPiiType = Type.Union([Type.Literal('ID_DOC'), Type.Literal('IP'), Type.Literal('URL_TOKEN')])
export const PrivacyConfig = Type.Object({
  optional_entity_types: Type.Array(Type.String()),
  mandatory_entity_types: Type.Array(Type.String()),
})
export const UpdatePrivacyConfigRequest = Type.Object({
  optional_entity_types: Type.Array(OptionalPiiType, { maxItems: 10 }),
})

export const SupportSettings = Type.Object({
  l2_email: Nullable(Type.String()),
  escalation_language: Nullable(Type.String()),
  auto_assign: Type.Boolean({ description: 'a conversation entering the queue goes to the online agent with the fewest open conversations' }),
  agent_capacity: Type.Integer({ minimum: 1, maximum: 50, description: 'open conversations an agent is given at most by auto-assignment' }),
})
export const UpdateSupportSettingsRequest = Type.Object({
  auto_assign: Type.Optional(Type.Boolean()),
  agent_capacity: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  l2_email: Type.Optional(Nullable(Type.Union([Email, Type.Literal('')]))),
  escalation_language: Type.Optional(Nullable(Type.Union([Type.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$', maxLength: 35 }), Type.Literal('')]))),
})
