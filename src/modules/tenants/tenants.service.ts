import { randomBytes } from 'node:crypto'
import type { Selectable, Updateable } from 'kysely'
import type { Static } from '@sinclair/typebox'
import type { Db } from '../../db/client.js'
import type { ApiKeysTable, TenantsTable } from '../../db/schema/foundation.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import { lastChars, sha256Hex, type Cipher } from '../../lib/crypto.js'
import { badRequest, conflict, notFound, ValidationError } from '../../lib/errors.js'
import type { TenantsRepo } from './tenants.repo.js'
import {
  MANDATORY_PII_TYPES,
  OPTIONAL_PII_TYPES,
  type RotateTenantApiKeyRequest,
  type UpdateSupportSettingsRequest,
  type UpdateTenantRequest,
} from './tenants.schemas.js'

export const API_KEY_GRACE_SECONDS = 24 * 3600
export const KYC_PREVIOUS_VALID_SECONDS = 3600

type TenantRow = Selectable<TenantsTable>
type ApiKeyRow = Selectable<ApiKeysTable>

export interface IdentifiedSessionStats {
  identified: number
  total: number
  last: Date | null
}

/** `ck_` + 32 hex characters. Only its SHA-256 and last four characters are stored. */
export const newApiKey = (): string => `ck_${randomBytes(16).toString('hex')}`

/** A revoking key whose grace window has passed is revoked, whether or not a job has written that yet. */
export function presentApiKey(k: ApiKeyRow, now: Date) {
  const lapsed = k.status === 'revoking' && k.expires_at !== null && k.expires_at <= now
  return {
    id: k.id,
    key_hint: k.key_hint,
    status: lapsed ? ('revoked' as const) : k.status,
    created_at: k.created_at.toISOString(),
    expires_at: k.expires_at?.toISOString() ?? null,
    revoked_at: (lapsed ? k.expires_at : k.revoked_at)?.toISOString() ?? null,
    revoked_reason: k.revoked_reason,
    last_used_at: k.last_used_at?.toISOString() ?? null,
  }
}

