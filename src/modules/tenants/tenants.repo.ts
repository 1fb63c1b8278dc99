import { sql } from 'kysely'
import type { ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { TenantsTable } from '../../db/schema/foundation.js'
import type { Updateable } from 'kysely'

type Executor = Db

/**
 * Change-feed topic (key: tenant id) announced by every write to a tenant's row or to any of its API keys,
 * so caches of API-key lookups and tenant settings drop their copy on every instance.
 */
export const TENANTS_TOPIC = 'tenants'

/** A tenant's keys that authenticate now or may still (active, or revoking inside the grace window). */
export interface Keyring {
  tenantActive: boolean
  keys: { id: string; key_hash: string; status: string; expires_at: Date | null; last_used_at: Date | null }[]
}

/** Tenants, their widget API keys and settings. Every method takes the tenant id first. */
export function createTenantsRepo(db: Db, changes: Pick<ChangeFeed, 'announce'>) {
  return {
    /** Serialises changes of one tenant's keys, so the last-usable-key rule cannot be raced. */
    async lockTenant(tenantId: string, trx: Executor): Promise<void> {
      await trx.selectFrom('tenants').select('id').where('id', '=', tenantId).forUpdate().execute()
    },

    insertTenant(values: { name: string; owner_user_id: string; now: Date }, trx: Executor = db) {
      return trx
        .insertInto('tenants')
        .values({
          name: values.name,
          owner_user_id: values.owner_user_id,
          llm_key_enc: null,
          llm_key_hint: null,
          support_email: null,
          kyc_secret_enc: null,
          kyc_secret_hint: null,
          kyc_prev_secret_enc: null,
          kyc_prev_valid_until: null,
          l2_email: null,
          escalation_language: null,
          created_at: values.now,
          updated_at: values.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
    },
    findTenant(tenantId: string, trx: Executor = db) {
      return trx.selectFrom('tenants').selectAll().where('id', '=', tenantId).executeTakeFirst()
    },
    async updateTenant(tenantId: string, patch: Updateable<TenantsTable>, trx: Executor = db) {
      const row = await trx.updateTable('tenants').set(patch).where('id', '=', tenantId).returningAll().executeTakeFirst()
      await changes.announce(trx, TENANTS_TOPIC, tenantId)
      return row
    },
    /** The tenant owner's e-mail and verification, for TenantMe and notification fallbacks. */
    findOwner(tenantId: string, trx: Executor = db) {
      return trx
        .selectFrom('tenants')
        .innerJoin('users', 'users.id', 'tenants.owner_user_id')
        .select(['users.email', 'users.is_verified'])
        .where('tenants.id', '=', tenantId)
        .executeTakeFirst()
    },

    listApiKeys(tenantId: string, trx: Executor = db) {
      return trx.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
    },
    findApiKey(tenantId: string, keyId: string, trx: Executor = db) {
      return trx.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('id', '=', keyId).executeTakeFirst()
    },
    async insertApiKey(tenantId: string, values: { key_hash: string; key_hint: string; now: Date }, trx: Executor = db) {
      const row = await trx
        .insertInto('api_keys')
        .values({
          tenant_id: tenantId,
          key_hash: values.key_hash,
          key_hint: values.key_hint,
          status: 'active',
          revoked_reason: null,
          created_at: values.now,
          expires_at: null,
          revoked_at: null,
          last_used_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
      await changes.announce(trx, TENANTS_TOPIC, tenantId)
      return row
    },
    /** Puts every active key (but `exceptId`) into its grace window, or revokes it at once. */
    async retireActiveKeys(
      tenantId: string,
      opts: { exceptId: string; immediately: boolean; reason: string; now: Date; graceUntil: Date },
      trx: Executor = db,
    ) {
      const result = await trx
        .updateTable('api_keys')
        .set(
          opts.immediately
            ? { status: 'revoked', revoked_at: opts.now, revoked_reason: opts.reason, expires_at: opts.now }
            : { status: 'revoking', expires_at: opts.graceUntil, revoked_reason: opts.reason },
        )
        .where('tenant_id', '=', tenantId)
        .where('id', '!=', opts.exceptId)
        .where('status', '=', 'active')
        .execute()
      await changes.announce(trx, TENANTS_TOPIC, tenantId)
      return result
    },
    async revokeApiKey(tenantId: string, keyId: string, reason: string, now: Date, trx: Executor = db) {
      const row = await trx
        .updateTable('api_keys')
        .set({ status: 'revoked', revoked_at: now, revoked_reason: reason, expires_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', keyId)
        .returningAll()
        .executeTakeFirstOrThrow()
      await changes.announce(trx, TENANTS_TOPIC, tenantId)
      return row
    },
    countActiveKeysExcept(tenantId: string, keyId: string, trx: Executor = db) {
      return trx
        .selectFrom('api_keys')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .where('status', '=', 'active')
        .where('id', '!=', keyId)
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },
    /** Stores the first signing secret; returns false when the tenant already has one. */
    async setKycSecretIfNone(tenantId: string, values: { enc: string; hint: string; now: Date }, trx: Executor = db) {
      const r = await trx
        .updateTable('tenants')
        .set({ kyc_secret_enc: values.enc, kyc_secret_hint: values.hint, updated_at: values.now })
        .where('id', '=', tenantId)
        .where('kyc_secret_enc', 'is', null)
        .executeTakeFirst()
      if (Number(r.numUpdatedRows) === 0) return false
      await changes.announce(trx, TENANTS_TOPIC, tenantId)
      return true
    },
    /** Keys that authenticate right now: active, or revoking and still inside the grace window. */
    countUsableKeys(tenantId: string, now: Date, trx: Executor = db) {
      return trx
        .selectFrom('api_keys')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .where((eb) => eb.or([eb('status', '=', 'active'), eb.and([eb('status', '=', 'revoking'), eb('expires_at', '>', now)])]))
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },
    /** Not tenant-scoped on purpose: this is how a request finds its tenant from an X-API-Key. */
    findUsableKeyByHash(keyHash: string, now: Date) {
      return db
        .selectFrom('api_keys')
        .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
        .select(['api_keys.id', 'api_keys.tenant_id', 'api_keys.last_used_at', 'tenants.is_active as tenant_active'])
        .where('api_keys.key_hash', '=', keyHash)
        .where((eb) => eb.or([eb('api_keys.status', '=', 'active'), eb.and([eb('api_keys.status', '=', 'revoking'), eb('api_keys.expires_at', '>', now)])]))
        .executeTakeFirst()
    },
    /** The tenant's keys that may authenticate at `now` or later, for the cached X-API-Key guard; undefined without a tenant. */
    async keyring(tenantId: string, now: Date): Promise<Keyring | undefined> {
      const rows = await db
        .selectFrom('tenants as t')
        .leftJoin('api_keys as k', (join) =>
          join
            .onRef('k.tenant_id', '=', 't.id')
            .on((eb) => eb.or([eb('k.status', '=', 'active'), eb.and([eb('k.status', '=', 'revoking'), eb('k.expires_at', '>', now)])])),
        )
        .select(['t.is_active', 'k.id', 'k.key_hash', 'k.status', 'k.expires_at', 'k.last_used_at'])
        .where('t.id', '=', tenantId)
        .execute()
      if (rows.length === 0) return undefined
      const keys = rows.flatMap((r) =>
        r.id && r.key_hash && r.status ? [{ id: r.id, key_hash: r.key_hash, status: r.status, expires_at: r.expires_at, last_used_at: r.last_used_at }] : [],
      )
      return { tenantActive: rows[0]!.is_active, keys }
    },
    /** Not announced: last_used_at is display data, and caches track their own touches. */
    touchApiKey(tenantId: string, keyId: string, now: Date) {
      return db.updateTable('api_keys').set({ last_used_at: now }).where('tenant_id', '=', tenantId).where('id', '=', keyId).execute()
    },
  }
}

export type TenantsRepo = ReturnType<typeof createTenantsRepo>
