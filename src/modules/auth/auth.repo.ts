import type { ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { AuthTokensTable } from '../../db/schema/foundation.js'
import { isUniqueViolation } from '../../db/errors.js'
import { conflict } from '../../lib/errors.js'

type Executor = Db

/**
 * Users and one-time tokens. Users are not tenant-scoped (a user exists before its tenant); everything a
 * user owns is reached through the tenant id on the user row.
 */
/** Change-feed topic of a user row (key: user id); the writes below that the route guards care about announce it. */
export const USERS_TOPIC = 'users'

export function createAuthRepo(db: Db, changes: ChangeFeed) {
  return {
    findUserByEmail(email: string, trx: Executor = db) {
      return trx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst()
    },
    findUserById(id: string, trx: Executor = db) {
      return trx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
    },
    async insertUser(values: { email: string; password_hash: string; now: Date }, trx: Executor = db) {
      try {
        return await trx
          .insertInto('users')
          .values({ email: values.email, password_hash: values.password_hash, tenant_id: null, created_at: values.now, updated_at: values.now })
          .returningAll()
          .executeTakeFirstOrThrow()
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('Email already registered', 'email_exists')
        throw err
      }
    },
    /** Not announced: no guard reads it (the members list does, from the database). */
    touchUser(userId: string, now: Date, trx: Executor = db) {
      return trx.updateTable('users').set({ last_active_at: now }).where('id', '=', userId).execute()
    },
    async updateProfile(userId: string, patch: { notify_on_assignment?: boolean; display_name?: string | null }, now: Date, trx: Executor = db) {
      const row = await trx
        .updateTable('users')
        .set({ ...patch, updated_at: now })
        .where('id', '=', userId)
        .returningAll()
        .executeTakeFirstOrThrow()
      await changes.announce(trx, USERS_TOPIC, userId)
      return row
    },
    async markVerified(userId: string, tenantId: string, now: Date, trx: Executor = db) {
      const row = await trx
        .updateTable('users')
        .set({ is_verified: true, tenant_id: tenantId, updated_at: now })
        .where('id', '=', userId)
        .returningAll()
        .executeTakeFirstOrThrow()
      await changes.announce(trx, USERS_TOPIC, userId)
      return row
    },
    async setPassword(userId: string, passwordHash: string, now: Date, trx: Executor = db) {
      const result = await trx
        .updateTable('users')
        .set((eb) => ({ password_hash: passwordHash, token_version: eb('token_version', '+', 1), updated_at: now }))
        .where('id', '=', userId)
        .execute()
      await changes.announce(trx, USERS_TOPIC, userId)
      return result
    },
    insertToken(values: { user_id: string; purpose: AuthTokensTable['purpose']; token_hash: string; expires_at: Date; now: Date }, trx: Executor = db) {
      return trx
        .insertInto('auth_tokens')
        .values({ user_id: values.user_id, purpose: values.purpose, token_hash: values.token_hash, expires_at: values.expires_at, created_at: values.now })
        .execute()
    },
    /** Marks the token used and returns its user id, in one statement so a token can be spent only once. */
    async consumeToken(tokenHash: string, purpose: AuthTokensTable['purpose'], now: Date, trx: Executor = db) {
      const row = await trx
        .updateTable('auth_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('user_id')
        .executeTakeFirst()
      return row?.user_id ?? null
    },
    expireTokens(userId: string, purpose: AuthTokensTable['purpose'], now: Date, trx: Executor = db) {
      return trx
        .updateTable('auth_tokens')
        .set({ used_at: now })
        .where('user_id', '=', userId)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .execute()
    },
  }
}

export type AuthRepo = ReturnType<typeof createAuthRepo>