export function createTenantsService(deps: {
  db: Db
  clock: Clock
  cipher: Cipher
  repo: TenantsRepo
  /** Identified widget sessions in a window; the widget module provides it. */
  sessionStats?: (tenantId: string, since: Date) => Promise<IdentifiedSessionStats>
  /** Called after a language-model key is set (the documents module embeds what waited for one). */
  onLlmKeySet?: (tenantId: string) => Promise<unknown>
}) {
  const { db, clock, cipher, repo } = deps

  async function tenantOr404(tenantId: string): Promise<TenantRow> {
    const t = await repo.findTenant(tenantId)
    if (!t) throw notFound('Tenant not found')
    return t
  }

  async function present(t: TenantRow) {
    const [owner, keys] = await Promise.all([repo.findOwner(t.id), repo.listApiKeys(t.id)])
    const now = clock.now()
    const activeKey = keys.find((k) => presentApiKey(k, now).status === 'active')
    return {
      id: t.id,
      name: t.name,
      has_llm_key: t.llm_key_enc !== null,
      llm_key_hint: t.llm_key_hint ? `sk-...${t.llm_key_hint}` : null,
      api_key_hint: activeKey ? `ck_...${activeKey.key_hint}` : null,
      support_email: t.support_email,
      is_verified: owner?.is_verified ?? false,
      is_active: t.is_active,
      created_at: t.created_at.toISOString(),
      updated_at: t.updated_at.toISOString(),
    }
  }

  return {
    tenantOr404,

    /** Creates a tenant with its first widget API key; returns the key's plaintext (shown once). */
    async provision(ownerUserId: string, trx: Db): Promise<{ tenant: TenantRow; apiKey: string }> {
      const now = clock.now()
      const tenant = await repo.insertTenant({ name: 'My Workspace', owner_user_id: ownerUserId, now }, trx)
      const apiKey = newApiKey()
      await repo.insertApiKey(tenant.id, { key_hash: sha256Hex(apiKey), key_hint: lastChars(apiKey), now }, trx)
      return { tenant, apiKey }
    },

    me: async (tenantId: string) => present(await tenantOr404(tenantId)),

    async update(tenantId: string, input: Static<typeof UpdateTenantRequest>) {
      const patch: Updateable<TenantsTable> = { updated_at: clock.now() }
      if (input.name !== undefined) patch.name = input.name.trim()
      if (input.llm_api_key !== undefined) {
        const key = input.llm_api_key?.trim() ?? ''
        if (key === '') {
          patch.llm_key_enc = null
          patch.llm_key_hint = null
        } else {
          if (!key.startsWith('sk-') || key.length < 8 || /\s/.test(key)) {
            throw new ValidationError(['body', 'llm_api_key'], 'The language-model API key must start with sk-')
          }
          patch.llm_key_enc = cipher.encrypt(key)
          patch.llm_key_hint = lastChars(key)
        }
      }
      if (input.support_email !== undefined) patch.support_email = input.support_email?.trim().toLowerCase() || null
      const t = await repo.updateTenant(tenantId, patch)
      if (!t) throw notFound('Tenant not found')
      if (patch.llm_key_enc && deps.onLlmKeySet) await deps.onLlmKeySet(tenantId)
      return present(t)
    },

    /** The tenant's language-model key in plaintext, for calling the provider; null when none is set. */
    async llmKey(tenantId: string): Promise<string | null> {
      const t = await repo.findTenant(tenantId)
      return t?.llm_key_enc ? cipher.decrypt(t.llm_key_enc) : null
    },

    // --- signing (KYC) secret ---
    async createKycSecret(tenantId: string) {
      await tenantOr404(tenantId)
      const secret = randomBytes(32).toString('hex')
      // Conditional write: of two concurrent creates only one can succeed.
      const created = await repo.setKycSecretIfNone(tenantId, { enc: cipher.encrypt(secret), hint: lastChars(secret), now: clock.now() })
      if (!created) throw conflict('A signing secret already exists; rotate it instead', 'secret_exists')
      return { secret_key: secret, message: 'Store this secret now: it will not be shown again.' }
    },

    async rotateKycSecret(tenantId: string) {
      const t = await tenantOr404(tenantId)
      if (!t.kyc_secret_enc) throw badRequest('No signing secret to rotate; create one first', 'no_secret')
      const now = clock.now()
      const secret = randomBytes(32).toString('hex')
      await repo.updateTenant(tenantId, {
        kyc_secret_enc: cipher.encrypt(secret),
        kyc_secret_hint: lastChars(secret),
        kyc_prev_secret_enc: t.kyc_secret_enc,
        kyc_prev_valid_until: addSeconds(now, KYC_PREVIOUS_VALID_SECONDS),
        updated_at: now,
      })
      return { secret_key: secret, message: 'New signing secret issued; the previous one stays valid for 1 hour.' }
    },

    /** Secrets that verify identity tokens right now: the current one, then the previous within its hour. */
    async signingSecrets(tenantId: string): Promise<string[]> {
      const t = await repo.findTenant(tenantId)
      if (!t?.kyc_secret_enc) return []
      const out = [cipher.decrypt(t.kyc_secret_enc)]
      if (t.kyc_prev_secret_enc && t.kyc_prev_valid_until && t.kyc_prev_valid_until > clock.now()) {
        out.push(cipher.decrypt(t.kyc_prev_secret_enc))
      }
      return out
    },

    async kycStatus(tenantId: string) {
      const t = await tenantOr404(tenantId)
      const now = clock.now()
      const stats = deps.sessionStats ? await deps.sessionStats(tenantId, addSeconds(now, -7 * 86400)) : { identified: 0, total: 0, last: null }
      const prevValid = t.kyc_prev_valid_until && t.kyc_prev_valid_until > now ? t.kyc_prev_valid_until : null
      return {
        has_secret: t.kyc_secret_enc !== null,
        masked_secret_hint: t.kyc_secret_hint ? `${'•'.repeat(8)}${t.kyc_secret_hint}` : null,
        previous_valid_until: prevValid?.toISOString() ?? null,
        identified_sessions_7d: stats.identified,
        identified_session_rate_7d: stats.total > 0 ? Math.round((stats.identified / stats.total) * 1000) / 1000 : 0,
        last_identified_session: stats.last?.toISOString() ?? null,
      }
    },

    // --- widget API keys ---
    async listApiKeys(tenantId: string) {
      const now = clock.now()
      return (await repo.listApiKeys(tenantId)).map((k) => presentApiKey(k, now))
    },

    async rotateApiKey(tenantId: string, input: Static<typeof RotateTenantApiKeyRequest>) {
      const now = clock.now()
      const plaintext = newApiKey()
      const row = await db.transaction().execute(async (trx) => {
        const created = await repo.insertApiKey(tenantId, { key_hash: sha256Hex(plaintext), key_hint: lastChars(plaintext), now }, trx)
        await repo.retireActiveKeys(
          tenantId,
          {
            exceptId: created.id,
            immediately: input.revoke_old_immediately,
            reason: input.reason ?? 'scheduled',
            now,
            graceUntil: addSeconds(now, API_KEY_GRACE_SECONDS),
          },
          trx,
        )
        return created
      })
      return {
        api_key: plaintext,
        key: presentApiKey(row, now),
        message: input.revoke_old_immediately
          ? 'New key issued; previous keys were revoked immediately. Store the key now: it will not be shown again.'
          : 'New key issued; previous keys keep working for 24 hours. Store the key now: it will not be shown again.',
      }
    },

    async revokeApiKey(tenantId: string, keyId: string) {
      const now = clock.now()
      const row = await db.transaction().execute(async (trx) => {
        await repo.lockTenant(tenantId, trx)
        const key = await repo.findApiKey(tenantId, keyId, trx)
        if (!key) throw notFound('API key not found')
        const status = presentApiKey(key, now).status
        if (status === 'revoked') return key
        // A key in its grace window is about to stop working, so only another active key counts as usable.
        if (status === 'active' && (await repo.countActiveKeysExcept(tenantId, keyId, trx)) === 0) {
          throw conflict('Cannot revoke the last usable API key; rotate it instead', 'last_usable_key')
        }
        return repo.revokeApiKey(tenantId, keyId, 'manual', now, trx)
      })
      return presentApiKey(row, now)
    },

    // --- privacy and support settings ---
    async privacy(tenantId: string) {
      const t = await tenantOr404(tenantId)
      return { optional_entity_types: t.pii_optional_types, mandatory_entity_types: [...MANDATORY_PII_TYPES] }
    },

    async updatePrivacy(tenantId: string, types: string[]) {
      const ordered = OPTIONAL_PII_TYPES.filter((t) => types.includes(t))
      await tenantOr404(tenantId)
      await repo.updateTenant(tenantId, { pii_optional_types: JSON.stringify(ordered), updated_at: clock.now() })
      return { optional_entity_types: ordered, mandatory_entity_types: [...MANDATORY_PII_TYPES] }
    },

    async supportSettings(tenantId: string) {
      return presentSupport(await tenantOr404(tenantId))
    },

    async updateSupportSettings(tenantId: string, input: Static<typeof UpdateSupportSettingsRequest>) {
      await tenantOr404(tenantId)
      const patch: Updateable<TenantsTable> = { updated_at: clock.now() }
      if (input.l2_email !== undefined) patch.l2_email = input.l2_email?.trim().toLowerCase() || null
      if (input.escalation_language !== undefined) patch.escalation_language = input.escalation_language || null
      if (input.auto_assign !== undefined) patch.auto_assign = input.auto_assign
      if (input.agent_capacity !== undefined) patch.agent_capacity = input.agent_capacity
      return presentSupport((await repo.updateTenant(tenantId, patch))!)
    },

    /** Where ticket notifications go: support settings' L2 address, else the tenant's, else the owner's. */
    async notificationAddress(tenantId: string): Promise<string | null> {
      const t = await repo.findTenant(tenantId)
      if (!t) return null
      return t.l2_email ?? t.support_email ?? (await repo.findOwner(tenantId))?.email ?? null
    },
  }
}

const presentSupport = (t: { l2_email: string | null; escalation_language: string | null; auto_assign: boolean; agent_capacity: number }) => ({
  l2_email: t.l2_email,
  escalation_language: t.escalation_language,
  auto_assign: t.auto_assign,
  agent_capacity: t.agent_capacity,
})

export type TenantsService = ReturnType<typeof createTenantsService>
